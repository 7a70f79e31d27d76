"""Backend launching (`rlvr.runners.backends`): the trainer's process group, backend interpreters, probes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.core.errors import ConfigError
from rlvr.runners.backends import backend_python, probe
from rlvr.runners.cli import app

runner = CliRunner()


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
    from rlvr.runners.backends import run_streaming
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


def test_backend_python_names_a_folder_and_the_cli_refuses_bad_backend_options(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder, not a Python interpreter"):
        backend_python("verl", tmp_path)
    result = runner.invoke(app, ["train", "--backend", "jax", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2 and "--backend must be one of trl, verl, openrlhf; got 'jax'" in result.output
    result = runner.invoke(app, ["train", "--backend", "trl", "--n-gpus", "2", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2 and "--n-gpus is for --backend verl|openrlhf" in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.openrlhf
def test_probe_reports_the_installed_openrlhf_version() -> None:
    pytest.importorskip("openrlhf")
    from importlib import metadata

    found = probe("openrlhf", sys.executable)
    assert found.problem() is None
    assert found.info["backend"] == metadata.version("openrlhf")  # openrlhf has no __version__ attribute


def test_probe_of_a_python_without_rlvr_names_the_fix() -> None:
    found = probe("verl", "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)
    if "rlvr_error" not in found.info:
        pytest.skip("the system python has rlvr")
    assert "pip install rlvr there" in (found.problem() or "")


def test_env_problem_reports_an_env_that_does_not_build_in_the_backend_python() -> None:
    from rlvr.runners.backends import env_problem

    assert env_problem(sys.executable, "math/reasoning-gym-v1", {"size": 4}) is None
    problem = env_problem(sys.executable, "math/reasoning-gym-v1", {"size": "abc"})
    assert problem is not None and "size must be a positive int" in problem
    problem = env_problem(sys.executable, "math/no-such-env", None)
    assert problem is not None and "unknown environment 'math/no-such-env'" in problem
