"""`rlvr train --backend trl` (`rlvr.runners.train.trl`): validation before any output."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.core.errors import ConfigError
from rlvr.runners.train.config import TrainConfig


@pytest.mark.trl
def test_failed_validation_leaves_no_output_folder(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from rlvr.runners import models
    from rlvr.runners.train.trl import train_trl

    out = tmp_path / "run"
    for bad in ("/tmp/does/not/exist/model", "./tyop-model", "~/surely-not-a-model-folder-xyz"):
        with pytest.raises(ConfigError, match=r"model folder not found: .*an existing folder or a Hugging Face id"):
            models.resolve_model(bad)
    with pytest.raises(ConfigError, match="model folder not found"):
        train_trl(TrainConfig(env="math/reasoning-gym-v1", model=str(tmp_path / "nope"), steps=1, output=out))
    with pytest.raises(ConfigError, match="num_generations"):
        train_trl(TrainConfig(env="math/reasoning-gym-v1", model=str(tmp_path), steps=1, output=out,
                              trainer_args={"num_generations": "3"}))
    with pytest.raises(ConfigError):
        train_trl(TrainConfig(env="no/such-env-v1", model=str(tmp_path), steps=1, output=out))
    assert not out.exists()
