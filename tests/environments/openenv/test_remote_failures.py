"""`openenv/remote-v1` when the server fails: an error verdict (masked) for that episode only, the others go
on; an unreachable URL is a ConfigError naming it; sessions are released after a failure."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from rlvr.core.errors import BackendError, ConfigError
from rlvr.core.types import Message
from rlvr.environments.multi_turn import tool_call_message
from rlvr.environments.registry import make
from rlvr.rollout.batch import clone_factory, rollout_sync
from rlvr.rollout.policies import ScriptPolicy

pytestmark = pytest.mark.extras

Starter = Callable[[], tuple[subprocess.Popen[bytes], str]]


def _call(message: str, repeat: int = 1) -> Message:
    return tool_call_message("tool_action", {"message": message, "repeat": repeat})


def test_a_server_error_fails_that_episode_only(tool_url: str, tmp_path) -> None:
    env = make("openenv/remote-v1", base_url=tool_url, success_threshold=0.5)
    script = tmp_path / "script.jsonl"
    good = [_call("hi", 1).to_openai(), _call("stop", 1).to_openai()]
    rows = [{"task_id": "train-0", "actions": good}, {"task_id": "custom-2", "actions": good},
            {"task_id": "train-1", "actions": [_call("hi", 1).to_openai(), _call("crash").to_openai()]}]
    script.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        trajectories = rollout_sync(clone_factory(env), ScriptPolicy(script), list(env.tasks), concurrency=3)
        by_id = {t.task_id: t for t in trajectories}
        assert by_id["train-0"].verdict.status == by_id["custom-2"].verdict.status == "correct"  # type: ignore[union-attr]
        broken = by_id["train-1"].verdict
        assert broken is not None and broken.status == "error" and broken.reward is None
        assert "train-1" in broken.detail and "crashed" in broken.detail
        assert not env.sessions.open
    finally:
        env.close()


def test_no_answer_within_timeout_is_an_error_verdict(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url, timeout_s=1.0)
    try:
        env.reset_sync(env.tasks[0])
        result = env.step_sync(_call("sleep"))
        assert result.verdict is not None and result.verdict.status == "error" and result.info["masked"]
        assert "Timeout" in result.verdict.detail
        env.reset_sync(env.tasks[0])  # the next episode starts on a fresh session
        assert env.step_sync(_call("stop", 4)).verdict.status == "correct"  # type: ignore[union-attr]
    finally:
        env.close()


def test_a_killed_server_is_an_error_verdict_mid_episode(own_tool_server: Starter) -> None:
    proc, url = own_tool_server()
    env = make("openenv/remote-v1", base_url=url, timeout_s=5.0)
    try:
        tasks = list(env.tasks)  # prompts are read (lazily) while the server is up
        env.reset_sync(tasks[0])
        env.step_sync(_call("hi", 2))
        proc.kill()
        proc.wait()
        result = env.step_sync(_call("stop"))
        assert result.verdict is not None and result.verdict.status == "error" and result.verdict.reward is None
        assert result.info["masked"] and result.reward == 0.0
        with pytest.raises(BackendError, match="failed to reset task 'train-1'"):
            env.reset_sync(tasks[1])
        assert not env.sessions.open
    finally:
        env.close()


def test_rewards_whose_sum_overflows_are_an_error_verdict_never_inf(tool_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        async def server_says(method: str, action: dict[str, object]) -> SimpleNamespace:
            return SimpleNamespace(observation={"echoed_message": "hi"}, reward=1e308, done=action["message"] == "stop")

        env.reset_sync(env.tasks[0])
        monkeypatch.setattr(env, "_call", server_says)  # each reward finite, their sum is not
        first = env.step_sync(_call("hi"))
        last = env.step_sync(_call("stop"))
        assert first.verdict is None and first.reward == 1e308
        assert last.verdict is not None and last.verdict.status == "error" and last.verdict.reward is None
        assert last.info["masked"] and "not finite" in last.verdict.detail
        monkeypatch.undo()
        env.reset_sync(env.tasks[0])  # within one message: an error verdict too, not a crash of the step
        monkeypatch.setattr(env, "_call", server_says)
        calls = [tool_call_message("tool_action", {"message": m, "repeat": 1}, call_id=f"call_{i}")
                 for i, m in enumerate(("hi", "stop"))]
        result = env.step_sync(Message(role="assistant", content="",
                                       tool_calls=tuple(t for c in calls for t in c.tool_calls or ())))
        assert result.verdict is not None and result.verdict.status == "error" and result.verdict.reward is None
        assert "overflow" in result.verdict.detail
    finally:
        env.close()


@pytest.mark.parametrize(("reward", "done"), [("1", True), (1.0, "false"), (1.0, 1), (None, None)])
def test_a_reward_or_done_of_a_type_openenv_does_not_allow_is_an_error_verdict(
        tool_url: str, monkeypatch: pytest.MonkeyPatch, reward: object, done: object) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        env.reset_sync(env.tasks[0])

        async def server_says(method: str, *args: object, **kwargs: object) -> SimpleNamespace:
            return SimpleNamespace(observation={"echoed_message": "hi"}, reward=reward, done=done)

        monkeypatch.setattr(env, "_call", server_says)  # a non-OpenEnv server speaking the wire protocol loosely
        result = env.step_sync(_call("hi"))
        assert result.verdict is not None and result.verdict.status == "error" and result.verdict.reward is None
        assert "OpenEnv's are a number" in result.verdict.detail
    finally:
        env.close()


def test_an_unreachable_url_is_a_config_error_naming_it(closed_url: str) -> None:
    url = closed_url
    with pytest.raises(ConfigError, match=url.replace(".", r"\.")):
        make("openenv/remote-v1", base_url=url, timeout_s=2.0)
    with pytest.raises(ConfigError, match="base_url"):
        make("openenv/remote-v1", base_url="localhost:8000")


@pytest.mark.parametrize("threshold", [float("nan"), float("-inf"), float("inf")])
def test_a_success_threshold_that_is_not_finite_is_a_config_error(closed_url: str, threshold: float) -> None:
    with pytest.raises(ConfigError, match="success_threshold"):  # nan: nothing correct; -inf: any return correct
        make("openenv/remote-v1", base_url=closed_url, success_threshold=threshold)


def test_a_full_server_names_the_fix(echo_url: str) -> None:
    """The `openenv init` template takes one session: a second episode at once is refused with the fix."""
    env = make("openenv/remote-v1", base_url=echo_url, max_turns=2)
    second = env.episode_copy()
    try:
        env.reset_sync(env.tasks[0])
        with pytest.raises(BackendError, match=r"CAPACITY_REACHED.*max_concurrent_envs=N.*--concurrency N"):
            second.reset_sync(env.tasks[1])
        assert len(env.sessions.open) == 1  # the refused episode holds nothing
    finally:
        env.close()
    assert not env.sessions.open


def test_an_episode_waits_for_a_free_session_up_to_capacity_wait_s(echo_url: str) -> None:
    """capacity_wait_s: a full server's refusal is retried until a session frees (the template takes one)."""
    import asyncio

    env = make("openenv/remote-v1", base_url=echo_url, max_turns=2, capacity_wait_s=30)
    first, second = env.episode_copy(), env.episode_copy()

    async def play() -> float:
        await first.reset(env.tasks[0])
        waiting = asyncio.ensure_future(second.reset(env.tasks[1]))
        await asyncio.sleep(0.5)
        assert not waiting.done()  # no slot yet: it waits instead of failing
        first.close_episode()  # the first episode's session ends: the slot frees
        start = asyncio.get_running_loop().time()
        await waiting
        return asyncio.get_running_loop().time() - start

    try:
        assert asyncio.run(play()) < 5.0
        assert len(env.sessions.open) == 1
    finally:
        env.close()
    with pytest.raises(ConfigError, match="capacity_wait_s"):
        make("openenv/remote-v1", base_url=echo_url, capacity_wait_s=-1)
