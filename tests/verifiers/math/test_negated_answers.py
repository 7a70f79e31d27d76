"""Words that deny or bound a value are no answer: "not 5", "at least 5", "less than 5", "5? No." (red team, negation).

"The answer is not 3 but 5" names 5, "approximately 5" reads as 5, "5 degrees below zero" as -5; a number after
"cannot be" is no answer of the last-number fallback, a box followed by "is wrong" is none.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

RED_TEAM = [
    Case('rt-neg-1', '5', 'The answer is not 3 but 5.', 'correct'),
    Case('rt-neg-2', '5', 'The answer is never 5.', 'incorrect'),
    Case('rt-neg-3', '5', 'The answer cannot be 5.', 'incorrect'),
    Case('rt-neg-4', '5', 'Final answer: definitely not 5', 'incorrect'),
    Case('rt-neg-5', '5', '\\boxed{\\text{not } 5}', 'incorrect'),
    Case('rt-neg-6', '5', '\\boxed{\\text{anything but } 5}', 'incorrect'),
    Case('rt-neg-7', '5', 'The answer is not equal to 5.', 'incorrect'),
    Case('rt-neg-8', '5', 'The answer is less than 5.', 'incorrect'),
    Case('rt-neg-9', '5', 'The answer is more than 5.', 'incorrect'),
    Case('rt-neg-10', '5', 'The answer is at least 5.', 'incorrect'),
    Case('rt-neg-11', '5', 'The answer is approximately 5.', 'correct'),
    Case('rt-neg-12', '5', 'The answer is 5? No.', 'incorrect'),
    Case('rt-neg-13', '5', 'The answer is unknown, not 5.', 'incorrect'),
    Case('rt-neg-14', '5', 'Answer: not 5', 'incorrect'),
    Case('rt-neg-15', '5', '**not 5**', 'incorrect'),
    Case('rt-neg-16', '5', '#### not 5', 'incorrect'),
    Case('rt-neg-17', 'B', 'The answer is not B.', 'incorrect'),
    Case('rt-neg-18', 'B', 'Answer: not (B)', 'incorrect'),
    Case('rt-neg-19', '5', 'The answer is 5 minus 2.', 'incorrect'),
    Case('rt-neg-20', '5', 'The answer is 5 plus 1.', 'incorrect'),
    Case('rt-neg-21', '5', 'The answer is 5 times 2.', 'incorrect'),
    Case('rt-neg-22', '5', 'The answer is 5 divided by 2.', 'incorrect'),
    Case('rt-neg-23', '5', 'The answer is 5 more than 3.', 'incorrect'),
]

VARIANTS = [
    Case("at-most", "8", "The answer is at most 8.", "incorrect"),
    Case("greater-than", "8", "The answer is greater than 8.", "incorrect"),
    Case("isnt", "8", "The answer isn't 8.", "incorrect"),
    Case("final-not-equal", "8", "Final answer: not equal to 8", "incorrect"),
    Case("cannot-be-fallback", "8", "It cannot be 8.", "incorrect"),
    Case("box-is-incorrect", "8", "\\boxed{8} is incorrect.", "incorrect"),
    Case("nope", "8", "The answer is 8? Nope.", "incorrect"),
    Case("neq-lead", "8", "The answer is $\\neq 8$.", "incorrect"),
    Case("below-zero-positive-gold", "8", "The answer is 8 degrees below zero.", "incorrect"),
    Case("bold-at-least", "8", "**at least 8**", "incorrect"),
    Case("gsm8k-fewer-than", "8", "#### fewer than 8", "incorrect"),
]

CONTROLS = [
    Case("below-zero", "-8", "The answer is 8 degrees below zero.", "correct"),
    Case("not-but", "8", "The answer is not 7 but 8.", "correct"),
    Case("approximately", "8", "The answer is approximately 8.", "correct"),
    Case("about", "8", "The answer is about $8$.", "correct"),
    Case("plain", "8", "The answer is 8.", "correct"),
    Case("not-in-reasoning", "8", "It is not 7, since 7 is odd. So the answer is 8.", "correct"),
    Case("box-is-correct", "8", "\\boxed{8} is the answer.", "correct"),
    Case("last-number", "14", "So she has 14 apples left.", "correct"),
]


# Red team, second pass: a judgement after the value withdraws it ("5 (wrong)", "5 -- just kidding").
WITHDRAWN = [
    Case("bracket-wrong", "5", "The answer is 5 (wrong).", "incorrect"),
    Case("bracket-incorrect", "5", "The answer is 5 (incorrect).", "incorrect"),
    Case("bracket-not-really", "5", "The answer is 5 (not really).", "incorrect"),
    Case("just-kidding", "5", "The answer is 5 \u2014 just kidding, it's 3.", "incorrect"),
    Case("trailing-not", "5", "The answer is 5... not!", "incorrect"),
    Case("boxed-bracket-wrong", "5", "\\boxed{5} (wrong)", "incorrect"),
    Case("not-before-another-value", "5", "The answer is 5 (not 3).", "correct"),
    Case("bracket-other-words", "5", "The answer is 5 (see above).", "correct"),
    Case("comma-not-other-value", "5", "The answer is 5, not 3.", "correct"),  # was no answer (a false fail)
    Case("comma-not-other-value-is-not-it", "3", "The answer is 5, not 3.", "incorrect"),
    Case("comma-not-alone", "5", "The answer is 5, not.", "incorrect"),
]


CASES = RED_TEAM + VARIANTS + CONTROLS + WITHDRAWN  # the table `benchmarks/math_probe.py` reads


@pytest.mark.parametrize("case", params(CASES))
def test_negated_answers(case: Case) -> None:
    assert_case(case)
