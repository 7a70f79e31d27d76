"""`TrainConfig` (`rlvr.runners.train.config`): one frozen value per `rlvr train` run, validated, and written back as
the `rlvr train` arguments that build it again (how `rlvr compare` runs it in another interpreter)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlvr.core.errors import ConfigError
from rlvr.runners.cli import app
from rlvr.runners.train.config import TrainConfig

runner = CliRunner()


def _cli_config(args: list[str], monkeypatch: pytest.MonkeyPatch) -> TrainConfig:
    """The `TrainConfig` that `rlvr ARGS` hands to the trainer (both trainers replaced by a recorder)."""
    seen: list[TrainConfig] = []
    trl = types.ModuleType("rlvr.runners.train.trl")
    trl.train_trl = seen.append  # type: ignore[attr-defined]
    external = types.ModuleType("rlvr.runners.train.external")

    def run_backend(config: TrainConfig) -> Any:
        seen.append(config)
        return types.SimpleNamespace(dry_run=True, export_dir="e", output=Path("o"), command=["x"], notes=[])

    external.run_backend = run_backend  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rlvr.runners.train.trl", trl)
    monkeypatch.setitem(sys.modules, "rlvr.runners.train.external", external)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (config,) = seen
    return config


@pytest.mark.parametrize("config", [
    TrainConfig(env="math/gsm8k-v1", output=Path("runs/a")),
    TrainConfig(backend="trl", env="math/reasoning-gym-v1", env_args={"size": 8, "config": {"min_terms": 2}},
                model="m", steps=3, output=Path("runs/b"), trainer_args={"num_generations": 4, "beta": 0.1},
                multi_turn="rollout_func", tasks=Path("rl.jsonl")),
    TrainConfig(backend="verl", env="math/reasoning-gym-tool-v1", model="smollm2", steps=2, output=Path("runs/c"),
                trainer_args={"actor_rollout_ref.actor.optim.lr": "1e-5"}, backend_python=Path("/venv/bin/python"),
                n_gpus=2, device="cpu", timeout_s=30.0, dry_run=True),
], ids=["defaults", "trl", "verl"])
def test_command_args_build_the_same_config_again(config: TrainConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    args = config.command_args()
    assert args[0] == "train"
    assert _cli_config(args, monkeypatch) == config


def test_config_is_frozen_and_refuses_unknown_fields() -> None:
    config = TrainConfig(env="math/gsm8k-v1", output=Path("o"))
    with pytest.raises(ValueError, match="frozen"):
        config.steps = 3  # type: ignore[misc]
    with pytest.raises(ConfigError, match="stpes: Extra inputs are not permitted"):
        TrainConfig.build(env="math/gsm8k-v1", output=Path("o"), stpes=3)


def test_config_names_each_bad_field_and_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"^steps: .*greater than or equal to 1$"):
        TrainConfig.build(env="math/gsm8k-v1", output=Path("o"), steps=0)
    with pytest.raises(ConfigError, match="device: must be one of auto, cuda, cpu, got 'tpu'"):
        TrainConfig.build(backend="verl", env="math/gsm8k-v1", output=Path("o"), device="tpu")
    with pytest.raises(ConfigError, match=r"^--dry-run and --backend-python are for --backend verl\|openrlhf; "
                                          r"trl trains in this process$"):
        TrainConfig.build(env="math/gsm8k-v1", output=Path("o"), dry_run=True)
    with pytest.raises(ConfigError, match=r"^--n-gpus is for --backend verl\|openrlhf; trl uses the devices "):
        TrainConfig.build(env="math/gsm8k-v1", output=Path("o"), n_gpus=2)
    with pytest.raises(ConfigError, match=r"^env: Field required; output: Field required$"):
        TrainConfig.build()
