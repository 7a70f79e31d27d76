"""Grader for make-c-project: build from clean, run, check incremental rebuilds and clean."""

import os
import statistics
import subprocess
import time
from pathlib import Path

APP = Path("/app")
BIN = APP / "build" / "stats"


def make(*args):
    return subprocess.run(["make", "-C", str(APP), *args], capture_output=True, text=True, timeout=60)


def _age(path, seconds_ago):
    stamp = time.time() - seconds_ago
    os.utime(path, (stamp, stamp))


def _settle():
    """Sources oldest, then objects, then the executable: up to date, without any clock skew."""
    now = time.time()
    for p in (APP / "src").iterdir():
        os.utime(p, (now - 300, now - 300))
    for p in (APP / "build").glob("*.o"):
        os.utime(p, (now - 200, now - 200))
    os.utime(BIN, (now - 150, now - 150))


def test_clean_build_without_warnings():
    make("clean")
    assert not (APP / "build").exists(), "make clean must remove /app/build"
    planned = make("-n").stdout
    assert "-Wall" in planned and "-Wextra" in planned and "-O2" in planned, "compile with -Wall -Wextra -O2"
    proc = make()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "warning" not in out.lower(), out
    assert BIN.is_file() and os.access(BIN, os.X_OK)
    assert sorted(p.name for p in (APP / "build").glob("*.o")) == ["main.o", "stats.o"]
    assert not list(APP.glob("*.o")) and not list((APP / "src").glob("*.o")), "objects belong in /app/build"


def test_program_output():
    if not BIN.exists():
        assert make().returncode == 0
    data = [4, 8, 15, 16, 23, 42, 7.5]
    proc = subprocess.run([str(BIN)], input=" ".join(map(str, data)) + "\n", capture_output=True, text=True)
    assert proc.returncode == 0
    want = (
        f"count={len(data)} mean={statistics.fmean(data):.2f} stddev={statistics.pstdev(data):.2f} "
        f"min={min(data):.2f} max={max(data):.2f}\n"
    )
    assert proc.stdout == want
    empty = subprocess.run([str(BIN)], input="", capture_output=True, text=True)
    assert empty.returncode == 1 and empty.stderr.strip() == "no data"


def test_incremental_rebuilds():
    assert make().returncode == 0
    assert make("-q").returncode == 0, "a second make right after a build must have nothing to do"
    _settle()
    assert make("-q").returncode == 0
    _age(APP / "src" / "stats.h", 100)
    dry = make("-n").stdout
    assert "main.c" in dry and "stats.c" in dry, "changing stats.h must rebuild both objects"
    assert make().returncode == 0
    assert make("-q").returncode == 0
    _settle()
    _age(APP / "src" / "main.c", 100)
    dry = make("-n").stdout
    assert "main.c" in dry, "changing main.c must rebuild build/main.o"
    assert "stats.c" not in dry, "changing main.c must not rebuild build/stats.o"
    assert make().returncode == 0
    assert make("-q").returncode == 0


def test_make_clean():
    assert make().returncode == 0
    proc = make("clean")
    assert proc.returncode == 0
    assert not (APP / "build").exists()
    assert (APP / "src" / "main.c").is_file() and (APP / "src" / "stats.c").is_file()
