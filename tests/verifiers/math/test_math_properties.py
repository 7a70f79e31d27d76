"""Property tests (hypothesis): total on arbitrary text, reflexive on generated answers, invariances."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.core.types import Verdict
from rlvr.verifiers.math import MathConfig, MathVerifier

VERIFIER = MathVerifier(MathConfig(scoring="inline"))
BOUNDED = settings(max_examples=100, deadline=None)

integers = st.integers(min_value=-10**12, max_value=10**12).map(str)
decimals = st.decimals(min_value=-10**6, max_value=10**6, places=3, allow_nan=False, allow_infinity=False).map(str)
fractions = st.fractions(min_value=-1000, max_value=1000, max_denominator=1000).map(
    lambda f: f"\\frac{{{f.numerator}}}{{{f.denominator}}}" if f.denominator != 1 else str(f.numerator)
)
variables = st.sampled_from(["x", "y", "n", "a"])
expressions = st.builds(
    lambda a, v, b, op: f"{a}{v}{op}{b}", st.integers(1, 50), variables, st.integers(0, 50), st.sampled_from(["+", "-"])
) | st.builds(lambda v, k: f"\\sqrt{{{v}}}+{k}", variables, st.integers(1, 9)) | st.builds(
    lambda a, b: f"\\frac{{{a}}}{{{b}}}\\pi", st.integers(1, 20), st.integers(2, 20)
)
answers = integers | decimals | fractions | expressions


@BOUNDED
@given(st.text(max_size=300), st.text(max_size=60))
def test_never_raises_on_arbitrary_text(response: str, reference: str) -> None:
    v = VERIFIER.verify(response, reference)
    assert isinstance(v, Verdict)
    assert v.status != "error" or not reference.strip()
    if v.reward is not None:
        assert 0.0 <= v.reward <= 1.0


@BOUNDED
@given(st.text(alphabet=st.sampled_from(list("\\{}()[]$^_=,.0123456789+-*/ boxedfrac#%:")), max_size=120))
def test_never_raises_on_latex_like_noise(text: str) -> None:
    v = VERIFIER.verify(text, "1")
    assert v.status in ("correct", "incorrect", "no_answer")


@BOUNDED
@given(answers)
def test_reflexive(answer: str) -> None:
    v = VERIFIER.verify(f"\\boxed{{{answer}}}", answer)
    assert v.status == "correct", v.detail


@BOUNDED
@given(answers, st.sampled_from(["", " ", "  ", "\n"]), st.sampled_from(["", " ", "\t"]))
def test_whitespace_and_boxed_invariance(answer: str, before: str, after: str) -> None:
    plain = VERIFIER.verify(f"The final answer is {answer}", answer).status
    assert VERIFIER.verify(f"{before}\\boxed{{{before}{answer}{after}}}{after}", answer).status == plain == "correct"
    assert VERIFIER.verify(f"$\\boxed{{{answer}}}$", f" {answer} ").status == "correct"


@BOUNDED
@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=64), st.integers(1, 1000))
def test_distinct_numbers_are_incorrect(value: Fraction, shift: int) -> None:
    other = value + Fraction(shift, 7)
    v = VERIFIER.verify(f"\\boxed{{{float(other)!r}}}", f"\\frac{{{value.numerator}}}{{{value.denominator}}}")
    assert v.status == "incorrect", v.detail


@BOUNDED
@given(st.integers(-10**6, 10**6))
def test_gsm8k_marker_and_decimal_forms(n: int) -> None:
    assert VERIFIER.verify(f"so the total is {n}.\n#### {n}.00", str(n)).status == "correct"
    assert VERIFIER.verify(f"#### {n + 1}", str(n)).status == "incorrect"
