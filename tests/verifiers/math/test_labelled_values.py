"""Labels bind values: pairs in any order, a swapped or renamed value is wrong (issue 20, case 2)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("swapped-values", "x=1, y=2", r"\boxed{x=2, y=1}", "incorrect"),
    Case("swapped-values-ab", "a=3, b=2", r"\boxed{a=2, b=3}", "incorrect"),
    Case("other-name", "x=3", r"\boxed{y=3}", "incorrect"),
    Case("other-name-t", "x=3", r"\boxed{t = 3}", "incorrect"),
    Case("other-name-single-gold-letter", "a=5", r"The answer is $b = 5$.", "incorrect"),
    Case("pairs-reordered", "x=1, y=2", r"\boxed{y=2, x=1}", "correct"),
    Case("pairs-same-order", "x=1, y=2", r"\boxed{x = 1,\ y = 2}", "correct"),
    Case("pairs-as-tuple-assignment", "x=1, y=2", r"\boxed{(x, y) = (1, 2)}", "correct"),
    Case("tuple-assignment-swapped", "x=1, y=2", r"\boxed{(x, y) = (2, 1)}", "incorrect"),
    Case("tuple-assignment-gold", "(p,q)=(3,2)", r"\boxed{p=3, q=2}", "correct"),
    Case("tuple-assignment-gold-swapped", "(p,q)=(3,2)", r"\boxed{q=3, p=2}", "incorrect"),
    # Labelled gold, bare values: which value is which name is not stated (red team M5, `test_labelled_tuples.py`).
    Case("bare-values-gold-order", "x=1, y=2", r"\boxed{1, 2}", "incorrect"),
    Case("bare-values-reversed", "x=1, y=2", r"\boxed{2, 1}", "incorrect"),
    Case("same-label-value", "x=3", r"\boxed{x = 3}", "correct"),
    Case("label-dropped", "x=3", r"\boxed{3}", "correct"),
    Case("gold-bare-pred-labelled", "3", r"\boxed{y=3}", "correct"),
    Case("roots-of-one-variable", "x=1, x=-3", r"\boxed{x=-3, x=1}", "correct"),
    Case("roots-one-wrong", "x=1, x=-3", r"\boxed{x=-3, x=2}", "incorrect"),
    Case("extra-label", "m=4, n=7", r"\boxed{m=4, n=7, k=1}", "incorrect"),
    Case("missing-label", "x=2, y=5", r"\boxed{x=2}", "incorrect"),
    Case("both-assignments-hedged", "x=1, y=2", r"\boxed{x=1, y=2, x=2, y=1}", "incorrect"),
    Case("subscript-labels", "a_1=2, a_2=5", r"\boxed{a_{2}=5, a_{1}=2}", "correct"),
    Case("subscript-labels-swapped", "a_1=2, a_2=5", r"\boxed{a_1=5, a_2=2}", "incorrect"),
    Case("line-equation-same", "y=2x+3", r"\boxed{y = 3 + 2x}", "correct"),
    Case("line-equation-solved-for-x", "y=2x+3", r"\boxed{x = \frac{y-3}{2}}", "correct"),
    Case("line-equation-other", "y=2x+3", r"\boxed{y = 2x+4}", "incorrect"),
    Case("chain-label", "x=11", r"\boxed{x = 5 + 6 = 11}", "correct"),
    Case("chain-label-wrong", "x=11", r"\boxed{x = 5 + 6 = 12}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_labelled_values(case: Case) -> None:
    assert_case(case)
