"""The rollout driver with scripted policies: oracle / noop / script, multi-turn, errors, concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from guess_env import GuessEnv
from rlvr.core.errors import ConfigError
from rlvr.core.types import Message
from rlvr.environments.registry import make
from rlvr.rollout.batch import clone_factory, rollout, rollout_sync, token_batch
from rlvr.rollout.policies import NoopPolicy, OraclePolicy, scripted_policy
from rlvr.rollout.policies.scripted import NOOP_ANSWER
from rlvr.rollout.policy import Episode, Generation, Policy


@pytest.fixture(scope="module")
def arithmetic() -> Any:
    env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=6, scoring="inline")
    yield env
    env.close()


def test_policies_satisfy_the_protocol() -> None:
    assert isinstance(OraclePolicy(), Policy) and isinstance(NoopPolicy(), Policy)


def test_oracle_scores_correct_and_noop_does_not(arithmetic: Any) -> None:
    oracle = rollout_sync(clone_factory(arithmetic), OraclePolicy(), arithmetic.tasks, n=2, concurrency=4)
    assert len(oracle) == 12
    assert all(t.verdict is not None and t.verdict.status == "correct" and t.reward == 1.0 for t in oracle)
    assert [(t.task_id, t.info["sample"]) for t in oracle] == [(task.id, k) for task in arithmetic.tasks
                                                               for k in range(2)]
    assert oracle[0].messages[-1].content == arithmetic.reference_actions(arithmetic.tasks[0])[0].content
    noop = rollout_sync(clone_factory(arithmetic), NoopPolicy(), arithmetic.tasks)
    assert all(t.verdict is not None and t.verdict.status != "correct" and t.reward == 0.0 for t in noop)
    assert all(t.messages[-1].content == NOOP_ANSWER and t.tokens is None for t in noop)


def test_multi_turn_oracle_replays_each_turn(guess_env: GuessEnv) -> None:
    trajectories = rollout_sync(clone_factory(guess_env), OraclePolicy(), guess_env.tasks, concurrency=3)
    for t in trajectories:
        assert t.verdict is not None and t.verdict.status == "correct", t
        roles = [m.role for m in t.messages]
        assert roles == ["user", "assistant", "user", "assistant"]
        assert t.messages[2].content in ("No, higher.", "No, lower.")
        assert t.rewards == [-0.1, 1.0] and t.info["turns"] == 2
    noop = rollout_sync(clone_factory(guess_env), NoopPolicy(), guess_env.tasks[:2])
    assert all(t.verdict is not None and t.verdict.status != "correct" and len(t.rewards) == 4 for t in noop)


def test_concurrent_episodes_keep_their_own_state(guess_env: GuessEnv) -> None:
    """Clones share tasks and verifier but never episode state, even when interleaved."""
    factory = clone_factory(guess_env)
    a, b = factory(), factory()
    assert a.tasks is guess_env.tasks and a.verifier is guess_env.verifier and a.messages is not b.messages
    trajectories = rollout_sync(factory, OraclePolicy(), guess_env.tasks, n=3, concurrency=18)
    for t in trajectories:
        target = next(task.reference for task in guess_env.tasks if task.id == t.task_id)
        assert t.messages[-1].content == target and len(t.messages) == 4


class _Flaky:
    """Fails on one task; records how many episodes are in flight."""

    name = "flaky"
    tokenizer = None
    accepts_prompt_ids = False

    def __init__(self, bad: str) -> None:
        self.bad, self.active, self.peak = bad, 0, 0

    async def generate(self, messages: Sequence[Message], *, tools: Any = None, prompt_ids: Any = None,
                       episode: Episode | None = None) -> Generation:
        assert episode is not None
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.001)
        self.active -= 1
        if episode.task.id == self.bad:
            raise RuntimeError("inference server went away")
        return Generation(message=Message(role="assistant", content=str(episode.task.reference)))


def test_one_failing_episode_does_not_stop_the_others(arithmetic: Any) -> None:
    policy = _Flaky(bad=arithmetic.tasks[2].id)
    trajectories = rollout_sync(clone_factory(arithmetic), policy, arithmetic.tasks, n=2, concurrency=3)
    broken = [t for t in trajectories if t.error]
    assert len(broken) == 2 and {t.task_id for t in broken} == {arithmetic.tasks[2].id}
    for t in broken:
        assert "inference server went away" in t.error and t.verdict is not None and t.verdict.status == "error"
        assert t.reward is None  # masked, never a fake 0
    assert sum(t.verdict is not None and t.verdict.status == "correct" for t in trajectories) == 10
    assert policy.peak == 3  # bounded by the semaphore


def test_skip_and_callback_order(arithmetic: Any) -> None:
    seen: list[tuple[str, int]] = []
    skip = {(arithmetic.tasks[0].id, 0), (arithmetic.tasks[1].id, 1)}
    out = asyncio.run(rollout(clone_factory(arithmetic), OraclePolicy(), arithmetic.tasks[:2], n=2, skip=skip,
                              on_trajectory=lambda t: seen.append((t.task_id, t.info["sample"]))))
    assert sorted(seen) == sorted((t.task_id, t.info["sample"]) for t in out)
    assert set(seen) == {(arithmetic.tasks[0].id, 1), (arithmetic.tasks[1].id, 0)}


def test_bad_arguments(arithmetic: Any) -> None:
    with pytest.raises(ConfigError, match="concurrency"):
        rollout_sync(clone_factory(arithmetic), OraclePolicy(), arithmetic.tasks, concurrency=0)
    with pytest.raises(ConfigError, match="oracle, noop or script:PATH"):
        scripted_policy("random")
    with pytest.raises(ConfigError, match="no episode-layout tokens"):
        token_batch(rollout_sync(clone_factory(arithmetic), NoopPolicy(), arithmetic.tasks[:1]))


def test_environment_that_never_ends_is_an_episode_error(guess_env: GuessEnv) -> None:
    class Endless(GuessEnv):
        async def step(self, action: Message | str) -> Any:
            result = await super().step("0")
            return result.model_copy(update={"terminated": False, "truncated": False})

    env = Endless(size=1, max_turns=2)
    [t] = rollout_sync(clone_factory(env), NoopPolicy(), env.tasks)
    assert t.error is not None and "did not end the episode after 6 policy turns" in t.error


def test_oracle_and_noop_on_the_tool_environment() -> None:
    from rlvr.environments.registry import registry

    if "math/reasoning-gym-tool-v1" not in registry.ids():
        pytest.skip("math/reasoning-gym-tool-v1 is not registered")
    env = make("math/reasoning-gym-tool-v1", size=3, scoring="inline")
    try:
        oracle = rollout_sync(clone_factory(env), OraclePolicy(), env.tasks, n=2)
        assert all(t.verdict is not None and t.verdict.status == "correct" for t in oracle), oracle[0]
        assert all(t.info["turns"] >= 2 and any(m.role == "tool" for m in t.messages) for t in oracle)
        noop = rollout_sync(clone_factory(env), NoopPolicy(), env.tasks)
        assert all(t.verdict is not None and t.verdict.status != "correct" for t in noop)
    finally:
        env.close()


