"""Grader for watchdog-restart: call the watchdog against processes the test controls."""

import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

SCRIPT = "/app/bin/watchdog.sh"
LINE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2} restarted pid=(\d+)$")


def _watchdog(pidfile, logfile, *command):
    start = time.monotonic()
    proc = subprocess.run([SCRIPT, str(pidfile), str(logfile), *command], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - start < 5, "the watchdog must not wait for the command"


def _alive(pid):
    """Running and not a zombie."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def _cmdline(pid, want):
    """The process's argv, once it has exec'd `want` (the fork may not have exec'd yet)."""
    argv = []
    for _ in range(40):
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")[:-1]
        if argv == want:
            break
        time.sleep(0.05)
    return argv


def _dead_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_live_process_left_alone():
    assert os.access(SCRIPT, os.X_OK), "watchdog.sh must be executable"
    with tempfile.TemporaryDirectory() as d:
        sleeper = subprocess.Popen(["sleep", "60"])
        try:
            pidfile, logfile = Path(d, "w.pid"), Path(d, "w.log")
            pidfile.write_text(f"{sleeper.pid}\n")
            _watchdog(pidfile, logfile, "sleep", "61")
            assert pidfile.read_text() == f"{sleeper.pid}\n"
            assert not logfile.exists() or logfile.read_text() == ""
        finally:
            sleeper.kill()
            sleeper.wait()


def _check_restart(pidfile, logfile, previous_lines=0):
    _watchdog(pidfile, logfile, "sleep", "47")
    content = pidfile.read_text()
    assert re.fullmatch(r"\d+\n", content), f"pidfile content {content!r}"
    pid = int(content)
    try:
        assert _alive(pid), "the restarted command is not running"
        argv = _cmdline(pid, [b"sleep", b"47"])
        assert argv == [b"sleep", b"47"], f"pid {pid} is not the command itself: {argv}"
        lines = logfile.read_text().splitlines()
        assert len(lines) == previous_lines + 1
        m = LINE.match(lines[-1])
        assert m and int(m.group(1)) == pid, f"bad log line {lines[-1]!r}"
    finally:
        os.kill(pid, signal.SIGKILL)
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.05)


def test_dead_process_restarted():
    with tempfile.TemporaryDirectory() as d:
        pidfile, logfile = Path(d, "w.pid"), Path(d, "w.log")
        logfile.write_text("2024-01-01T00:00:00 restarted pid=1\n")
        pidfile.write_text(f"{_dead_pid()}\n")
        _check_restart(pidfile, logfile, previous_lines=1)


def test_missing_or_garbage_pidfile():
    with tempfile.TemporaryDirectory() as d:
        pidfile, logfile = Path(d, "w.pid"), Path(d, "w.log")
        _check_restart(pidfile, logfile)
        pidfile.write_text("not-a-pid\n")
        _check_restart(pidfile, logfile, previous_lines=1)
        pidfile.write_text("")
        _check_restart(pidfile, logfile, previous_lines=2)
