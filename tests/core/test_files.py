"""Atomic writes: the target is replaced whole or left as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rlvr.core.files import atomic_open, atomic_path, atomic_write


def test_atomic_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    assert atomic_write(target, '{"new": true}\n') == target
    assert target.read_text() == '{"new": true}\n'
    atomic_write(target, b"\x89PNG")
    assert target.read_bytes() == b"\x89PNG"
    assert sorted(tmp_path.iterdir()) == [target]


def test_an_error_mid_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "rows.jsonl"
    target.write_text("old rows\n")

    def rows() -> list[str]:
        raise ValueError("a row that cannot be serialised")

    with pytest.raises(ValueError, match="cannot be serialised"), atomic_open(target) as f:
        f.write("half of the new rows\n")
        f.writelines(rows())
    assert target.read_text() == "old rows\n"
    assert sorted(tmp_path.iterdir()) == [target]


def test_a_process_killed_mid_write_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "merged.jsonl"
    target.write_text("the previous complete output\n")
    child = textwrap.dedent(f"""
        import os, signal, sys
        from pathlib import Path
        from rlvr.core.files import atomic_open
        with atomic_open(Path({str(target)!r})) as f:
            f.write("row\\n" * 10000)
            f.flush()
            print("written", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # kill -9 before the write finishes
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")})
    assert done.returncode == -signal.SIGKILL and "written" in done.stdout, done.stderr
    assert target.read_text() == "the previous complete output\n"  # never a part of the new one
    leftovers = [p.name for p in tmp_path.iterdir() if p != target]
    assert all(name.startswith("merged.jsonl.") and name.endswith(".tmp") for name in leftovers)


def test_atomic_path_serves_writers_that_take_a_path(tmp_path: Path) -> None:
    import sqlite3

    target = tmp_path / "db.sqlite"
    with atomic_path(target) as tmp:
        conn = sqlite3.connect(tmp)
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
        assert not target.exists()
    assert sqlite3.connect(target).execute("SELECT count(*) FROM t").fetchone() == (0,)
