r"""Numbers with a base subscript compare by value when both sides have one (`101_2` is 5, never `101_3`).

The grammar reads `1202_7` as the digits 1202 whatever the base, so two different bases with the
same digits compared equal. A side without a subscript keeps that digit reading (`1202_7` against
`1202`: the model left the base out); a digit the base does not have (`41121_3`) equals nothing.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("same-digits-other-base", "101_2", r"\boxed{101_3}", "incorrect"),
    Case("same-digits-base-ten", "1202_7", r"\boxed{1202_{10}}", "incorrect"),
    Case("invalid-digit", "41121_3", r"\boxed{41121_3}", "correct"),  # written alike: string equality
    Case("invalid-digit-other", "1112112_3", r"\boxed{41121_3}", "incorrect"),
    Case("same-value-other-base", "101_2", r"\boxed{5_{10}}", "correct"),
    Case("braced-base", "1202_7", r"\boxed{1202_{7}}", "correct"),
    Case("base-left-out", "1202_7", r"\boxed{1202}", "correct"),
    Case("other-digits", "1202_7", r"\boxed{1200_7}", "incorrect"),
    # issue 31: digits after a point (`0.101_{2}` is 5/8), letters as digits, a letter with an index is a variable
    Case("fraction-digits-same-value", r"0.101_{2}", r"\boxed{0.22_4}", "correct"),
    Case("fraction-digits-other-value", r"0.101_{2}", r"\boxed{0.11_2}", "incorrect"),
    Case("fraction-digits-decimal-reading", r"0.101_{2}", r"\boxed{0.101}", "correct"),
    Case("fraction-digits-not-the-value", r"0.101_{2}", r"\boxed{\frac{5}{8}}", "incorrect"),
    Case("value-not-fraction-digits", r"\frac{5}{8}", r"\boxed{0.101_2}", "incorrect"),
    Case("hex-letters", r"1A_{16}", r"\boxed{11010_2}", "correct"),
    Case("hex-letters-decimal", r"1A_{16}", r"\boxed{26}", "incorrect"),
    Case("indexed-variable", "a_2", r"\boxed{a_{2}}", "correct"),
    Case("indexed-variable-other-index", "a_2", r"\boxed{a_{3}}", "incorrect"),
    # red team, second pass: `1_000` is Python's digit grouping of 1000, not 1 with a subscript
    Case("underscore-grouping-not-one", "1", r"\boxed{1_000}", "incorrect"),
    Case("underscore-grouping-value", "1000", r"\boxed{1_000}", "correct"),
    Case("underscore-grouping-million", "1000000", "The answer is 1_000_000.", "correct"),
    Case("underscore-grouping-not-twelve", "12", r"\boxed{12_345}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_base_subscripts(case: Case) -> None:
    assert_case(case)
