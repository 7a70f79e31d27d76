"""The trainer as a child process group (`rlvr.runners.train.process`): output streamed, stopped cleanly."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rlvr.core.errors import BackendError
from rlvr.runners.train.process import TIMEOUT_EXIT_CODE, run_streaming

# A "trainer" that starts a worker in its own process group (as Ray does under veRL/OpenRLHF), reports
# the worker's pid, then waits.
TRAINER = textwrap.dedent("""
    import subprocess, sys, time
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(f"WORKER {worker.pid}", flush=True)
    time.sleep(120)
""")


DRIVER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from rlvr.runners.train.process import run_streaming
    try:
        run_streaming([sys.executable, "-c", sys.argv[1]], log_path=Path(sys.argv[2]))
    except KeyboardInterrupt as exc:
        print(f"INTERRUPTED {exc}", flush=True)
        sys.exit(130)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see the worker")
def test_sigterm_to_rlvr_stops_the_trainer_process_group(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, TRAINER, str(log)], stdout=subprocess.PIPE, text=True)
    assert driver.stdout is not None
    worker = None
    deadline = time.monotonic() + 60
    while worker is None and time.monotonic() < deadline:
        line = driver.stdout.readline()
        if line.startswith("WORKER "):
            worker = int(line.split()[1])
    assert worker is not None and _alive(worker)
    driver.send_signal(signal.SIGTERM)
    out, _ = driver.communicate(timeout=60)
    assert driver.returncode == 130 and "INTERRUPTED signal SIGTERM" in out
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker), "the trainer's worker outlived rlvr"
    assert "WORKER" in log.read_text()  # the log so far is kept


def test_run_streaming_copies_output_live_and_returns_the_exit_code(tmp_path: Path) -> None:
    import io

    code = ("import sys\nfor i in range(3):\n    print('line', i, flush=True)\n"
            "print('oops', file=sys.stderr)\nsys.exit(3)")
    echo = io.StringIO()
    log = tmp_path / "logs" / "train.log"
    assert run_streaming([sys.executable, "-c", code], log_path=log, echo=echo) == 3
    assert echo.getvalue().splitlines() == ["line 0", "line 1", "line 2", "oops"]
    assert log.read_text() == echo.getvalue()
    with pytest.raises(BackendError, match="could not start"):
        run_streaming([str(tmp_path / "no-such-python")], log_path=log)


def test_run_streaming_stops_a_command_at_its_time_limit(tmp_path: Path) -> None:
    import io
    import time

    code = "import time\nprint('started', flush=True)\ntime.sleep(60)\nprint('never')"
    echo = io.StringIO()
    start = time.monotonic()
    assert run_streaming([sys.executable, "-c", code], log_path=tmp_path / "l.log", echo=echo,
                         timeout_s=1.5) == TIMEOUT_EXIT_CODE == 124
    assert time.monotonic() - start < 30  # SIGINT stopped it, well before its 60 s sleep
    lines = echo.getvalue().splitlines()  # the child's KeyboardInterrupt traceback (SIGINT) sits in between
    assert lines[0] == "started" and lines[-1] == "rlvr: stopped after the time limit of 1.5 s"
    assert "never" not in lines and "KeyboardInterrupt" in lines[-2]
