"""TRL's GRPOTrainer trains on an environment served by `rlvr serve`, through `openenv/remote-v1`.

The server is the real `rlvr serve` command in a subprocess on loopback; the trainer process holds
only the remote env (OpenEnv's client), so every reward comes from the server's verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.trl

pytest.importorskip("trl")
pytest.importorskip("openenv.core")

from openenv_serving import rlvr_serve, stop_server  # noqa: E402

TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"


@pytest.fixture(scope="module")
def served_tool_env() -> Iterator[str]:
    """`rlvr serve math/reasoning-gym-tool-v1` (a calculator tool env) on a free loopback port."""
    proc, url = rlvr_serve("math/reasoning-gym-tool-v1", "-a", "size=8")
    yield url
    stop_server(proc)


@pytest.mark.slow
@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_grpo_trains_two_steps_on_a_served_env(tiny_dir: Path, tmp_path: Path, served_tool_env: str) -> None:
    from rlvr.runners.train import train_command

    result = train_command(backend="trl", env="openenv/remote-v1", env_args={"base_url": served_tool_env},
                           model=str(tiny_dir), steps=2, output=tmp_path / "run",
                           trainer_args={"max_completion_length": "12", "num_generations": "2",
                                         "per_device_train_batch_size": "2"})
    assert result.steps == 2
    logged = [h for h in result.log_history if "reward" in h]
    assert len(logged) == 2
    for step in logged:  # every episode was scored by a verdict the server sent (status fractions add to 1)
        fractions = [step[f"rlvr/rlvr_openenv_remote_v1/{s}"] for s in ("correct", "incorrect", "no_answer", "error",
                                                                       "timeout")]
        assert abs(sum(fractions) - 1.0) < 1e-6 and step["rlvr/rlvr_openenv_remote_v1/error"] == 0.0
