r"""A number that words make an operand is not the answer: "half of 5" is not 5 (red team, second pass).

"The answer is half of 5", "the square of 5", "5 less than x", "5 times the radius" used to be read
as 5: the phrase path and the last-number fallback took the last number of the sentence whatever
surrounded it. Such a number (`OPERATED_BEFORE_RE`, `OPERATED_AFTER_RE` in `words`) is no answer now.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("half-of", "5", "The answer is half of 5.", "incorrect"),
    Case("square-of", "5", "The answer is the square of 5.", "incorrect"),
    Case("reciprocal-of", "5", "The answer is the reciprocal of 5.", "incorrect"),
    Case("negative-of", "5", "The answer is the negative of 5.", "incorrect"),
    Case("less-than-variable", "5", "The answer is 5 less than x.", "incorrect"),
    Case("more-than-count", "5", "The answer is 5 more than the number of cats.", "incorrect"),
    Case("times-the-radius", "5", "The answer is 5 times the radius.", "incorrect"),
    Case("last-number-twice", "5", "So the total is twice 5", "incorrect"),
    # controls
    Case("times-as-a-count", "5", "The answer is 5 times.", "correct"),
    Case("number-then-noun", "14", "The answer is 14 apples.", "correct"),
    Case("half-computed", "2.5", "Half of 5 is 2.5, so the answer is 2.5.", "correct"),
    Case("less-than-before-the-value", "4", "It must be less than 5, so the answer is 4.", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_operand_words(case: Case) -> None:
    assert_case(case)
