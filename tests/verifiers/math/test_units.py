"""Only real units are stripped: `i` is imaginary, other letters variables, magnitudes multiply (issue 20, case 5)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("imaginary-mathrm", "5", r"\boxed{2+3\mathrm{i}}", "incorrect"),
    Case("imaginary-mathrm-right", "2+3i", r"\boxed{2+3\mathrm{i}}", "correct"),
    Case("imaginary-spaced", "4", r"\boxed{4\,\mathrm{i}}", "incorrect"),
    Case("imaginary-spaced-right", "4i", r"\boxed{4\,\mathrm{i}}", "correct"),
    Case("imaginary-text", "1", r"\boxed{1\text{i}}", "incorrect"),
    Case("variable-mathrm", "3", r"\boxed{3\mathrm{x}}", "incorrect"),
    Case("variable-mathrm-right", "3x", r"\boxed{3\mathrm{x}}", "correct"),
    Case("variable-text-n", "6", r"\boxed{6\text{n}}", "incorrect"),
    Case("million-word", "3", r"\boxed{3 \text{ million}}", "incorrect"),
    Case("million-bare", "3", "The answer is 3 million.", "incorrect"),
    Case("million-value", "3000000", "The answer is 3 million.", "correct"),
    Case("k-suffix-text", "1.5", r"\boxed{1.5\text{k}}", "incorrect"),
    Case("k-suffix-value", "1500", r"\boxed{1.5\text{k}}", "correct"),
    Case("k-suffix-bare", "12000", r"The answer is 12k.", "correct"),
    Case("k-suffix-bare-wrong", "12", r"The answer is 12k.", "incorrect"),
    Case("thousand-word", "7", r"\boxed{7\text{ thousand}}", "incorrect"),
    Case("thousand-value", "7000", "The answer is 7 thousand.", "correct"),
    Case("billion-dollars", "2", "The answer is 2 billion dollars.", "incorrect"),
    Case("billion-dollars-value", "2000000000", "The answer is 2 billion dollars.", "correct"),
    Case("million-after-fraction", r"\frac{11}{36}", r"The final answer is $\boxed{\frac{11}{36} \text{ million}}$.",
         "incorrect"),
    Case("million-after-fraction-value", r"\frac{11000000}{36}", r"\boxed{\frac{11}{36} \text{ million}}", "correct"),
    Case("unit-cm", "10", r"\boxed{10\text{ cm}}", "correct"),
    Case("unit-metre-letter", "10", r"\boxed{10\text{ m}}", "correct"),
    Case("unit-kg", "3", r"\boxed{3\,\text{kg}}", "correct"),
    Case("unit-dollars", "5", r"\boxed{5\text{ dollars}}", "correct"),
    Case("unit-square", "16", r"\boxed{16\text{ cm}^2}", "correct"),
    Case("unit-wrong-value", "10", r"\boxed{11\text{ cm}}", "incorrect"),
    # red team, second pass: units are stripped, but two stated units that differ are different quantities
    Case("unit-cm-vs-m", r"5 \text{ cm}", r"\boxed{5 \text{ m}}", "incorrect"),
    Case("unit-degrees-vs-radians", r"30^\circ", r"\boxed{30 \text{ radians}}", "incorrect"),
    Case("unit-radians-vs-degree-sign", r"2 \text{ radians}", r"\boxed{2^\circ}", "incorrect"),
    Case("unit-km-vs-miles", r"5 \text{ km}", "The answer is 5 miles.", "incorrect"),
    Case("unit-area-vs-volume", r"5 \text{ cm}^2", r"\boxed{5 \text{ cm}^3}", "incorrect"),
    Case("unit-hours-vs-minutes", "5 hours", r"\boxed{5 \text{ minutes}}", "incorrect"),
    Case("unit-percent-vs-cm", r"5\%", r"\boxed{5 \text{ cm}}", "incorrect"),
    Case("unit-dollars-vs-cents", "5 dollars", r"\boxed{5 \text{ cents}}", "incorrect"),
    Case("unit-synonym", r"5 \text{ cm}^2", r"\boxed{5 \text{ square centimeters}}", "correct"),
    Case("unit-degree-words", r"30^\circ", r"\boxed{30 \text{ degrees}}", "correct"),
    Case("unit-plural-abbreviation", "3 hours", r"\boxed{3 \text{ hrs}}", "correct"),
    Case("unit-counted-things", "12 apples", r"\boxed{12 \text{ tomatoes}}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_units(case: Case) -> None:
    assert_case(case)
