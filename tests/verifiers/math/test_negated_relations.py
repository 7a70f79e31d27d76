r"""`\not` negates the relation after it: `x \not= 5` states x is not 5 (red team, second pass).

The `=` after `\not` used to be read as an equation, so `\boxed{x \not= 5}` scored 5 and
`x \not\in (1,2)` scored the interval. `\not=` and `\centernot=` read as `\neq`, `\not\in` as `\notin`.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("not-equals", "5", r"\boxed{x \not= 5}", "incorrect"),
    Case("not-equals-bare", "5", r"\boxed{\not= 5}", "incorrect"),
    Case("not-space-equals", "5", r"\boxed{x \not = 5}", "incorrect"),
    Case("not-negative-space-equals", "5", r"\boxed{x \not\!= 5}", "incorrect"),
    Case("centernot-equals", "5", r"\boxed{x \centernot= 5}", "incorrect"),
    Case("not-equals-between-values", "5", r"\boxed{3 \not= 5}", "incorrect"),
    Case("not-in-interval", "(1,2)", r"\boxed{x \not\in (1,2)}", "incorrect"),
    Case("not-in-set", r"\{1, 2\}", r"\boxed{x \not\in \{1, 2\}}", "incorrect"),
    # controls: the negated form is its own answer; the plain relations keep their reading
    Case("not-equals-is-neq", r"x \neq 5", r"\boxed{x \not= 5}", "correct"),
    Case("in-interval", "(1,2)", r"\boxed{x \in (1,2)}", "correct"),
    Case("equals", "5", r"\boxed{x = 5}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_negated_relations(case: Case) -> None:
    assert_case(case)
