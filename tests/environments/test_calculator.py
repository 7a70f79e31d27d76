"""The calculator (`rlvr.environments.calculator`): exact values, the arithmetic-only whitelist, bounded work."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.environments import calculator as calc
from rlvr.environments.calculator import FUNCTIONS, MAX_FACTORIAL, MAX_LENGTH, calculator_tool, evaluate
from rlvr.environments.tools import ToolError


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


@pytest.mark.parametrize(
    ("expression", "expected"),
    [("0.30000000000000001 - 0.3", "0.00000000000000001"), ("12345678901234567890.5", "12345678901234567890.5"),
     ("1_000.5 * 2", "2001"), ("1e999 // 1e998", "10"), ("sin(10**100)", "-0.372376123661277"),
     ("log(1 + 10**-40)", "1e-40"), ("exp(-9000) * exp(9000)", "1")],
)
def test_calculator_reads_literals_exactly_and_keeps_argument_digits(expression: str, expected: str) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [("1e-999999", "too large or too small"), ("0." + "0" * 4001 + "1", "too long"),
     ("exp(10**3999)", "exp() argument"),
     ("exp(-10**3999)", "exp() argument"), ("10**(10**3999 + 1/2)", "digits"), ("4**(10**3999)", "digits"),
     ("0.5**(10**400)", "digits"), ("e**(10**100 + 1/2)", "digits"), ("exp(9000) * exp(9000)", "magnitude"),
     ("exp(exp(exp(10)))", "exp() argument")],
)
def test_calculator_refuses_huge_decimal_results_fast(expression: str, message: str) -> None:
    start = time.monotonic()
    with pytest.raises(ToolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(expression)  # before: 35-75 s of CPU (exp(10**3999)), OverflowError (4**(10**3999)), 0 (1e-999999)
    assert time.monotonic() - start < 2.0  # bounded work, generous for a shared CI machine


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_checks_its_arity_and_is_named_in_the_tool_description(name: str) -> None:
    _, low, high = FUNCTIONS[name]
    assert evaluate(f"{name}({', '.join(['2'] * low)})")  # the fewest arguments are accepted
    for count in {low - 1, high + 1} - {0}:
        with pytest.raises(ToolError, match=rf"{name}\(\) takes {low}.* argument\(s\), got {count}"):
            evaluate(f"{name}({', '.join(['2'] * count)})")
    assert name in calculator_tool().schema["function"]["description"]  # what the model is told it may call


def test_length_and_factorial_limits_are_inclusive() -> None:
    assert evaluate("7" * MAX_LENGTH) == "7" * MAX_LENGTH
    with pytest.raises(ToolError, match=f"limit {MAX_LENGTH}"):
        evaluate("7" * (MAX_LENGTH + 1))
    assert evaluate(f"factorial({MAX_FACTORIAL})") == str(math.factorial(MAX_FACTORIAL))
    with pytest.raises(ToolError, match=f"from 0 to {MAX_FACTORIAL}, got {MAX_FACTORIAL + 1}"):
        evaluate(f"factorial({MAX_FACTORIAL + 1})")
