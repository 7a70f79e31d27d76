"""Calculator tool (safety, exactness, limits) and the math/gsm8k-tool-v1 family of environments."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlvr
from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, ToolCall
from rlvr.environments import calculator as calc
from rlvr.environments.calculator import calculator_tool, evaluate
from rlvr.environments.check import check
from rlvr.environments.math_tool import CalculatorEnv, make_reasoning_gym_tool
from rlvr.environments.multi_turn import tool_call_message
from rlvr.environments.tools import ToolError

INLINE = {"scoring": "inline"}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("16 - 3 - 4", "9"), ("9*2", "18"), ("0.1 + 0.2", "0.3"), ("48/2*1.5", "36"), ("7/2", "3.5"),
        ("-7/2", "-3.5"), ("1/3", "1/3 ≈ 0.333333333333333"), ("2**10", "1024"), ("2^10", "1024"),
        ("7 // 2", "3"), ("-7 // 2", "-4"), ("-7 % 3", "2"), ("7.5 % 2", "1.5"), ("(1/3)**-2", "9"),
        ("sqrt(16)", "4"), ("8**(1/3)", "2"), ("4**0.5", "2"), ("sqrt(2)", "1.4142135623731"),
        ("round(2.5)", "2"), ("round(3.14159, 2)", "3.14"), ("factorial(20)", "2432902008176640000"),
        ("comb(10, 3)", "120"), ("gcd(12, 18)", "6"), ("lcm(4, 6)", "12"), ("max(1, 5, 3)", "5"), ("abs(-3)", "3"),
        ("log(100, 10)", "2"), ("pi", "3.14159265358979"), ("12 × 3 =", "36"), ("1.5e3", "1500"),
        ("10**3999 // 10**3998", "10"),
    ],
)
def test_calculator_values(expression: str, expected: str) -> None:
    assert evaluate(expression) == expected


MALICIOUS = [
    ("__import__('os').system('echo pwned')", "dunder"),
    ("().__class__.__bases__[0].__subclasses__()", "dunder"),
    ("open('/etc/passwd').read()", "unknown function"),
    ("open('/etc/passwd')", "unknown function 'open'"),
    ("os.system('ls')", "unknown function 'os.system'"),
    ("(1).real", "attribute access"),
    ("lambda: 1", "lambda"),
    ("[x for x in (1, 2)]", "ListComp is not allowed"),
    ("[1, 2][0]", "indexing"),
    ("'a' * 3", "only numbers"),
    ("True + 1", "only numbers"),
    ("1 < 2", "comparison"),
    ("1 if 2 else 3", "if/else"),
    ("x", "unknown name 'x'"),
    ("sqrt(x=4)", "positional arguments only"),
    ("eval('1+1')", "unknown function 'eval'"),
    ("exec('import os')", "no imports"),
    ("1,000", "thousands separators"),
    ("y = 3", "cannot parse"),
    ("", "empty expression"),
]


@pytest.mark.parametrize(("expression", "message"), MALICIOUS, ids=[m[0][:30] for m in MALICIOUS])
def test_calculator_rejects_anything_but_arithmetic(expression: str, message: str) -> None:
    with pytest.raises(ToolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(expression)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9**9**9**9", "would have about 369693100 digits"),
        ("10**4001", "limit 4000"),
        ("2**-100000", "digits"),
        ("10**3999 * 10", "more than 4000 digits"),
        ("factorial(10**6)", "from 0 to 1000"),
        ("floor(exp(10**10))", "too large"),
        ("sqrt(10**3999 + 1) * 2", None),  # irrational root of a huge integer: float path, no factoring
        ("(" * 200 + "1" + ")" * 200, None),
        ("-" * 450 + "1", None),
        ("1" + "+1" * 300, "too long"),
        ("1e4001", "too large"),
        ("1/0", "division by zero"),
        ("0**-1", "division by zero"),
        ("5 % 0", "modulo by zero"),
        ("(-8)**(1/3)", "not a real number"),
        ("log(0)", "positive argument"),
    ],
)
def test_calculator_limits_answer_fast(expression: str, message: str | None) -> None:
    start = time.monotonic()
    try:
        result = evaluate(expression)
    except ToolError as exc:
        assert message is None or message in str(exc)
    else:
        assert message is None, f"expected an error, got {result!r}"
    assert time.monotonic() - start < 2.0  # bounded work (generous: shared CI machine), not a timeout


def test_calculator_never_calls_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert evaluate("(48 / 2) * 3 + 2**10 - sqrt(9)") == "1093"


def test_calculator_tool_reports_errors_within_its_timeout() -> None:
    tool = calculator_tool(timeout_s=1.0)
    assert tool.schema["function"]["parameters"]["required"] == ["expression"]
    start = time.monotonic()
    with pytest.raises(ToolError, match="digits"):
        asyncio.run(tool.call({"expression": "9**9**9**9"}))
    assert time.monotonic() - start < 1.0
    assert asyncio.run(tool.call('{"expression": "2 + 2"}')) == "4"
    assert calc.MAX_DIGITS < 4300  # CPython's default int/str conversion limit


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


_ARITH = st.text(alphabet=st.sampled_from(list("0123456789+-*/%^().e, _abcdfgilmnoqrstx'[]")), max_size=60)


@settings(max_examples=300, deadline=None)
@given(expression=st.one_of(_ARITH, st.text(max_size=80)))
def test_calculator_only_raises_tool_error(expression: str) -> None:
    start = time.monotonic()
    try:
        result = evaluate(expression)
    except ToolError as exc:
        assert str(exc)
    else:
        assert isinstance(result, str) and result
    assert time.monotonic() - start < 5.0


@settings(max_examples=200, deadline=None)
@given(a=st.integers(-10**6, 10**6), b=st.integers(-10**6, 10**6).filter(lambda v: v != 0))
def test_calculator_matches_python_integer_arithmetic(a: int, b: int) -> None:
    assert evaluate(f"{a} + {b}") == str(a + b)
    assert evaluate(f"{a} * {b}") == str(a * b)
    assert evaluate(f"({a}) // ({b})") == str(a // b)
    assert evaluate(f"({a}) % ({b})") == str(a % b)
