"""The math/gsm8k-tool-v1 family of environments (the calculator itself: test_calculator.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rlvr
from rlvr import check
from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, ToolCall
from rlvr.environments.calculator import evaluate
from rlvr.environments.math_tool import CalculatorEnv, make_reasoning_gym_tool
from rlvr.environments.multi_turn import tool_call_message

INLINE = {"scoring": "inline"}


def test_registered_ids_resolve() -> None:
    assert {"math/gsm8k-tool-v1", "math/reasoning-gym-tool-v1"} <= set(rlvr.environments.registry.ids())
    env = rlvr.make("math/reasoning-gym-tool-v1", size=3, **INLINE)
    assert isinstance(env, CalculatorEnv) and env.spec.id == "math/reasoning-gym-tool-v1"
    assert env.spec.max_turns == 4 and env.spec.seeding == "procedural"
    assert [t["function"]["name"] for t in env.spec.tools] == ["calculator"]


def test_reasoning_gym_tool_oracle_noop_and_check() -> None:
    env = make_reasoning_gym_tool(size=12, seed=1, **INLINE)
    for task in env.tasks:
        actions = env.reference_actions(task)
        assert actions is not None and actions[0].tool_calls is not None
        call = actions[0].tool_calls[0]
        assert call.name == "calculator"
        assert json.loads(call.arguments)["expression"] == task.metadata["entry"]["expression"]
        env.reset_sync(task)
        first = env.step_sync(actions[0])
        assert first.messages[0].role == "tool" and first.messages[0].content == task.reference
        last = env.step_sync(actions[1])
        assert last.terminated and last.verdict is not None and last.verdict.status == "correct"
    report = check(env, n=6)
    assert report.passed, report.failures
    assert {"oracle_episode", "noop_episode"} <= {r.name for r in report.results}


def test_hermes_text_calls_and_noop() -> None:
    env = make_reasoning_gym_tool(size=4, **INLINE)
    task = env.tasks[0]
    env.reset_sync(task)
    expression = task.metadata["entry"]["expression"]
    result = env.step_sync(f'<tool_call>{{"name": "calculator", "arguments": {{"expression": "{expression}"}}}}'
                           "</tool_call>")
    assert result.messages == (Message(role="user", content=f"<tool_response>\n{task.reference}\n</tool_response>"),)
    assert env.step_sync(f"\\boxed{{{task.reference}}}").verdict.status == "correct"  # type: ignore[union-attr]
    env.reset_sync(task)
    noop = env.step_sync("")
    assert noop.terminated and noop.verdict is not None and not noop.verdict.is_correct


def test_malicious_tool_call_is_an_error_message_not_a_crash() -> None:
    env = make_reasoning_gym_tool(size=2, **INLINE)
    env.reset_sync(env.tasks[0])
    calls = (ToolCall(id="a", name="calculator", arguments=json.dumps({"expression": "__import__('os').getcwd()"})),
             ToolCall(id="b", name="calculator", arguments=json.dumps({"expression": "9**9**9**9"})),
             ToolCall(id="c", name="calculator", arguments='{"expr": "1"}'))
    result = env.step_sync(Message(role="assistant", tool_calls=calls))
    assert [m.content.startswith("Error: ") for m in result.messages] == [True, True, True]
    assert result.info["components"]["tool_errors"] == 3.0 and not result.terminated


def test_factory_options() -> None:
    env = make_reasoning_gym_tool(size=2, max_turns=2, hermes=False, reward_weights={"tool_errors": -0.1}, **INLINE)
    assert env.max_turns == 2 and env.text_tags == () and env.reward_weights == {"tool_errors": -0.1}
    env.reset_sync(env.tasks[0])
    env.step_sync(tool_call_message("calculator", {"expression": "1/0"}))
    last = env.step_sync(f"\\boxed{{{env.tasks[0].reference}}}")
    assert last.verdict is not None and last.verdict.reward == pytest.approx(0.9)
    with pytest.raises(ConfigError, match="max_turns must be an int >= 2"):
        make_reasoning_gym_tool(size=2, max_turns=1)
    with pytest.raises(ConfigError, match="calculator_timeout_s"):
        make_reasoning_gym_tool(size=2, calculator_timeout_s=0)
    with pytest.raises(ConfigError, match="hermes"):
        make_reasoning_gym_tool(size=2, hermes="yes")  # type: ignore[arg-type]


def test_gsm8k_tool_from_local_path(gsm8k_path: Path) -> None:
    env = rlvr.make("math/gsm8k-tool-v1", path=str(gsm8k_path), **INLINE)
    assert isinstance(env, CalculatorEnv) and len(env.tasks) == 1319
    annotated = 0
    for task in env.tasks:
        actions = env.reference_actions(task)
        assert actions is not None
        expression = json.loads(actions[0].tool_calls[0].arguments)["expression"]  # type: ignore[index]
        annotated += expression != task.reference
        assert evaluate(expression) == evaluate(task.reference)  # the oracle's call computes the answer
    assert annotated > 1000  # most answers come from the solution's <<a*b=c>> annotations
    report = check(env, n=8)
    assert report.passed, report.failures




@pytest.mark.parametrize("form", ["native", "hermes-text", "native-with-boxed-content", "text-with-boxed-content"])
def test_an_episode_cut_on_a_tool_call_has_no_final_answer(form: str) -> None:
    """Turns that run out on a call score '' (no answer): the call's markup is never read as the answer.

    Found by the cross-trainer episodes: a last-turn call whose expression is the gold value
    (`{"expression": "-4"}`) scored correct on every path that ran it.
    """
    env = make_reasoning_gym_tool(size=2, max_turns=2, **INLINE)
    task = env.tasks[0]
    gold = str(task.reference)
    env.reset_sync(task)
    env.step_sync(tool_call_message("calculator", {"expression": task.metadata["entry"]["expression"]}))
    boxed = f"The answer is \\boxed{{{gold}}}." if form.endswith("boxed-content") else ""
    if form.startswith("native"):
        last = tool_call_message("calculator", {"expression": gold}, content=boxed)
    else:
        last = boxed + f'<tool_call>{{"name": "calculator", "arguments": {{"expression": "{gold}"}}}}</tool_call>'
    result = env.step_sync(last)
    assert result.truncated and not result.terminated
    assert result.verdict is not None and result.verdict.status == "no_answer" and result.verdict.reward == 0.0


def test_the_last_turn_without_a_call_is_still_the_answer() -> None:
    env = make_reasoning_gym_tool(size=2, max_turns=2, **INLINE)
    task = env.tasks[0]
    env.reset_sync(task)
    env.step_sync(tool_call_message("calculator", {"expression": task.metadata["entry"]["expression"]}))
    result = env.step_sync(f"\\boxed{{{task.reference}}}")
    assert result.terminated and result.verdict is not None and result.verdict.status == "correct"
