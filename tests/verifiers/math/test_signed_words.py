r"""A sign before a number word is kept: `-three` is -3 (red team M9)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("dash-three", "3", "Final answer: -three", "incorrect"),
    Case("dash-three-right", "-3", "Final answer: -three", "correct"),
    Case("dash-text-nineteen", "19", r"\boxed{-\text{nineteen}}", "incorrect"),
    Case("dash-text-nineteen-right", "-19", r"\boxed{-\text{nineteen}}", "correct"),
    Case("dash-twenty-one", "21", "Final answer: -twenty-one", "incorrect"),
    Case("dash-twenty-one-right", "-21", "Final answer: -twenty-one", "correct"),
    Case("unicode-minus-three", "3", "Final answer: \u2212three", "incorrect"),
    Case("plain-three", "3", "Final answer: three", "correct"),
    Case("hyphenated-plain", "21", "Final answer: twenty-one", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_signed_words(case: Case) -> None:
    assert_case(case)
