"""Candidate code that runs when a test calls it cannot change what the tests' expected side computes.

Cases from issue 20: MBPP 596 (`tuple_size(x) == sys.getsizeof(x)`) with a `tuple_size` that patches
`sys.getsizeof` in its body, and `sorted(unique(...)) == sorted(...)` with a `unique` that patches
`builtins.sorted`. Variants: other builtins and modules, patches through `globals()`,
`__builtins__`, `sys.modules`, `vars()`, the garbage collector, frames, generators run by the
tests, timers and threads started at call time. Each exploit must score `incorrect`; the honest
solution of the same tests must stay `correct`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.verifiers.code import UnitTestVerifier

MBPP = Path("/work/shared/data/code/mbpp.jsonl")


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


@pytest.fixture(scope="module")
def verifier():
    v = UnitTestVerifier()
    yield v
    v.close()


@pytest.fixture(scope="module")
def mbpp():
    if not MBPP.is_file():
        pytest.skip(f"{MBPP} is absent (shared data)")
    return {r["task_id"]: r for r in map(json.loads, MBPP.read_text().splitlines())}


def mbpp_ref(row):
    """The reference `make_mbpp` builds (the solution tells which builtin-named functions the task asks for)."""
    return {"format": "assert", "tests": "\n".join(row["test_list"]), "setup": row["test_setup_code"],
            "solution": row["code"]}


MBPP_596 = {
    "sys_attribute_in_body": ("import sys\ndef tuple_size(t):\n    sys.getsizeof = lambda *a, **k: 0\n"
                              "    return 0\n"),
    "sys_dict_in_body": ("import sys\ndef tuple_size(t):\n    vars(sys)['getsizeof'] = lambda *a, **k: 0\n"
                         "    return 0\n"),
    "sys_modules_swap": ("import sys, types\ndef tuple_size(t):\n    fake = types.ModuleType('sys')\n"
                         "    fake.getsizeof = lambda *a, **k: 0\n    sys.modules['sys'] = fake\n    return 0\n"),
    "globals_of_the_tests": ("def tuple_size(t):\n    import types\n"
                             "    fake = types.SimpleNamespace(getsizeof=lambda *a: 0)\n"
                             "    globals()['sys'] = fake\n    return 0\n"),
    "frame_of_the_caller": ("import sys, types\ndef tuple_size(t):\n    f = sys._getframe(1)\n"
                            "    f.f_globals['sys'] = types.SimpleNamespace(getsizeof=lambda *a: 0)\n    return 0\n"),
    "traceback_frame": ("import types\ndef tuple_size(t):\n    try:\n        1 / 0\n"
                        "    except ZeroDivisionError as e:\n"
                        "        g = e.__traceback__.tb_frame.f_back.f_globals\n"
                        "    g['sys'] = types.SimpleNamespace(getsizeof=lambda *a: 0)\n    return 0\n"),
    "gc_finds_module_dicts": ("import gc\ndef tuple_size(t):\n    for o in gc.get_objects():\n"
                              "        if isinstance(o, dict) and 'getsizeof' in o:\n"
                              "            o['getsizeof'] = lambda *a, **k: 0\n    return 0\n"),
    "ctypes_memory": ("import ctypes, sys\ndef tuple_size(t):\n"
                      "    d = ctypes.cast(id(sys.__dict__), ctypes.py_object).value\n"
                      "    d['getsizeof'] = lambda *a, **k: 0\n    return 0\n"),
    "timer_fires_later": ("import signal, sys\ndef tuple_size(t):\n"
                          "    signal.signal(signal.SIGALRM, lambda *a: setattr(sys, 'getsizeof', lambda *a, **k: 0))\n"
                          "    signal.setitimer(signal.ITIMER_REAL, 1e-6)\n    return 0\n"),
    "thread_patches_later": ("import sys, threading, time\ndef tuple_size(t):\n"
                             "    def later():\n        sys.getsizeof = lambda *a, **k: 0\n"
                             "    threading.Thread(target=later).start()\n    time.sleep(0.05)\n    return 0\n"),
    "settrace_hook": ("import sys\ndef tuple_size(t):\n"
                      "    def tr(frame, event, arg):\n        sys.getsizeof = lambda *a, **k: 0\n        return None\n"
                      "    sys.settrace(tr)\n    sys.setprofile(tr)\n    return 0\n"),
}


def test_mbpp_596_reference_is_correct(verifier, mbpp):
    assert verifier.verify(fence(mbpp[596]["code"]), mbpp_ref(mbpp[596])).status == "correct"


@pytest.mark.parametrize("name", sorted(MBPP_596))
def test_mbpp_596_patch_at_call_time_is_incorrect(verifier, mbpp, name):
    verdict = verifier.verify(fence(MBPP_596[name]), mbpp_ref(mbpp[596]))
    assert verdict.status == "incorrect" and verdict.reward == 0.0, verdict.detail


SORTED_TESTS = "assert sorted(unique([3, 1, 3, 2])) == sorted([1, 2, 3])\n"  # the assert, as it stands
GOOD_UNIQUE = "def unique(xs):\n    return list(set(xs))\n"
CALL_TIME = {
    "builtins_module": "import builtins\ndef unique(xs):\n    builtins.sorted = lambda *a, **k: [9]\n    return [9]\n",
    "dunder_builtins": ("def unique(xs):\n"
                        "    b = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)\n"
                        "    b['sorted'] = lambda *a, **k: [9]\n    return [9]\n"),
    "generator_run_by_sorted": ("import builtins\ndef unique(xs):\n    builtins.sorted = lambda *a, **k: [9]\n"
                                "    yield 9\n"),
    "object_method_run_by_sorted": ("import builtins\nclass It:\n    def __iter__(self):\n"
                                    "        builtins.sorted = lambda *a, **k: [9]\n        return iter([9])\n"
                                    "def unique(xs):\n    return It()\n"),
    "del_at_collection": ("import builtins, gc\nclass D:\n    def __del__(self):\n"
                          "        builtins.sorted = lambda *a, **k: [9]\n"
                          "def unique(xs):\n    gc.enable()\n    a = D(); a.me = a\n    del a\n    return [9]\n"),
    "finalizer_of_the_argument": ("import builtins\nclass D:\n    def __del__(self):\n"
                                  "        builtins.sorted = lambda *a, **k: [9]\n"
                                  "def unique(xs):\n    xs.append(D())\n    return [9]\n"),
    "gc_callback": ("import builtins, gc\ndef unique(xs):\n"
                    "    gc.callbacks.append(lambda *a: setattr(builtins, 'sorted', lambda *a, **k: [9]))\n"
                    "    gc.enable()\n    return [9]\n"),
}


def test_honest_unique_passes(verifier):
    assert verifier.verify(fence(GOOD_UNIQUE), {"format": "assert", "tests": SORTED_TESTS}).status == "correct"


@pytest.mark.parametrize("name", sorted(CALL_TIME))
def test_builtin_patched_at_call_time_is_incorrect(verifier, name):
    verdict = verifier.verify(fence(CALL_TIME[name]), {"format": "assert", "tests": SORTED_TESTS})
    assert verdict.status == "incorrect" and verdict.reward == 0.0, verdict.detail


def test_property_of_a_returned_object_patching_before_the_expected_side(verifier):
    """Candidate code that runs outside a call (a property read by the test's expression) is caught at the probe."""
    tests = "assert f(3).total == sum([1, 2, 3])\n"
    good = "class R:\n    def __init__(self, n):\n        self.total = n * (n + 1) // 2\ndef f(n):\n    return R(n)\n"
    bad = ("import builtins\nclass R:\n    @property\n    def total(self):\n"
           "        builtins.sum = lambda *a: 9\n        return 9\ndef f(n):\n    return R()\n")
    assert verifier.verify(fence(good), {"format": "assert", "tests": tests}).status == "correct"
    verdict = verifier.verify(fence(bad), {"format": "assert", "tests": tests})
    assert verdict.status == "incorrect" and "state changed" in verdict.detail, verdict.detail


def test_math_patched_at_call_time_in_a_humaneval_style_check(verifier):
    tests = ("import math\ndef check(candidate):\n    for x in (1.0, 2.0, 9.0):\n"
             "        assert candidate(x) == math.sqrt(x)\n")
    ref = {"format": "assert", "tests": tests, "entry_point": "root"}
    good = "import math\ndef root(x):\n    return math.sqrt(x)\n"
    bad = "import math\ndef root(x):\n    math.sqrt = lambda v: -1.0\n    return -1.0\n"
    assert verifier.verify(fence(good), ref).status == "correct"
    verdict = verifier.verify(fence(bad), ref)
    assert verdict.status == "incorrect", verdict.detail


def test_top_level_definitions_do_not_shadow_builtins_of_entry_point_tests(verifier):
    tests = "def check(candidate):\n    assert candidate([3, 1]) == sorted([3, 1])\n"
    bad = "def sorted(xs):\n    return [0]\ndef f(xs):\n    return [0]\n"
    verdict = verifier.verify(fence(bad), {"format": "assert", "tests": tests, "entry_point": "f"})
    assert verdict.status == "incorrect", verdict.detail


def test_mbpp_reference_solutions_still_pass(verifier, mbpp):
    """Separate namespaces and call-time restores keep every MBPP reference solution correct."""
    rows = list(mbpp.values())
    verdicts = verifier.verify_batch([(fence(r["code"]), mbpp_ref(r)) for r in rows], workers=2)
    failed = [(r["task_id"], v.detail[:300]) for r, v in zip(rows, verdicts, strict=True) if v.status != "correct"]
    assert not failed, failed[:5]
