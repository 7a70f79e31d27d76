"""Realistic answer forms are read (issue 20, case 7): repeating decimals, number words, plain-text functions."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("repeating-third", r"\frac13", r"\boxed{0.\overline{3}}", "correct"),
    Case("repeating-sixth", r"\frac16", r"\boxed{0.1\overline{6}}", "correct"),
    Case("repeating-seventh", r"\frac17", r"\boxed{0.\overline{142857}}", "correct"),
    Case("repeating-dot", r"\frac23", r"\boxed{0.\dot{6}}", "correct"),
    Case("repeating-whole-part", r"\frac{4}{3}", r"\boxed{1.\overline{3}}", "correct"),
    Case("repeating-wrong", r"\frac13", r"\boxed{0.\overline{6}}", "incorrect"),
    Case("truncated-not-repeating", r"\frac13", r"\boxed{0.3}", "incorrect"),
    Case("word-five", "5", "The answer is five.", "correct"),
    Case("word-twenty-one", "21", r"\boxed{\text{twenty-one}}", "correct"),
    Case("word-hundreds", "206", "The answer is two hundred and six.", "correct"),
    Case("word-negative", "-3", "The answer is negative three.", "correct"),
    Case("word-wrong", "6", "The answer is five.", "incorrect"),
    Case("word-million-decimal", "2500000", "The answer is 2.5 million.", "correct"),
    Case("word-million-decimal-wrong", "2.5", "The answer is 2.5 million.", "incorrect"),
    Case("euler-identity", "-1", r"\boxed{e^{i\pi}}", "correct"),
    Case("euler-identity-wrong", "1", r"\boxed{e^{i\pi}}", "incorrect"),
    Case("plain-sqrt", r"\frac{\sqrt{2}}{2}", "The answer is sqrt(2)/2", "correct"),
    Case("plain-sqrt-wrong", r"\frac{\sqrt{3}}{2}", "The answer is sqrt(2)/2", "incorrect"),
    Case("plain-exp", "e^3-1", "The answer is exp(3) - 1", "correct"),
    Case("plain-exp-wrong", "e^3+1", "The answer is exp(3) - 1", "incorrect"),
    Case("plain-pi", r"\frac{\pi}{4}", "The answer is pi/4", "correct"),
    Case("plain-pi-wrong", r"\frac{\pi}{3}", "The answer is pi/4", "incorrect"),
    Case("plain-times-sqrt", r"2\sqrt{3}", "The answer is 2*sqrt(3).", "correct"),
    Case("plain-log", r"\ln 2", r"\boxed{log(2)}", "correct"),
    Case("plain-pi-times", r"3\pi", "Answer: 3pi", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_realistic_forms(case: Case) -> None:
    assert_case(case)
