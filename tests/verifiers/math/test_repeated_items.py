r"""A bare gold list that repeats a value counts it: gold `2, 2, 3` is not `2, 3` (red team, second pass).

Lists were compared as sets, so a gold listing a root with its multiplicity (or the sides of an
isosceles triangle) accepted the list without the repeat, or with another value repeated. A gold
without repeats still accepts a prediction that repeats one of its values, and a gold written as a
set (`\{2, 2, 3\}`) is a set.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("repeat-dropped", "2, 2, 3", r"\boxed{2, 3}", "incorrect"),
    Case("other-value-repeated", "2, 2, 3", r"\boxed{2, 3, 3}", "incorrect"),
    Case("repeat-dropped-as-set", "2, 2, 3", r"\boxed{\{2, 3\}}", "incorrect"),
    Case("pair-of-equal-values", "1, 1", r"\boxed{1}", "incorrect"),
    Case("sides-of-a-triangle", "5, 5, 8", r"The sides are \boxed{5, 8, 8}.", "incorrect"),
    # controls
    Case("same-multiset-reordered", "2, 2, 3", r"\boxed{3, 2, 2}", "correct"),
    Case("same-multiset-other-form", "2, 2, 3", r"\boxed{2, \frac{4}{2}, 3}", "correct"),
    Case("gold-set-with-repeat", r"\{2, 2, 3\}", r"\boxed{\{2, 3\}}", "correct"),
    Case("prediction-repeats", "2, 3", r"\boxed{2, 3, 3}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_repeated_items(case: Case) -> None:
    assert_case(case)
