"""Grader for log-rotation-script: exercise rotate.sh on scratch logs."""

import gzip
import os
import subprocess
import tempfile
from pathlib import Path

SCRIPT = "/app/bin/rotate.sh"


def _rotate(*args):
    proc = subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=20)
    assert proc.returncode == 0, proc.stderr
    return proc


def _gz(path):
    with gzip.open(path, "rt") as fh:
        return fh.read()


def test_sample_log_rotated():
    assert os.access(SCRIPT, os.X_OK), "rotate.sh must be executable"
    log = Path("/app/var/log/worker.log")
    assert log.exists() and log.stat().st_size == 0, "worker.log should be empty after rotation"
    rotated = _gz("/app/var/log/worker.log.1.gz").splitlines()
    assert len(rotated) == 40
    assert rotated[0] == "2024-07-01T00:00:00Z worker: processed batch 0"
    assert rotated[-1] == "2024-07-01T00:39:00Z worker: processed batch 39"


def test_rotation_order_keep_and_inode():
    with tempfile.TemporaryDirectory() as d:
        log = Path(d, "app.log")
        Path(d, "other.log.1.gz").write_bytes(b"unrelated")
        log.write_text("gen0\n")
        inode = log.stat().st_ino
        for gen in range(1, 6):
            _rotate(log, 3)
            assert log.stat().st_ino == inode, "LOGFILE must be truncated in place, not recreated"
            assert log.read_text() == ""
            log.write_text(f"gen{gen}\n")
        names = sorted(os.listdir(d))
        assert names == ["app.log", "app.log.1.gz", "app.log.2.gz", "app.log.3.gz", "other.log.1.gz"]
        assert [_gz(Path(d, f"app.log.{i}.gz")) for i in (1, 2, 3)] == ["gen4\n", "gen3\n", "gen2\n"]
        assert Path(d, "other.log.1.gz").read_bytes() == b"unrelated"


def test_default_keep_and_noop_cases():
    with tempfile.TemporaryDirectory() as d:
        log = Path(d, "svc.log")
        _rotate(log)  # missing: nothing to do
        assert os.listdir(d) == []
        log.write_text("")
        _rotate(log)  # empty: nothing to do
        assert os.listdir(d) == ["svc.log"]
        for gen in range(8):
            log.write_text(f"line {gen}\n" * (gen + 1))
            _rotate(log)
        assert sorted(os.listdir(d)) == ["svc.log"] + [f"svc.log.{i}.gz" for i in range(1, 6)]
        assert _gz(Path(d, "svc.log.1.gz")) == "line 7\n" * 8
        assert _gz(Path(d, "svc.log.5.gz")) == "line 3\n" * 4
