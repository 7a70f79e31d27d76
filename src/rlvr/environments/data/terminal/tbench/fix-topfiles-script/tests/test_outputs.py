"""Grader for fix-shell-script: run the fixed script on fresh trees."""

import os
import subprocess
import tempfile
from pathlib import Path

SCRIPT = "/app/bin/topfiles.sh"
FILES = {
    "a.txt": 10,
    "big file.bin": 5000,
    "docs/report.pdf": 1200,
    "docs/archive.tar": 1200,
    "docs/Zeta.log": 1200,
    "my photos/beach day.jpg": 300,
    "my photos/sub dir/tiny": 1,
    ".hidden/blob": 900,
    "nine.dat": 9,
    "eighty.dat": 80,
}


def _tree(root):
    for rel, size in FILES.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
    os.symlink("a.txt", Path(root) / "link-to-a")  # not a regular file


def _expected(n):
    rows = sorted(FILES.items(), key=lambda kv: (-kv[1], kv[0].encode()))
    return "".join(f"{size}\t{rel}\n" for rel, size in rows[:n])


def _run(*args):
    return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, timeout=20)


def test_default_top_five():
    with tempfile.TemporaryDirectory() as root:
        _tree(root)
        proc = _run(root)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == _expected(5)


def test_explicit_n_and_more_than_available():
    with tempfile.TemporaryDirectory() as root:
        _tree(root)
        for n in (1, 3, 7):
            proc = _run(root, str(n))
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout == _expected(n), f"N={n}"
        proc = _run(root, "50")
        assert proc.returncode == 0
        assert proc.stdout == _expected(len(FILES))


def test_not_a_directory():
    with tempfile.TemporaryDirectory() as root:
        missing = os.path.join(root, "nope")
        a_file = os.path.join(root, "file.txt")
        Path(a_file).write_text("x")
        for target in (missing, a_file):
            proc = _run(target)
            assert proc.returncode == 2, f"{target}: exit {proc.returncode}"
            assert proc.stdout == ""
            assert proc.stderr.strip() == "usage: topfiles.sh DIR [N]"
    proc = _run()
    assert proc.returncode == 2
    assert proc.stderr.strip() == "usage: topfiles.sh DIR [N]"
