"""`IntegerAnswer`: a correct verdict only for an answer written as an integer (rlvr.verifiers.wrappers)."""

from __future__ import annotations

import pytest

from rlvr.verifiers.registry import get_verifier
from rlvr.verifiers.wrappers import IntegerAnswer, is_integer_literal


@pytest.mark.parametrize(("text", "expected"), [
    ("287663", True), ("-42", True), ("+7", True), ("1,024", True), ("287\\,663", True), ("1{,}234", True),
    ("$42$", True), (" 42 ", True), ("838 * 948 - 425", False), ("2^{10}", False), ("12,34", False),
    ("4.0", False), ("\\frac{84}{2}", False), ("", False), (None, False), ("42 apples", False),
])
def test_integer_literals(text: str | None, expected: bool) -> None:
    assert is_integer_literal(text) is expected


@pytest.mark.parametrize("scoring", ["inline", "process"])
def test_only_the_written_value_is_correct(scoring: str) -> None:
    verifier = IntegerAnswer(get_verifier("math", scoring=scoring))
    try:
        assert verifier.verify("The final answer is \\boxed{287663}.", "287663").status == "correct"
        restated = verifier.verify("The final answer is \\boxed{347 * 829}.", "287663")
        assert restated.status == "incorrect" and restated.reward == 0.0 and restated.components["correct"] == 0.0
        assert "not written as an integer" in restated.detail
        assert get_verifier("math", scoring="inline").verify("\\boxed{347 * 829}", "287663").status == "correct"
        wrong = verifier.verify("\\boxed{287664}", "287663")
        assert wrong.status == "incorrect" and "not written as an integer" not in wrong.detail
        assert verifier.verify("no idea", "287663").status == "no_answer"
        assert verifier.reference_response("287663") == "287663"
    finally:
        verifier.close()
