r"""`==` and `===` are one equality link: `3 == 5` states the false `3 = 5`, not the value 5 (red team M10)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    # red-team cases
    Case("double-equals", "5", r"\boxed{3 == 5}", "incorrect"),
    Case("triple-equals", "5", r"\boxed{3 === 5}", "incorrect"),
    Case("double-equals-prose", "5", "The answer is 3 == 5.", "incorrect"),
    Case("double-equals-negthinspace", "5", r"\boxed{3 =\!= 5}", "incorrect"),
    # variants
    Case("double-equals-expression", "5", r"\boxed{2+2 == 5}", "incorrect"),
    Case("double-equals-chain", "7", r"\boxed{x == 3 == 7}", "incorrect"),
    # controls
    Case("double-equals-label", "5", r"\boxed{x == 5}", "correct"),
    Case("double-equals-true-chain", "5", r"\boxed{2+3 == 5}", "correct"),
    Case("single-equals-chain", "11", r"\boxed{x = 5+6 = 11}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_double_equals(case: Case) -> None:
    assert_case(case)
