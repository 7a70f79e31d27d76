"""Unicode minus signs read as minus on every path (issue 20, case 4); Unicode math forms read as math (case 7)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("minus-sign-last-number", "3", "So x = \u22123 and we are done", "incorrect"),
    Case("minus-sign-last-number-right", "-3", "So x = \u22123 and we are done", "correct"),
    Case("minus-sign-spaced", "3", "So x = \u2212 3 and we are done", "incorrect"),
    Case("ascii-minus-spaced", "3", "So x = - 3 and we are done", "incorrect"),
    Case("figure-dash-last-number", "3", "So x = \u20123 and we are done", "incorrect"),
    Case("en-dash-last-number", "3", "So x = \u20133 and we are done", "incorrect"),
    Case("minus-sign-boxed", "5", "\\boxed{\u22125}", "incorrect"),
    Case("minus-sign-boxed-right", "-5", "\\boxed{\u22125}", "correct"),
    Case("minus-sign-answer-is", "2", "The answer is \u22122.", "incorrect"),
    Case("minus-sign-answer-is-right", "-2", "The answer is \u22122.", "correct"),
    Case("minus-sign-fraction", "-\\frac{1}{2}", "\\boxed{\u2212\\frac{1}{2}}", "correct"),
    Case("minus-sign-fraction-sign", "\\frac{1}{2}", "\\boxed{\u2212\\frac{1}{2}}", "incorrect"),
    Case("minus-sign-gsm8k", "4", "#### \u22124", "incorrect"),
    Case("minus-sign-in-gold", "\u22127", "\\boxed{-7}", "correct"),
    Case("minus-sign-bold", "6", "so the result is **\u22126**", "incorrect"),
    Case("vulgar-half", "\\frac12", "The answer is \u00bd.", "correct"),
    Case("vulgar-mixed", "\\frac{11}{4}", "\\boxed{2\u00be}", "correct"),
    Case("vulgar-wrong", "\\frac13", "\\boxed{\u00bd}", "incorrect"),
    Case("superscript-square", "x^2", "The answer is x\u00b2.", "correct"),
    Case("superscript-power-of-ten", "10^6", "The answer is 10\u2076.", "correct"),
    Case("superscript-negative", "10^{-3}", "\\boxed{10\u207b\u00b3}", "correct"),
    Case("superscript-wrong", "10^6", "\\boxed{10\u2075}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_unicode(case: Case) -> None:
    assert_case(case)
