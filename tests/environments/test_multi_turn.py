"""MultiTurnEnv / ToolEnv: episodes, tool answers, errors as messages, turn limits, reward components."""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Iterator, Sequence

import pytest

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, Task, ToolCall, Trajectory, Verdict
from rlvr.environments.actions import TextTag
from rlvr.environments.multi_turn import MultiTurnEnv, ToolEnv, tool_call_message
from rlvr.environments.tools import tool
from rlvr.verifiers.registry import get_verifier
from rlvr.verifiers.testing import ConstantVerifier

TASKS = [
    Task(id="t0", prompt=(Message(role="user", content="What is 6*7?"),), reference="42"),
    Task(id="t1", prompt=(Message(role="user", content="What is 2+2?"),), reference="4"),
]
SPEC = EnvSpec(id="test/tool-v1", max_turns=4)


@tool(timeout_s=1.0)
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: left factor.
        b: right factor.
    """
    return a * b


@tool(timeout_s=1.0)
def fail() -> str:
    """Always raises."""
    raise RuntimeError("disk on fire")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _env(**kwargs: object) -> ToolEnv:
    tools = kwargs.pop("tools", [multiply, fail])
    return ToolEnv(TASKS, get_verifier("math", scoring="inline"), SPEC, tools, **kwargs)  # type: ignore[arg-type]


def test_native_tool_episode_scores_final_answer() -> None:
    env = _env()
    assert [t["function"]["name"] for t in env.spec.tools] == ["multiply", "fail"]
    prompt, info = env.reset_sync(TASKS[0])
    assert prompt == list(TASKS[0].prompt) and info["task_id"] == "t0"
    first = env.step_sync(tool_call_message("multiply", {"a": 6, "b": 7}, call_id="c9"))
    assert first.messages == (Message(role="tool", tool_call_id="c9", name="multiply", content="42"),)
    assert not (first.terminated or first.truncated) and first.verdict is None
    assert first.info["components"] == {"tool_calls": 1.0, "tool_errors": 0.0} and first.reward == 0.0
    last = env.step_sync("6*7 = \\boxed{42}")
    assert last.terminated and not last.truncated and last.messages == ()
    assert last.verdict is not None and last.verdict.status == "correct" and last.reward == 1.0
    assert last.info["status"] == "correct" and last.info["masked"] is False and last.info["turn"] == 2
    assert [m.role for m in env.messages] == ["user", "assistant", "tool", "assistant"]
    with pytest.raises(ConfigError, match="episode is over"):
        env.step_sync("again")


def test_errors_come_back_as_tool_messages_never_crash() -> None:
    env = _env()
    env.reset_sync(TASKS[0])
    calls = (
        ToolCall(id="1", name="fail", arguments="{}"),
        ToolCall(id="2", name="nope", arguments="{}"),
        ToolCall(id="3", name="multiply", arguments="{a: 1}"),
        ToolCall(id="4", name="multiply", arguments='{"a": "x", "b": 1}'),
        ToolCall(id="5", name="multiply", arguments='{"a": 2, "b": 3}'),
    )
    result = env.step_sync(Message(role="assistant", tool_calls=calls))
    contents = {m.tool_call_id: m.content for m in result.messages}
    assert [m.role for m in result.messages] == ["tool"] * 5
    assert contents["1"] == "Error: tool 'fail' failed: RuntimeError: disk on fire"
    assert contents["2"] == "Error: unknown tool 'nope'; available tools: multiply, fail"
    assert contents["3"].startswith("Error: arguments of the call to 'multiply' are not valid JSON")
    assert contents["4"].startswith("Error: invalid arguments for tool 'multiply': argument 'a'")
    assert contents["5"] == "6"
    assert result.info["components"] == {"tool_calls": 5.0, "tool_errors": 4.0}
    assert not result.terminated


def test_hanging_tool_times_out_and_episode_continues(release: threading.Event) -> None:
    @tool(timeout_s=0.2)
    def stuck(seconds: float) -> str:
        """Hangs."""
        release.wait(seconds)
        return "late"

    env = _env(tools=[stuck])
    env.reset_sync(TASKS[1])
    start = time.monotonic()
    result = env.step_sync(tool_call_message("stuck", {"seconds": 30}))
    assert time.monotonic() - start < 5
    assert "timed out" in result.messages[0].content and not result.terminated
    assert env.step_sync("\\boxed{4}").verdict.status == "correct"  # type: ignore[union-attr]


def test_text_tag_calls_answered_with_user_message() -> None:
    env = _env(text_tags=[TextTag.hermes()])
    env.reset_sync(TASKS[0])
    result = env.step_sync('<tool_call>{"name": "multiply", "arguments": {"a": 6, "b": 7}}</tool_call>\n'
                           '<tool_call>{"name": "multiply", "arguments": {"a": 6}}</tool_call>')
    (msg,) = result.messages
    assert msg.role == "user"
    assert msg.content.startswith("<tool_response>\n42\n</tool_response>\n<tool_response>\nError: invalid arguments")
    assert "missing required argument 'b'" in msg.content


def test_turn_limit_truncates_and_scores_what_is_there() -> None:
    env = _env(max_turns=2)
    assert env.spec.max_turns == 2
    env.reset_sync(TASKS[0])
    assert not env.step_sync(tool_call_message("multiply", {"a": 6, "b": 7}, content="\\boxed{42}")).truncated
    last = env.step_sync(tool_call_message("multiply", {"a": 1, "b": 1}, content="still working"))
    assert last.truncated and not last.terminated
    assert last.messages[0].content == "1"  # the observation of the cut step is still returned
    assert last.verdict is not None and last.verdict.status != "correct"  # 'still working' is scored


def test_max_calls_per_turn() -> None:
    env = _env(max_calls_per_turn=1)
    env.reset_sync(TASKS[0])
    calls = tuple(ToolCall(id=str(i), name="multiply", arguments='{"a": 1, "b": 2}') for i in range(3))
    result = env.step_sync(Message(role="assistant", tool_calls=calls))
    assert result.messages[0].content == "2"
    assert all("at most 1 tool calls per message" in m.content for m in result.messages[1:])


def test_reward_weights_formula() -> None:
    env = _env(reward_weights={"tool_errors": -0.25, "tool_calls": 0.0})
    env.reset_sync(TASKS[0])
    rewards = []
    for action in (
        tool_call_message("fail", {}),
        Message(role="assistant", tool_calls=(ToolCall(id="a", name="fail"), ToolCall(id="b", name="multiply",
                                                                                     arguments='{"a":6,"b":7}'))),
        Message(role="assistant", content="\\boxed{42}"),
    ):
        result = env.step_sync(action)
        rewards.append(result.reward)
    assert rewards[:2] == [-0.25, -0.25]
    verdict = result.verdict
    assert verdict is not None and verdict.status == "correct"
    assert verdict.reward == pytest.approx(1.0 - 0.5)  # R = V.reward + sum_t r_t
    assert verdict.components == {"correct": 1.0, "step/tool_errors": 2.0, "step/tool_calls": 3.0}
    assert sum(rewards) == pytest.approx(verdict.reward)  # step rewards sum to R
    trajectory = Trajectory(task_id="t0", messages=env.messages, rewards=rewards, verdict=verdict)
    assert trajectory.reward == pytest.approx(sum(rewards))


def test_error_verdict_is_masked() -> None:
    env = ToolEnv(TASKS, ConstantVerifier("error", None), SPEC, [multiply], reward_weights={"tool_calls": 1.0})
    env.reset_sync(TASKS[0])
    assert env.step_sync(tool_call_message("multiply", {"a": 1, "b": 1})).reward == 1.0
    last = env.step_sync("done")
    assert last.verdict is not None and last.verdict.reward is None and last.verdict.status == "error"
    assert last.reward == 0.0 and last.info["masked"] is True


def test_bad_configs() -> None:
    with pytest.raises(ConfigError, match="two tools are named 'multiply'"):
        _env(tools=[multiply, multiply])
    with pytest.raises(ConfigError, match="calls tool 'bash', which is not among the tools"):
        _env(text_tags=[TextTag.fence("bash", tool="bash", argument="command")])
    with pytest.raises(ConfigError, match="max_turns"):
        _env(max_turns=0)
    with pytest.raises(ConfigError, match=r"reward_weights\['x'\]"):
        _env(reward_weights={"x": float("nan")})
    with pytest.raises(ConfigError, match="does not match the tools"):
        ToolEnv(TASKS, ConstantVerifier(), SPEC.model_copy(update={"tools": ({"type": "function"},)}), [multiply])
    env = _env()
    with pytest.raises(ConfigError, match="before reset"):
        env.step_sync("x")
    env.reset_sync(TASKS[0])
    with pytest.raises(ConfigError, match="assistant message"):
        env.step_sync({"role": "user", "content": "hi"})


class Countdown(MultiTurnEnv):
    """A custom multi-turn env: the user says 'again' until the third turn; each turn scores 'length'."""

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        if self.turn < 3:
            return [Message(role="user", content=f"again ({3 - self.turn} left)")], False
        return [], True

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        return {"length": float(len(action.content))}


def test_custom_multi_turn_env_and_final_response() -> None:
    env = Countdown(TASKS, get_verifier("math", scoring="inline"), SPEC, reward_weights={"length": 0.01})
    env.reset_sync(seed=3)
    results = [env.step_sync(text) for text in ("\\boxed{1}", "\\boxed{2}", "\\boxed{4}")]
    assert results[0].messages[0].content == "again (2 left)"
    assert results[-1].terminated and results[-1].info["turn"] == 3
    assert env.final_response() == "\\boxed{4}"
    assert [r.info["components"]["length"] for r in results] == [9.0, 9.0, 9.0]
    verdict = results[-1].verdict
    assert verdict is not None
    base = 1.0 if verdict.status == "correct" else 0.0
    assert verdict.reward == pytest.approx(base + 0.27)
    assert sum(r.reward for r in results) == pytest.approx(verdict.reward)


class SlowVerifierEnv(MultiTurnEnv):
    """The inline verifier hangs: the environment's per-call limit turns it into a timeout verdict."""


def test_verifier_per_call_timeout(release: threading.Event) -> None:
    class Hanging(ConstantVerifier):
        def verify(self, response: str, reference: object) -> Verdict:
            release.wait(30)
            return super().verify(response, reference)

    env = SlowVerifierEnv(TASKS, Hanging(), SPEC, verifier_timeout_s=0.2)
    env.reset_sync(TASKS[0])
    start = time.monotonic()
    result = env.step_sync("anything")
    assert time.monotonic() - start < 5
    assert result.verdict is not None and result.verdict.status == "timeout" and result.verdict.reward == 0.0
    assert "per-call limit" in result.verdict.detail


def test_scoring_has_one_deadline() -> None:
    """A stock process-isolated verifier's pool deadline is the only one; inline verifiers get the backstop."""
    pooled = get_verifier("math")
    inline = get_verifier("math", scoring="inline")
    try:
        assert MultiTurnEnv(TASKS, pooled, SPEC).scoring_deadline() is None
        assert MultiTurnEnv(TASKS, inline, SPEC).scoring_deadline() == inline.config.timeout_s + 5.0
        assert MultiTurnEnv(TASKS, pooled, SPEC, verifier_timeout_s=0.5).scoring_deadline() == 0.5
        env = MultiTurnEnv(TASKS, pooled, SPEC)
        env.reset_sync(TASKS[0])
        verdict = env.step_sync("The answer is \\boxed{4}.").verdict
        assert verdict is not None and verdict.status in ("correct", "incorrect")
    finally:
        pooled.close()


def test_concurrent_episodes_do_not_share_state() -> None:
    async def episode(task: Task) -> str | None:
        env = _env()
        await env.reset(task)
        await env.step(tool_call_message("multiply", {"a": 2, "b": 2}))
        result = await env.step(f"\\boxed{{{task.reference}}}")
        return result.verdict.status if result.verdict else None

    async def main() -> list[str | None]:
        return await asyncio.gather(*(episode(TASKS[i % 2]) for i in range(20)))

    assert asyncio.run(main()) == ["correct"] * 20


class NanReward(Countdown):
    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        return {"length": float("nan")}


def test_non_finite_step_component_is_a_config_error() -> None:
    env = NanReward(TASKS, ConstantVerifier(), SPEC)
    env.reset_sync(TASKS[0])
    with pytest.raises(ConfigError, match=r"non-finite components \['length'\]"):
        env.step_sync("x")


class WhoAmIEnv(ToolEnv):
    """A tool env whose tool is a bound method reading the episode's task (like SQLToolEnv.execute_sql)."""

    def __init__(self) -> None:
        tasks = [Task(id=f"t{i}", prompt=(Message(role="user", content="q"),), reference=str(i)) for i in range(4)]
        super().__init__(tasks, get_verifier("math", scoring="inline"), EnvSpec(id="test/whoami-v1", max_turns=3),
                         [self.whoami])

    def whoami(self) -> str:
        """Name the current task."""
        return "none" if self.task is None else self.task.id


def test_shallow_copies_rebind_bound_method_tools() -> None:
    proto = WhoAmIEnv()
    clones = [copy.copy(proto) for _ in range(3)]  # what the rollout driver and the TRL adapter do per episode

    async def episode(env: ToolEnv, task: Task) -> str:
        await env.reset(task)
        result = await env.step(tool_call_message("whoami", {}))
        return result.messages[0].content

    async def run() -> list[str]:
        return await asyncio.gather(*(episode(c, t) for c, t in zip(clones, proto.tasks[1:], strict=True)))

    assert asyncio.run(run()) == ["t1", "t2", "t3"]  # before: every copy answered "none" (the prototype's task)
    assert proto.tools["whoami"].fn.__self__ is proto and all(c.verifier is proto.verifier for c in clones)
    assert all(c.tools["whoami"].schema == proto.tools["whoami"].schema for c in clones)
