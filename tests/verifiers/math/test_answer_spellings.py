r"""Spellings of one answer: `\approx 5`, `oo` for infinity, LaTeX grouping braces (issue 31 item 8).

`\boxed{\approx 5}` (also `≈`, `\sim`, "approximately") is 5, and a short rounding after it stays wrong against an
exact gold (the decimal rule); `oo` is sympy's infinity; braces without a backslash are grouping, shown as
nothing, so `{2,5}` is the list `2, 5` (not the set `\{2,5\}`: against a tuple gold it is read in order).
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("approx-box", "5", r"\boxed{\approx 5}", "correct"),
    Case("approx-box-glued", "5", r"\boxed{\approx5}", "correct"),
    Case("approx-unicode", "5", r"\boxed{≈ 5}", "correct"),
    Case("sim", "5", r"\boxed{\sim 5}", "correct"),
    Case("approximately-words", "5", "The answer is approximately 5.", "correct"),
    Case("approx-answer-phrase", "5", r"The answer is \approx 5.", "correct"),
    Case("approx-short-rounding", r"\frac{1}{3}", r"\boxed{\approx 0.33}", "incorrect"),
    Case("approx-other-value", "5", r"\boxed{\approx 6}", "incorrect"),
    Case("oo-infinity", r"\infty", r"\boxed{oo}", "correct"),
    Case("oo-negative-infinity", r"-\infty", r"\boxed{-oo}", "correct"),
    Case("oo-interval", r"(-\infty, 3]", r"\boxed{(-oo, 3]}", "correct"),
    Case("oo-sign", r"\infty", r"\boxed{-oo}", "incorrect"),
    Case("one-o-is-no-infinity", r"\infty", r"\boxed{o}", "incorrect"),
    Case("grouping-tuple-gold", "(2,5)", r"\boxed{{2,5}}", "correct"),
    Case("grouping-tuple-gold-reversed", "(2,5)", r"\boxed{{5,2}}", "incorrect"),
    Case("grouping-set-gold", r"\{2,5\}", r"\boxed{{5,2}}", "correct"),
    Case("grouping-list-gold", "2,5", r"\boxed{{2,5}}", "correct"),
    Case("grouping-nested", "(2,5)", r"\boxed{{{2,5}}}", "correct"),
    Case("grouping-not-a-value", "(2,5)", r"\boxed{{2,6}}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_answer_spellings(case: Case) -> None:
    assert_case(case)
