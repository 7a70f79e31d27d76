"""TRL's GRPOConfig for `rlvr train --backend trl` (`rlvr.runners.train.grpo`): trainer arguments coerced, checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlvr.core.errors import ConfigError
from rlvr.runners.train.config import TrainConfig
from rlvr.runners.train.grpo import coerce_trainer_args


@pytest.mark.trl
def test_trainer_args_are_coerced_and_checked(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from rlvr.runners.train.grpo import build_grpo_config

    config = build_grpo_config(tmp_path, 3, {"num_generations": "2", "per_device_train_batch_size": "4",
                                             "learning_rate": "3e-6", "gradient_checkpointing": "true"})
    assert (config.num_generations, config.learning_rate, config.max_steps) == (2, 3e-6, 3)
    assert config.activation_checkpointing is True and config.beta == 0.0
    with pytest.raises(ConfigError, match="did you mean num_generations"):
        build_grpo_config(tmp_path, 3, {"num_generation": 4})
    with pytest.raises(ConfigError, match="not 'jax'; supported backends: trl, verl, openrlhf"):
        TrainConfig.build(backend="jax", env="math/reasoning-gym-v1", steps=1, output=tmp_path)
    with pytest.raises(ConfigError, match=r"'max_steps' is set by rlvr train; use --steps"):
        build_grpo_config(tmp_path, 1, {"max_steps": "3"})
    with pytest.raises(ConfigError, match=r"'output_dir' is set by rlvr train; use --output"):
        build_grpo_config(tmp_path, 1, {"output-dir": "/tmp/elsewhere"})
    with pytest.raises(ConfigError, match=r"learning_rate must be a float, got 'abc'"):
        build_grpo_config(tmp_path, 1, {"learning_rate": "abc"})
    with pytest.raises(ConfigError, match=r"per_device_train_batch_size \(8\) must be a multiple of num_generations "
                                          r"\(3\).*per_device_train_batch_size=9"):
        build_grpo_config(tmp_path, 1, {"num_generations": "3"})
    config = build_grpo_config(tmp_path, 1, {"num_generations": "3", "per_device_train_batch_size": "6"})
    assert config.num_generations == 3


@dataclasses.dataclass
class _Config:
    """A trainer config dataclass shaped like GRPOConfig's fields."""

    learning_rate: float = 1e-5
    num_generations: int = 4
    bf16: bool = False
    seed: int | None = 0
    report_to: list[str] | str = "none"
    max_steps: int = -1
    output_dir: str = "out"


def test_cli_strings_are_coerced_to_the_config_field_types() -> None:
    out = coerce_trainer_args(_Config, {"learning-rate": "3e-6", "num_generations": "2", "bf16": "on", "seed": "none",
                                        "report_to": '["wandb"]'})
    assert out == {"learning_rate": 3e-6, "num_generations": 2, "bf16": True, "seed": None, "report_to": ["wandb"]}
    assert coerce_trainer_args(_Config, {"report_to": "tensorboard", "num_generations": 8}) == {
        "report_to": "tensorboard", "num_generations": 8}  # a plain string field value; non-strings pass through
    with pytest.raises(ConfigError, match=r"num_generations must be an int, got 'two'"):
        coerce_trainer_args(_Config, {"num_generations": "two"})
    with pytest.raises(ConfigError, match=r"bf16 must be a bool \(true/false\), got 'maybe'"):
        coerce_trainer_args(_Config, {"bf16": "maybe"})
    with pytest.raises(ConfigError, match=r"unknown _Config field 'num_generation'; did you mean num_generations"):
        coerce_trainer_args(_Config, {"num_generation": "2"})
    for reserved in ("max_steps", "output-dir"):
        with pytest.raises(ConfigError, match="is set by rlvr train"):
            coerce_trainer_args(_Config, {reserved: "1"})
