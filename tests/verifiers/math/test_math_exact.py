"""Exactness cases: no tolerance between distinct exact numbers, and empty answers are no answer."""

import pytest

from rlvr import MathVerifier

CASES = [
    ("big-int-plus-one", "100000000000000000001", r"\boxed{100000000000000000000}", "incorrect"),
    ("power-plus-one", "2^{100}", r"\boxed{2^{100}+1}", "incorrect"),
    ("power-of-ten-plus-one", "10^{30}", r"\boxed{10^{30}+1}", "incorrect"),
    ("ten-digit-off-by-one", "1234567890", r"\boxed{1234567891}", "incorrect"),
    ("power-equal", "2^{10}", r"\boxed{1024}", "correct"),
    ("fraction-of-powers", r"\frac{2^{20}}{4}", r"\boxed{262144}", "correct"),
    ("factorial-ratio", r"\frac{1}{100!}", r"\boxed{\frac{1}{99!}}", "incorrect"),
    ("empty-box", "3", r"\boxed{}", "no_answer"),
    ("empty-box-space", "3", r"\boxed{ }", "no_answer"),
    ("thousands", "1000", r"\boxed{1,000}", "correct"),
    ("decimal-point-not-thousands", "1000", r"\boxed{1.000}", "incorrect"),
    ("rounded-two-thirds", r"\frac{2}{3}", r"\boxed{0.67}", "incorrect"),
    ("late-correction", "10", "The answer is 10.\n\nWait, it is 12. Final answer: 12", "incorrect"),
]


@pytest.fixture(scope="module")
def verifier():
    return MathVerifier(scoring="inline")


@pytest.mark.parametrize(("gold", "response", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_exact(verifier, gold, response, expected):
    verdict = verifier.verify(response, gold)
    assert verdict.status == expected, verdict.detail


@pytest.mark.parametrize("reference", [None, ["1"], {"answer": "1"}, True], ids=["none", "list", "dict", "bool"])
def test_unusable_reference_is_error_not_zero(verifier, reference):
    verdict = verifier.verify(r"\boxed{1}", reference)
    assert verdict.status == "error" and verdict.reward is None
    assert "reference" in verdict.detail


def test_numeric_reference_and_none_response(verifier):
    assert verifier.verify(r"\boxed{42}", 42).status == "correct"
    assert verifier.verify(r"\boxed{3.5}", 3.5).status == "correct"
    assert verifier.verify(None, "7").status == "no_answer"
    assert verifier.verify(7, "7").status == "error"
