"""Minus look-alikes before a number keep the sign, also in the last-number fallback (red team M14)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

_MINUS_LIKE = {"hyphen": "\u2010", "nb-hyphen": "\u2011", "superscript-minus": "\u207b", "subscript-minus": "\u208b",
               "modifier-minus": "\u02d7", "heavy-minus": "\u2796", "hyphen-bullet": "\u2043", "minus-sign": "\u2212",
               "en-dash": "\u2013"}

CASES = [Case(f"fallback-{name}", "3", f"So x = {ch}3 in the end", "incorrect") for name, ch in _MINUS_LIKE.items()]
CASES += [Case(f"fallback-{name}-right", "-3", f"So x = {ch}3 in the end", "correct")
          for name, ch in _MINUS_LIKE.items()]
CASES += [Case(f"boxed-{name}", "3", f"\\boxed{{{ch}3}}", "incorrect") for name, ch in _MINUS_LIKE.items()]
CASES += [
    Case("superscript-exponent-kept", r"10^{-3}", "The answer is 10\u207b\u00b3.", "correct"),
    Case("hyphenated-word-not-minus", "3", "The well\u2010known answer is 3.", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_minus_signs(case: Case) -> None:
    assert_case(case)
