"""TRL's GRPOTrainer trains on an environment served by `rlvr serve`, through `openenv/remote-v1`.

The server is the real `rlvr serve` command in a subprocess on loopback; the trainer process holds
only the remote env (OpenEnv's client), so every reward comes from the server's verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def _normalised(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool schema without what only one generator writes (pydantic's additionalProperties, titles)."""
    function = schema["function"]
    params = function["parameters"]
    return {"name": function["name"], "description": function["description"].strip(),
            "properties": params["properties"], "required": sorted(params.get("required", []))}


def test_environment_factory_offers_a_served_envs_tools_as_methods_that_step_the_server(served_tool_env: str) -> None:
    """TRL's environment_factory on openenv/remote-v1: one method per server tool (the schema TRL derives from
    it is the server's), and calling it is a tool-call step on the server, answered by the server's tool."""
    from transformers.utils import get_json_schema

    from rlvr.adapters.trl.agent import environment_factory, environment_tools
    from rlvr.adapters.trl.data import to_dataset

    cls = environment_factory("openenv/remote-v1", base_url=served_tool_env)
    proto = cls._rlvr_prototype
    try:
        [schema] = environment_tools(cls)
        assert schema == dict(proto.spec.tools[0]) and schema["function"]["name"] == "calculator"
        assert _normalised(get_json_schema(cls.calculator)) == _normalised(schema)
        row = next(iter(to_dataset(proto, limit=1)))
        instance = cls()
        instance.reset(**row)
        assert instance.calculator(expression="6 * 7") == "42"  # the server's calculator answered
        assert "Error" in instance.calculator(expression="6 *")  # and its error, for the model to read
        verdict = instance._finish("The answer is \\boxed{0}.")
        assert verdict.status in ("correct", "incorrect") and verdict.reward is not None
    finally:
        proto.close()


@pytest.mark.slow
@pytest.mark.filterwarnings(TRL_GC_WARNING)
@pytest.mark.parametrize("path", ["environment_factory", "rollout_func"])
def test_grpo_trains_two_steps_on_a_served_env(tiny_dir: Path, tmp_path: Path, served_tool_env: str,
                                               path: str) -> None:
    from rlvr.runners.train.config import TrainConfig
    from rlvr.runners.train.trl import train_trl

    result = train_trl(TrainConfig(backend="trl", env="openenv/remote-v1", env_args={"base_url": served_tool_env},
                                   model=str(tiny_dir), steps=2, output=tmp_path / "run", multi_turn=path,
                                   trainer_args={"max_completion_length": "12", "num_generations": "2",
                                                 "per_device_train_batch_size": "2"}))
    assert result.steps == 2
    logged = [h for h in result.log_history if "reward" in h]
    assert len(logged) == 2
    for step in logged:  # every episode was scored by a verdict the server sent (status fractions add to 1)
        fractions = [step[f"rlvr/rlvr_openenv_remote_v1/{s}"] for s in ("correct", "incorrect", "no_answer", "error",
                                                                       "timeout")]
        assert abs(sum(fractions) - 1.0) < 1e-6 and step["rlvr/rlvr_openenv_remote_v1/error"] == 0.0
