"""Magnitude words multiply and operator words are kept, never dropped as units (red team M8).

Only a whitelist of real units is stripped after a number; a magnitude word (any case, plural)
multiplies; any other word (`squared`, `factorial`, `reciprocal`) stays and the answer is not
the bare number.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

_WRONG_VS_3 = ["Million", "MILLION", "millions", "thousands", "quadrillion", "mil", "mln", "bn", "lakh", "crore",
               "tens", "hundreds", "thousandths", "hundredths", "millionths", "squared", "cubed", "factorial",
               "negative", "inverse", "reciprocal", "pi", "is wrong", "divided by three", "root", "Thousand"]

CASES = [Case(f"boxed-3-{w.replace(' ', '-')}", "3", rf"\boxed{{3 \text{{ {w}}}}}", "incorrect") for w in _WRONG_VS_3]
CASES += [
    Case("dozen-vs-count", "2", r"\boxed{2 \text{ dozen}}", "incorrect"),
    Case("dozen-value", "24", r"\boxed{2 \text{ dozen}}", "correct"),
    Case("dozen-eggs-prose", "2", "The answer is 2 dozen eggs.", "incorrect"),
    Case("dozen-eggs-prose-value", "24", "The answer is 2 dozen eggs.", "correct"),
    Case("mil-prose", "3", "The answer is 3 mil.", "incorrect"),
    Case("mil-prose-value", "3000000", "The answer is 3 mil.", "correct"),
    Case("Million-value", "3000000", r"\boxed{3 \text{ Million}}", "correct"),
    Case("millions-value", "3000000", r"\boxed{3 \text{ millions}}", "correct"),
    Case("lakh-value", "300000", r"\boxed{3 \text{ lakh}}", "correct"),
    Case("crore-value", "30000000", r"\boxed{3 \text{ crore}}", "correct"),
    Case("bn-value", "3000000000", r"\boxed{3 \text{ bn}}", "correct"),
    Case("hundredths-value", r"\frac{3}{100}", r"\boxed{3 \text{ hundredths}}", "correct"),
    Case("Billion-dollars-value", "2500000000", "The answer is 2.5 Billion dollars.", "correct"),
    Case("squared-prose", "3", "Final answer: 3 squared", "incorrect"),
    Case("nineteen-is-wrong", "19", r"\boxed{19 \text{ is wrong}}", "incorrect"),
    Case("text-second-word", "5", r"\boxed{5\text{ Friday}}", "incorrect"),
    # Real units are still stripped.
    Case("unit-cm-kept-value", "12", r"\boxed{12 \text{ cm}}", "correct"),
    Case("unit-square-meters", "12", r"\boxed{12 \text{ square meters}}", "correct"),
    Case("unit-dollars-prose", "12", "The answer is 12 dollars.", "correct"),
    Case("unit-students-prose", "30", "The answer is 30 students.", "correct"),
    Case("unit-Hours-capital", "4", r"\boxed{4 \text{ Hours}}", "correct"),
    Case("plural-noun-boxed", "12", r"\boxed{12 tomatoes}", "correct"),
    Case("plural-noun-text", "12", r"\boxed{12 \text{ tomatoes}}", "correct"),
    Case("plural-capital-kept", "5", r"\boxed{5\text{ Fridays}}", "incorrect"),
    Case("operator-plus-kept", "3", r"\boxed{3 \text{ plus}}", "incorrect"),
    # red team, second pass: plural fraction words beyond `thirds` and `quarters` multiply too
    Case("sixths-not-the-count", "5", "The answer is 5 sixths.", "incorrect"),
    Case("sixths-value", r"\frac{5}{6}", "The answer is 5 sixths.", "correct"),
    Case("eighths-value", r"\frac{3}{8}", r"\boxed{3 \text{ eighths}}", "correct"),
    Case("fifths-whole", "1", r"\boxed{5 \text{ fifths}}", "correct"),
    Case("ordinal-adjective-kept", "5", "There are 5 sixth graders.", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_magnitude_words(case: Case) -> None:
    assert_case(case)
