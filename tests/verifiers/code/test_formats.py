"""UnitTestVerifier on the four test formats, reward modes and error paths (real sandbox)."""

from __future__ import annotations

import importlib.util
import shutil
import time

import pytest

from rlvr.core.errors import MissingExtraError
from rlvr.sandbox import LocalSandbox
from rlvr.verifiers.code import UnitTestVerifier
from rlvr.verifiers.code.config import CodeConfig
from rlvr.verifiers.code.execution import Clock, SandboxFailure
from rlvr.verifiers.code.pytest_format import run_pytest
from rlvr.verifiers.code.spec import as_test_spec
from rlvr.verifiers.registry import get_verifier

ADD_TESTS = {"format": "assert", "tests": "assert add(2, 3) == 5\nassert add(-1, 1) == 0\nassert add(0, 0) == 0"}


@pytest.fixture(scope="module")
def verifier():
    v = UnitTestVerifier(test_timeout_s=3, timeout_s=10)
    yield v
    v.close()


def test_assert_correct_and_isolation_recorded(verifier):
    v = verifier.verify("```python\ndef add(a, b):\n    return a + b\n```", ADD_TESTS)
    assert (v.status, v.reward, v.components) == ("correct", 1.0, {"pass_rate": 1.0})
    assert "sandbox:" in v.detail and "3/3 tests passed" in v.detail


def test_assert_partial_fraction_reward():
    v = UnitTestVerifier(reward="fraction").verify("def add(a, b):\n    return a + b if a >= 0 else 7", ADD_TESTS)
    assert v.status == "incorrect" and v.reward == pytest.approx(2 / 3)
    assert "FAIL line 2" in v.detail and "operands (7, 0)" in v.detail


def test_binary_reward_is_zero_on_partial(verifier):
    assert verifier.verify("def add(a, b):\n    return a + b if a >= 0 else 7", ADD_TESTS).reward == 0.0


def test_humaneval_style_check_entry_point(verifier):
    ref = {"format": "assert", "entry_point": "inc",
           "tests": "def check(candidate):\n    for i in range(3):\n        assert candidate(i) == i + 1\n"
                    "    assert abs(candidate(0.5) - 1.5) < 1e-9\n"}
    assert verifier.verify("def inc(x):\n    return x + 1", ref).status == "correct"
    assert verifier.verify("def inc(x):\n    return x + 2", ref).status == "incorrect"
    assert verifier.verify("def other(x):\n    return x + 1", ref).status == "incorrect"


def test_mbpp_setup_code_runs_after_candidate(verifier):
    ref = {"format": "assert", "setup": "p = Point(1, 2)", "tests": "assert norm1(p) == 3"}
    code = "class Point:\n    def __init__(s, x, y): s.x, s.y = x, y\ndef norm1(p): return abs(p.x) + abs(p.y)"
    assert verifier.verify(code, ref).status == "correct"


def test_call_based_type_strict_and_tolerance(verifier):
    ref = {"format": "call", "fn": "f", "cases": [{"args": [2], "expected": 4.0}, {"args": [0.1], "expected": 0.01}]}
    assert verifier.verify("def f(x):\n    return x * x * 1.0", ref).status == "correct"
    wrong_type = verifier.verify("def f(x):\n    return int(x * x)", ref)
    assert wrong_type.status == "incorrect" and "expected 4.0, got 4" in wrong_type.detail
    loose = UnitTestVerifier(type_strict=False, abs_tol=0.02).verify("def f(x):\n    return round(x * x)", ref)
    assert loose.status == "correct"


def test_call_based_literal_and_class_method(verifier):
    ref = {"format": "call", "fn": "Solution.pair", "literal": True,
           "cases": [{"args": ["(1, 2)"], "expected": "(2, 1)"}, {"args": ["(3, 4)"], "expected": "(4, 3)"}]}
    code = "class Solution:\n    def pair(self, t):\n        return (t[1], t[0])"
    assert verifier.verify(code, ref).status == "correct"
    assert verifier.verify(code.replace("(t[1], t[0])", "[t[1], t[0]]"), ref).status == "incorrect"


def test_call_based_per_case_timeout():
    ref = {"format": "call", "fn": "f", "cases": [{"args": [1], "expected": 1}, {"args": [0], "expected": 0}]}
    v = UnitTestVerifier(test_timeout_s=1, reward="fraction").verify(
        "def f(x):\n    while not x:\n        pass\n    return x", ref)
    assert v.status == "timeout" and v.reward == 0.5 and "TIMEOUT case 1" in v.detail


def test_stdio(verifier):
    ref = {"format": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}, {"input": "10 -4", "output": "6"}]}
    assert verifier.verify("a, b = map(int, input().split())\nprint(a + b)  ", ref).status == "correct"
    assert verifier.verify("a, b = map(int, input().split())\nprint(a + b, ' ')", ref).status == "correct"
    assert verifier.verify("a, b = map(int, input().split())\nprint(a - b)", ref).status == "incorrect"
    crash = verifier.verify("a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(3)", ref)
    assert crash.status == "incorrect" and "exit 3" in crash.detail


PYTEST_FILES = {"test_add.py": "import pytest\nfrom solution import add\n\n"
                "def test_small():\n    assert add(1, 2) == 3\n\n"
                "class TestMore:\n    def test_zero(self):\n        assert add(0, 0) == 0\n\n"
                "@pytest.mark.parametrize('a', [1, 2, 3])\ndef test_param(a):\n    assert add(a, -a) == 0\n"}


def test_pytest_format(verifier):
    ref = {"format": "pytest", "files": PYTEST_FILES}
    good = verifier.verify("def add(a, b):\n    return a + b", ref)
    assert good.status == "correct", good.detail
    bad = verifier.verify("def add(a, b):\n    return a + b if a != 2 else 9", ref)
    assert bad.status == "incorrect" and "FAIL test_add.py::test_param[*]" in bad.detail


def test_pytest_skipped_and_zero_tests_fail(verifier):
    skip = {"format": "pytest", "files": {"test_s.py": "import pytest\n@pytest.mark.skip\ndef test_a():\n    pass\n"}}
    assert verifier.verify("x = 1", skip).status == "incorrect"
    none = {"format": "pytest", "files": {"test_n.py": "x = 1\n"}}
    assert verifier.verify("x = 1", none).status == "incorrect"
    listed = {"format": "pytest", "files": {"test_n.py": "def test_a():\n    pass\n"},
              "expected_tests": ["test_n.py::test_a", "test_n.py::test_missing"]}
    assert verifier.verify("x = 1", listed).status == "incorrect"


def test_no_code_and_bad_reference(verifier):
    assert verifier.verify("I don't know.", ADD_TESTS).status == "no_answer"
    broken = verifier.verify("x = 1", {"format": "assert", "tests": "assert (("})
    assert broken.status == "error" and broken.reward is None
    unknown = verifier.verify("x = 1", {"format": "nope"})
    assert unknown.status == "error" and unknown.reward is None


def test_sandbox_failure_is_error():
    v = UnitTestVerifier(sandbox={"isolation": "bwrap", "bwrap_path": "/nonexistent"})
    verdict = v.verify("def add(a, b):\n    return a + b", ADD_TESTS)
    assert verdict.status == "error" and verdict.reward is None and "bwrap" in verdict.detail


def test_registry_and_batch():
    v = get_verifier("code", reward="fraction", test_timeout_s=2)
    refs = [ADD_TESTS] * 4
    responses = ["def add(a, b): return a + b", "def add(a, b): return a - b", "nothing here.",
                 "def add(a, b): return 5"]
    verdicts = v.verify_batch(list(zip(responses, refs, strict=True)), workers=2)
    assert [x.status for x in verdicts] == ["correct", "incorrect", "no_answer", "incorrect"]
    assert v.check({**ADD_TESTS, "solution": "def add(a, b):\n    return a + b"}).status == "correct"
    v.close()


def test_deterministic(verifier):
    first = verifier.verify("def add(a, b):\n    return a * b", ADD_TESTS)
    second = verifier.verify("def add(a, b):\n    return a * b", ADD_TESTS)
    assert (first.status, first.reward, first.detail) == (second.status, second.reward, second.detail)


def test_pytest_missing_in_the_sandbox_is_an_error_verdict():
    """`No module named pytest` is the grader's fault: error (reward None), never a 0 for the candidate."""
    box = LocalSandbox(pool_size=0)  # no python_path: the sandbox's Python alone
    if box.run([box.python, "-c", "import pytest"], timeout_s=30).ok:
        pytest.skip(f"{box.python} has pytest itself")
    config = CodeConfig()
    spec = as_test_spec({"format": "pytest", "files": {"test_sq.py": "from solution import square\n\n"
                                                                   "def test_sq():\n    assert square(3) == 9\n"}})
    with pytest.raises(SandboxFailure, match="pytest cannot be imported in the sandbox"):
        run_pytest(spec, "def square(x):\n    return x * x\n", config, box, Clock(30))


@pytest.mark.skipif(importlib.util.find_spec("e2b") is not None, reason="e2b installed")
def test_e2b_backend_without_the_extra_fails_at_start_up():
    from rlvr.verifiers.code import UnitTestVerifier

    with pytest.raises(MissingExtraError, match=r"rlvr\[e2b\]"):
        UnitTestVerifier(provider="e2b")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_assert_program_has_the_per_test_limit_not_the_overall_one():
    from rlvr.verifiers.code import UnitTestVerifier

    with UnitTestVerifier(test_timeout_s=1.0, timeout_s=30.0) as verifier:
        verifier.verify("def f():\n    return 1\n", {"format": "assert", "tests": "assert f() == 1"})  # warm-up
        start = time.monotonic()
        verdict = verifier.verify("while True:\n    pass\n", {"format": "assert", "tests": "assert f() == 1"})
    assert verdict.status == "timeout"
    assert time.monotonic() - start < 15  # would be ~30 s with the overall limit
