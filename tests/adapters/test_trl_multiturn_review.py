"""Review regressions for TRL's environment_factory: env classes, bound-method tools, one verifier pool, schemas."""

from __future__ import annotations

import gc

import pytest
from pydantic import BaseModel

pytestmark = pytest.mark.trl
pytest.importorskip("trl")
psutil = pytest.importorskip("psutil")  # an accelerate dependency, so present wherever TRL is

from rlvr.adapters.trl import to_dataset  # noqa: E402
from rlvr.adapters.trl.agent import EpisodeReward, environment_factory  # noqa: E402
from rlvr.core.errors import ConfigError  # noqa: E402
from rlvr.core.types import EnvSpec, Message, Task  # noqa: E402
from rlvr.environments.multi_turn import ToolEnv  # noqa: E402
from rlvr.verifiers.registry import get_verifier  # noqa: E402

TASKS = [Task(id=f"t{i}", prompt=(Message(role="user", content=f"Say {i}."),), reference=str(i)) for i in range(4)]


class WhoAmIEnv(ToolEnv):
    """A tool env whose tool is a bound method reading the episode's task (like SQLToolEnv.execute_sql)."""

    def __init__(self) -> None:
        super().__init__(TASKS, get_verifier("math"), EnvSpec(id="test/whoami-v1", max_turns=3), [self.whoami])

    def whoami(self) -> str:
        """Name the current task."""
        return "none" if self.task is None else self.task.id


class Point(BaseModel):
    x: int


def _children() -> int:
    return len(psutil.Process().children(recursive=True))


def test_env_class_bound_tools_and_one_verifier_pool_for_many_instances() -> None:
    cls = environment_factory(WhoAmIEnv)  # a class is a factory (before: treated as an instance, AttributeError)
    proto = cls._rlvr_prototype
    try:
        rows = [dict(r) for r in to_dataset(proto)]
        before = _children()
        instances = [cls() for _ in range(20)]  # TRL keeps one per concurrent rollout for the whole run
        for i, inst in enumerate(instances):
            inst.reset(**rows[i % len(rows)])
        assert [inst.whoami() for inst in instances[:4]] == ["t0", "t1", "t2", "t3"]  # each sees its own episode
        completions = [[{"role": "assistant", "content": rf"\boxed{{{i % 4}}}"}] for i in range(20)]
        rewards = EpisodeReward("whoami")(prompts=[None] * 20, completions=completions, environments=instances)
        assert rewards == [1.0] * 20
        assert all(inst.env.verifier is proto.verifier for inst in instances)
        assert _children() - before <= proto.verifier.config.workers  # before: one worker process per instance (20)
        del instances
        gc.collect()
    finally:
        proto.close()


def test_tool_types_trl_cannot_show_fail_at_factory_time() -> None:
    def place(p: Point) -> str:
        """Place a point.

        Args:
            p: the point.
        """
        return str(p.x)

    env = ToolEnv(TASKS, get_verifier("math", isolation="inline"), EnvSpec(id="test/point-v1", max_turns=3), [place])
    with pytest.raises(ConfigError, match=r"'place'.*get_json_schema.*rollout_func"):
        environment_factory(env)  # before: accepted here, then GRPOTrainer failed rendering the prompt
    with pytest.raises(ConfigError, match="not an rlvr Environment"):
        environment_factory(lambda: "not an env")
