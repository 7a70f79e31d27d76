"""`rlvr export` and `rlvr train --backend verl|openrlhf`: CLI wiring, dry runs, interpreter checks, streaming.

Core venv: the exporters and command builders need neither veRL nor OpenRLHF; launching is checked
against this interpreter, which has neither (so it must refuse with the fix), and `run_streaming`
runs a real child process.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.adapters.export import read_manifest
from rlvr.core.errors import BackendError, ConfigError
from rlvr.runners.backends import (
    TIMEOUT_EXIT_CODE,
    Probe,
    backend_python,
    probe,
    require_launchable,
    run_streaming,
)
from rlvr.runners.cli import app

runner = CliRunner()
SMALL = ["-a", "size=12", "-a", "seed=1"]


def test_export_verl_single_turn_lists_the_files(tmp_path: Path) -> None:
    out = tmp_path / "verl"
    result = runner.invoke(app, ["export", "--backend", "verl", "--env", "math/reasoning-gym-v1", *SMALL, "-o",
                                 str(out), "--val-size", "2"])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert (manifest.backend, manifest.env_id, manifest.env_args) == ("verl", "math/reasoning-gym-v1",
                                                                      {"size": 12, "seed": 1})
    assert (manifest.n_train, manifest.n_val, manifest.multi_turn) == (10, 2, False)
    for role in ("train", "val", "reward", "manifest"):
        assert role in result.output
    for name in manifest.files.values():
        assert (out / name).is_file() and name in result.output
    import pyarrow.parquet as pq

    assert pq.read_table(out / manifest.files["train"]).num_rows == 10


def test_export_openrlhf_multi_turn_writes_the_agent(tmp_path: Path) -> None:
    out = tmp_path / "o"
    result = runner.invoke(app, ["export", "--backend", "openrlhf", "--env", "math/reasoning-gym-tool-v1", *SMALL,
                                 "-o", str(out), "--limit", "5"])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest.multi_turn and manifest.n_train == 5 and "agent" in manifest.files
    assert len((out / manifest.files["train"]).read_text().splitlines()) == 5


def test_export_refuses_bad_input_with_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "x"
    args = ["export", "--env", "math/reasoning-gym-v1", *SMALL, "-o", str(out)]
    first = runner.invoke(app, ["export", "--backend", "verl", *args[1:]])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["export", "--backend", "verl", *args[1:]])
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert runner.invoke(app, ["export", "--backend", "verl", *args[1:], "--overwrite"]).exit_code == 0
    trl = runner.invoke(app, ["export", "--backend", "trl", *args[1:]])
    assert trl.exit_code == 2 and "unknown export backend 'trl'" in trl.output and "verl, openrlhf" in trl.output
    val = runner.invoke(app, ["export", "--backend", "openrlhf", *args[1:-1], str(tmp_path / "y"), "--val-size", "12"])
    assert val.exit_code == 2 and "val_size (12) must be smaller than the tasks exported (12)" in val.output
    env = runner.invoke(app, ["export", "--backend", "verl", "--env", "math/nope-v1", "-o", str(tmp_path / "z")])
    assert env.exit_code == 2 and "unknown environment" in env.output


def test_train_verl_dry_run_writes_export_and_command(tmp_path: Path) -> None:
    out = tmp_path / "run"
    python = sys.executable
    result = runner.invoke(app, ["train", "--backend", "verl", "--env", "math/reasoning-gym-tool-v1", *SMALL,
                                 "--steps", "3", "-o", str(out), "--dry-run", "--backend-python", python,
                                 "--trainer-arg", "data.max_response_length=256"])
    assert result.exit_code == 0, result.output
    command = shlex.split((out / "command.sh").read_text().splitlines()[1])
    assert command[:3] == [python, "-m", "verl.trainer.main_ppo"]
    assert "trainer.total_training_steps=3" in command and command[-1] == "data.max_response_length=256"
    assert any(c.startswith("actor_rollout_ref.rollout.agent.agent_loop_config_path=") for c in command)
    run = json.loads((out / "run.json").read_text())
    assert run["dry_run"] is True and run["exit_code"] is None and run["command"] == command
    assert read_manifest(out / "export").backend == "verl" and not (out / "train.log").exists()
    assert "verl.trainer.main_ppo" in result.output


def test_train_openrlhf_dry_run_uses_the_env_variable_interpreter(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLVR_OPENRLHF_PYTHON", sys.executable)
    out = tmp_path / "run"
    result = runner.invoke(app, ["train", "--backend", "openrlhf", "--env", "math/reasoning-gym-v1", *SMALL,
                                 "-o", str(out), "--dry-run", "--model", str(tmp_path),
                                 "--trainer-arg", "actor.adam.lr=2e-6", "--trainer-arg", "vllm.enable_sleep=false"])
    assert result.exit_code == 0, result.output
    command = json.loads((out / "run.json").read_text())["command"]
    assert command[:3] == [sys.executable, "-m", "openrlhf.cli.train_ppo_ray"]
    flags = dict(zip(command[3::2], command[4::2], strict=False))
    assert flags["--actor.model_name_or_path"] == str(tmp_path) and flags["--actor.adam.lr"] == "2e-06"
    assert "--reward.remote_url" in command and "--vllm.enable_sleep" not in command


def test_train_external_refuses_to_launch_without_the_backend(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["train", "--backend", "verl", "--env", "math/reasoning-gym-v1", *SMALL, "-o",
                                 str(out), "--backend-python", sys.executable])
    if "cuda" in result.output.lower() and "does not import" not in result.output:
        pytest.skip("this interpreter has veRL installed")
    assert result.exit_code == 2
    assert "verl does not import" in result.output and "--dry-run" in result.output
    assert not out.exists()  # refused before writing anything
    missing = runner.invoke(app, ["train", "--backend", "openrlhf", "-o", str(out), "--backend-python",
                                  str(tmp_path / "nope" / "python")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    trl = runner.invoke(app, ["train", "--backend", "trl", "--dry-run", "-o", str(out)])
    assert trl.exit_code == 2 and "--dry-run and --backend-python are for --backend verl|openrlhf" in trl.output


def test_probe_and_gpu_check_name_the_fix() -> None:
    found = probe("openrlhf", sys.executable)
    assert found.info["rlvr"] and found.python == sys.executable
    if "backend_error" in found.info:
        assert "openrlhf does not import" in (found.problem() or "")
        with pytest.raises(BackendError, match="--dry-run"):
            require_launchable(found)
    no_gpu = Probe("verl", "/venv/bin/python", {"rlvr": "0.1", "backend": "0.9.1", "cuda_devices": 0})
    assert no_gpu.problem() is None
    with pytest.raises(BackendError, match=r"sees 0 \(needs 1\).*--dry-run"):
        require_launchable(no_gpu)
    one = Probe("verl", "/venv/bin/python", {"rlvr": "0.1", "backend": "0.9.1", "cuda_devices": 1})
    require_launchable(one)
    with pytest.raises(BackendError, match=r"sees 1 \(needs 2\)"):
        require_launchable(one, n_gpus=2)
    broken = probe("verl", "/bin/false")
    assert "error" in broken.info and "could not be probed" in (broken.problem() or "")


def test_backend_python_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLVR_VERL_PYTHON", raising=False)
    assert backend_python("verl") == sys.executable
    monkeypatch.setenv("RLVR_VERL_PYTHON", sys.executable)
    assert backend_python("verl") == sys.executable
    monkeypatch.setenv("RLVR_VERL_PYTHON", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"\$RLVR_VERL_PYTHON .* does not exist"):
        backend_python("verl")
    assert backend_python("verl", sys.executable) == sys.executable  # the flag wins over the variable
    with pytest.raises(ConfigError, match="unknown backend 'jax'"):
        backend_python("jax")


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


def test_a_relative_backend_python_is_made_absolute_without_leaving_its_venv(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The trainer starts in its run folder, so `--backend-python .venvs/verl/bin/python` (the README's form) must be
    absolute; a venv's python is a symlink, which must not be resolved to the base interpreter."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    chosen = backend_python("verl", "venv/bin/python")
    assert chosen == str(venv_bin / "python")
    monkeypatch.chdir("/")
    assert Path(chosen).is_file()
