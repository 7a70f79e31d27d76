"""`rlvr train --backend verl|openrlhf` (`rlvr.runners.train.external`): dry runs, and refusals before launching.

Core venv: the exporters and command builders need neither veRL nor OpenRLHF; launching is checked
against this interpreter, which has neither (so it must refuse with the fix).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.adapters.export import read_manifest
from rlvr.runners.cli import app

runner = CliRunner()
SMALL = ["-a", "size=12", "-a", "seed=1"]


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
