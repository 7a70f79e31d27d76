"""Red-team findings C1/C3: which candidate names the assert tests see (no `entry_point`).

C1: a candidate's top-level definition named like a builtin (`def sum`, `class list`) must not
change what the tests' expected side computes; only the functions the task asks for (names the
tests use that are not builtins, plus builtin-named ones the reference `solution` or `functions`
names, MBPP 126 `sum`) come from the candidate. Names the trusted tests/setup define stay theirs.
C3: without an entry point the names the tests use that `solution` defines are the task's
functions and come from the candidate (MBPP 367/601 `Node`/`Pair`); `helpers` pins a trusted one.
Each test runs the real sandbox.
"""

from __future__ import annotations

import pytest

from rlvr.verifiers.code import UnitTestVerifier
from rlvr.verifiers.code.rewrite import candidate_names

# (wrong candidate, tests): every candidate defines a builtin so that the expected side would agree.
SHADOWING = {
    "sorted": ("def sorted(*a, **k): return 0\ndef f(x): return 0", "assert f([3, 1, 2]) == sorted([3, 1, 2])"),
    "sum": ("def sum(*a): return 0\ndef f(n): return 0", "assert f(3) == sum([1, 2, 3])"),
    "range": ("def range(*a): return [0]\ndef f(n): return 0", "assert f(3) == sum(range(4))"),
    "set": ("def set(*a): return 1\ndef f(x): return [0]", "assert set(f(2)) == set([4, 5])"),
    "str": ("def str(x): return 'abc'\ndef f(x): return 0", "assert str(f(2)) == str(4)"),
    "abs": ("def abs(x): return 0\ndef f(x): return 7", "assert abs(f(2) - 4.0) < 1e-6"),
    "len": ("def len(x): return 3\ndef f(x): return []", "assert len(f(3)) == 3"),
    "isinstance": ("def isinstance(*a): return True\ndef f(n): return 'x'", "assert isinstance(f(3), int)"),
    "max": ("max = lambda *a: 0\ndef f(x): return 0", "assert f([4, 9]) == max([4, 9])"),
    "round": ("def round(*a): return 0\ndef f(x): return 0", "assert f(2.5) == round(2.5 * 3)"),
    "class-list": ("class list:\n    def __init__(self, *a): pass\n    def __eq__(self, o): return True\n"
                   "def f(x): return 0", "assert list(f(3)) == list(range(3))"),
    "class-tuple-import": ("from collections import Counter as tuple\ndef f(x): return [1]",
                           "assert tuple(f(2)) == tuple([2, 2])"),
    "sorted-in-loop": ("def sorted(*a, **k): return 0\ndef f(x): return 0",
                       "for xs in ([3, 1], [2, 5]):\n    assert f(xs) == sorted(xs)"),
}


@pytest.fixture(scope="module")
def verifier():
    v = UnitTestVerifier(test_timeout_s=3, timeout_s=6, sandbox={"pool_size": 1})
    yield v
    v.close()


@pytest.mark.parametrize("name", sorted(SHADOWING))
def test_candidate_builtin_names_do_not_reach_the_expected_side(verifier, name):
    code, tests = SHADOWING[name]
    verdict = verifier.verify(code, {"format": "assert", "tests": tests})
    assert verdict.status == "incorrect", verdict.detail
    # a solution that does not define the builtin does not make it the candidate's either
    verdict = verifier.verify(code, {"format": "assert", "tests": tests, "solution": "def f(x):\n    return 1\n"})
    assert verdict.status == "incorrect", verdict.detail


def test_the_same_tests_pass_an_honest_candidate(verifier):
    code = "def f(x):\n    return sorted(x)\n"
    assert verifier.verify(code, {"format": "assert", "tests": SHADOWING["sorted"][1]}).status == "correct"
    helper = "def sorted(*a, **k): return 0\ndef f(x):\n    return __builtins__['sorted'](x) " \
             "if isinstance(__builtins__, dict) else __builtins__.sorted(x)\n"
    assert verifier.verify(helper, {"format": "assert", "tests": SHADOWING["sorted"][1]}).status == "correct"


def test_a_builtin_named_task_function_comes_from_the_candidate_when_the_solution_defines_it(verifier):
    solution = "def sum(a, b):\n    return a + b + 1\n"
    ref = {"format": "assert", "tests": "assert sum(2, 3) == 6", "solution": solution}
    assert verifier.verify(solution, ref).status == "correct"
    assert verifier.verify("def sum(a, b):\n    return 0\n", ref).status == "incorrect"
    # the builtin the solution does not define stays the builtin
    ref = {"format": "assert", "tests": "assert sum(2, 3) == len([1, 2, 3, 4, 5, 6])", "solution": solution}
    assert verifier.verify(solution + "def len(x):\n    return 0\n", ref).status == "correct"
    assert verifier.verify("def sum(a, b):\n    return 0\ndef len(x):\n    return 0\n", ref).status == "incorrect"


def test_names_defined_by_setup_or_tests_stay_trusted(verifier):
    setup = "def expected(n):\n    return n * n\nlimit = 10\n"
    ref = {"format": "assert", "setup": setup, "tests": "assert f(3) == expected(3)\nassert f(3) < limit"}
    bad = "def expected(n):\n    return 0\nlimit = 0\ndef f(n):\n    return 0\n"
    assert verifier.verify(bad, ref).status == "incorrect"
    assert verifier.verify("def f(n):\n    return n * n\n", ref).status == "correct"
    # a name the tests bind themselves, conditionally, after a first use
    tests = "if True:\n    want = 6\nassert f(3) == want\n"
    assert verifier.verify("want = 0\ndef f(n):\n    return 0\n", {"format": "assert", "tests": tests}).status \
        == "incorrect"


def test_candidate_names_rule():
    names, taken, _refs = candidate_names(("assert f(x) == sorted(g(x))\nx = 1\n", "import math\n"), None, None,
                                   frozenset({"sorted", "sum"}))
    assert names == frozenset({"f", "g"}) and taken == frozenset()
    names, taken, _refs = candidate_names(("assert sum(1, 2) == sorted([3])",), "def sum(a, b): ...", None,
                                   frozenset({"sorted", "sum"}))
    assert names == frozenset({"sum"}) and taken == frozenset({"sum"})
    # with an entry point the solution's definitions do not make builtins the candidate's
    names, taken, _refs = candidate_names(("def check(c):\n    assert c(1) == sum([1])",), "def sum(a): ...", "sum",
                                   frozenset({"sorted", "sum"}))
    assert "sum" in names and taken == frozenset()
    names, taken, _refs = candidate_names(("assert sum(1) == 1",), None, None, frozenset({"sum"}), ("sum",))
    assert taken == frozenset({"sum"})


def test_solution_helpers_used_by_mbpp_shaped_tests_are_the_candidates(verifier):
    """C3: without an entry point the tests' names that `solution` defines are the task's functions."""
    ref = {"format": "assert", "tests": "assert f(2) == helper(2)",
           "solution": "def helper(x): return x * x\ndef f(x): return helper(x)"}
    assert verifier.verify("def helper(x): return 0\ndef f(x): return 0", ref).status == "correct"
    # a trusted helper is pinned with `helpers` (or an entry point takes it from the solution)
    pinned = {**ref, "helpers": "def helper(x): return x * x"}
    assert verifier.verify("def helper(x): return 0\ndef f(x): return 0", pinned).status == "incorrect"
    assert verifier.verify("def f(x): return x * x", pinned).status == "correct"


# A module name the tests use without importing it, bound by the candidate to a function that carries
# the module's attributes (a function was let through as a possible task function named like a module).
MODULE_LIKE = {
    "def-math": ("def math(): pass\nmath.isclose = lambda *a, **k: True\ndef area(r): return 1.0",
                 "assert math.isclose(area(2), 12.566, rel_tol=0.01)"),
    "def-sys": ("def sys(): pass\nsys.getsizeof = lambda *a: 0\ndef tuple_size(t): return 0",
                "assert tuple_size((1, 2)) == sys.getsizeof((1, 2))"),
    "lambda-math": ("math = lambda: 0\nmath.sqrt = lambda x: 3\ndef f(x): return 3", "assert f(16) == math.sqrt(16)"),
}


@pytest.mark.parametrize("name", sorted(MODULE_LIKE))
def test_module_names_the_tests_use_are_the_modules(verifier, name):
    code, tests = MODULE_LIKE[name]
    verdict = verifier.verify(code, {"format": "assert", "tests": tests})
    assert verdict.status == "incorrect", verdict.detail


def test_honest_module_users_and_module_named_task_functions_still_pass(verifier):
    code = "import sys\ndef tuple_size(t):\n    return sys.getsizeof(t)\n"
    assert verifier.verify(code, {"format": "assert", "tests": MODULE_LIKE["def-sys"][1]}).status == "correct"
    # a task function named like a module, called by the tests (never used as a module there)
    copy = "def copy(xs):\n    return list(xs)\n"
    assert verifier.verify(copy, {"format": "assert", "tests": "import copy as c\nassert copy([1]) == [1]"}) \
        .status == "correct"
