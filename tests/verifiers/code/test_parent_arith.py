"""Arithmetic around tested values runs in the parent: call-time patching and introspection cannot fake it."""

from __future__ import annotations

import shutil

import pytest

from rlvr.verifiers.code import UnitTestVerifier
from rlvr.verifiers.code.arith import TemplateRefused, evaluate_template
from rlvr.verifiers.code.rewrite import instrument, shadowed_names

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

# the first assert lets a candidate patch things on its first call, before the others run
TESTS = ("import math\nassert f(0) == 0.0\nassert abs(f(1) - 2.5) < 1e-6\nassert math.isclose(f(2), 7.25)\n"
         "assert round(f(3), 2) == 0.33\n")
GOOD = "def f(x):\n    return {0: 0.0, 1: 2.5, 2: 7.25, 3: 1 / 3}[x]\n"

EXPLOITS = {
    # reaches the grader's snapshot through the caller's frame and disables the restore of `abs`
    "frame_walk": """
import sys
p = sys._getframe(1).f_locals.get("pristine")
if p is not None:
    p.attrs["builtins"]["abs"] = lambda x: 0
    p.versions["builtins"] = None
    p.attrs["math"]["isclose"] = lambda *a, **k: True
    p.versions["math"] = None
    p.attrs["builtins"]["round"] = lambda *a: 0.33
def f(x):
    return 0.0
""",
    # patches the builtins when the tests call it, after the grader's restore
    "patch_at_call_time": """
def f(x):
    import builtins, math
    builtins.abs = lambda v: 0
    builtins.round = lambda *a: 0.33
    math.isclose = lambda *a, **k: True
    return 0.0
""",
    # finds every dict that holds the real `abs` (the snapshot) through the garbage collector
    "gc_snapshot": """
import gc, builtins
fake = lambda *a, **k: 0
for obj in gc.get_objects():
    if isinstance(obj, dict) and obj.get("abs") is abs and obj is not builtins.__dict__:
        obj["abs"] = fake
def f(x):
    import builtins, math
    builtins.abs = fake
    math.isclose = lambda *a, **k: True
    builtins.round = lambda *a: 0.33
    return 0.0
""",
    # shadows the builtins with top-level definitions next to the function under test
    "top_level_shadow": """
import math
def abs(x):
    return 0
def round(*a):
    return 0.33
math.isclose = lambda *a, **k: True
def f(x):
    return 0.0
""",
}


@pytest.fixture(scope="module")
def verifier():
    v = UnitTestVerifier()
    yield v
    v.close()


def test_honest_solution_passes(verifier):
    verdict = verifier.verify(GOOD, {"format": "assert", "tests": TESTS + "def check(c):\n    pass\n",
                                     "entry_point": "f"})
    assert verdict.status == "correct", verdict.detail


@pytest.mark.parametrize("name", sorted(EXPLOITS))
def test_exploit_is_incorrect(verifier, name):
    tests = TESTS + "def check(c):\n    pass\n"
    verdict = verifier.verify(EXPLOITS[name], {"format": "assert", "tests": tests, "entry_point": "f"})
    assert verdict.status == "incorrect" and verdict.reward == 0.0, verdict.detail


def test_constants_around_the_tested_value_stay_in_the_parent():
    code, sites = instrument(TESTS)
    assert "2.5" not in code and "7.25" not in code and "0.33" not in code and "1e-06" not in code
    assert [s.templates for s in sites] == [
        {}, {0: ("abs(__rlvr_leaf0 - 2.5)", 1)}, {0: ("math.isclose(__rlvr_leaf0, 7.25)", 1)},
        {0: ("round(__rlvr_leaf0, 2)", 1)}]


def test_names_bound_by_the_tests_or_a_task_function_stay_in_the_child(verifier):
    own = "def abs(x):\n    return -x\nassert abs(f(1)) == 2\n"  # the tests' own `abs`
    assert instrument(own)[1][0].templates == {}
    no_math = "assert math.isclose(f(1), 2.0)\n"  # `math` never imported by the tests
    assert instrument(no_math)[1][0].templates == {}
    # MBPP style (no entry point): the task's function is called `round`
    code = "def round(x, n):\n    return int(x * 10 ** n) / 10 ** n\n"
    assert shadowed_names(code) == frozenset({"round"})
    verdict = verifier.verify(code, {"format": "assert", "tests": "assert round(1.239, 2) == 1.23\n",
                                     "solution": code})  # the solution says the task asks for a `round`
    assert verdict.status == "correct", verdict.detail
    verdict = verifier.verify(code, {"format": "assert", "tests": "assert round(1.239, 2) == 1.23\n"})
    assert verdict.status == "incorrect", verdict.detail  # otherwise `round` in the tests is the builtin


@pytest.mark.parametrize(("template", "leaves"), [
    ("__rlvr_leaf0 * 3", ["x" * 400_000]),
    ("__rlvr_leaf0 ** 200000", [10 ** 50]),
    ("__rlvr_leaf0 % 1", ["%0999999999d"]),
    ("round(1.5, __rlvr_leaf0)", [10 ** 9]),
    ("__rlvr_leaf0 * __rlvr_leaf1", [1 << 60_000, 1 << 60_000]),
])
def test_templates_refuse_huge_results(template, leaves):
    with pytest.raises(TemplateRefused):
        evaluate_template(template, leaves)


def test_huge_repetition_from_the_candidate_fails_quickly(verifier):
    verdict = verifier.verify("def f(x):\n    return 'a' * 400000\n",
                              {"format": "assert", "tests": "assert f(1) * 3 == 'aaa'\n"})
    assert verdict.status == "incorrect" and "TemplateRefused" in verdict.detail, verdict.detail
