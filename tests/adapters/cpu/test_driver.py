"""`python -m rlvr.adapters.cpu.driver`: a failing trainer driver exits with its error instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HANGS_AFTER_ERROR = """
import threading, time
threading.Thread(target=time.sleep, args=(600,)).start()  # a non-daemon thread: Python would wait for it
raise RuntimeError("step failed: the rollout worker died")
"""


def _run(module_dir: Path, name: str, source: str,
         grace_s: str = "2") -> tuple[subprocess.CompletedProcess[str], float]:
    (module_dir / f"{name}.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": f"{module_dir}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "RLVR_WATCHDOG_GRACE_S": grace_s}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "rlvr.adapters.cpu.driver", name, "--flag", "x"], env=env,
                          capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - start


def test_driver_ends_a_driver_that_hangs_after_its_error(tmp_path: Path) -> None:
    done, wall = _run(tmp_path, "hanging_trainer", HANGS_AFTER_ERROR)
    assert done.returncode == 1
    assert "RuntimeError: step failed: the rollout worker died" in done.stderr
    assert "rlvr watchdog" in done.stderr
    assert wall < 60


def test_driver_runs_the_module_as_main_with_its_arguments(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, "ok_trainer", "import sys\nif __name__ == '__main__':\n    print('ARGS', sys.argv[1:])\n")
    assert done.returncode == 0, done.stderr
    assert "ARGS ['--flag', 'x']" in done.stdout


def test_driver_keeps_a_trainer_exit_code(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, "exit_trainer", "raise SystemExit(3)\n")
    assert done.returncode == 3
