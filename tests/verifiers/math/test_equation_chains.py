r"""An equation chain is an answer only when it is true; then its final value is compared (red team M6).

`x = 3 = 5`, `2+2=5` and `3 = 4` are false, so no side of them is an answer, whatever the gold.
Each link is checked, except one with a name on a side (`AB = BC = 5`) or whose left side is the
first and holds a variable (`|r-s| = 16` states a value). A link that cannot be shown (`x = 2y = 5`)
makes the chain false; an approximation must be written `\approx`, not `=`.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("label-false-chain-last", "5", r"\boxed{x = 3 = 5}", "incorrect"),
    Case("label-false-chain-middle", "3", r"\boxed{x = 3 = 5}", "incorrect"),
    Case("false-sum-right", "5", r"\boxed{2+2=5}", "incorrect"),
    Case("false-sum-left", "4", r"\boxed{2+2=5}", "incorrect"),
    Case("false-numbers-right", "4", r"\boxed{3 = 4}", "incorrect"),
    Case("false-numbers-left", "3", r"\boxed{3 = 4}", "incorrect"),
    Case("inequation-left", "5", r"\boxed{5 \ne 3}", "incorrect"),
    Case("inequation-right", "3", r"\boxed{5 \ne 3}", "incorrect"),
    Case("labelled-gold-false-chain", "x=5", r"\boxed{x = 3 = 5}", "incorrect"),
    Case("unshown-link", "5", r"\boxed{x = 2y = 5}", "incorrect"),
    Case("false-expression-link", "7", r"\boxed{a+b = 3+5 = 7}", "incorrect"),
    Case("false-item-in-list", "5, 4", r"\boxed{x = 5, 3 = 4}", "incorrect"),
    Case("false-chain-hashes", "5", "#### 2+2 = 5", "incorrect"),
    Case("false-chain-answer-line", "5", "The answer is $x = 4 = 5$.", "incorrect"),
    Case("approximation-as-equals", r"\sqrt{2}", r"\boxed{x = \sqrt{2} = 1.414}", "incorrect"),
    # True chains state their final value.
    Case("true-chain", "11", r"\boxed{x = 5 + 6 = 11}", "correct"),
    Case("true-closed-chain", "6", r"\boxed{2+2+2=6}", "correct"),
    Case("true-long-chain", "5", r"\boxed{f(-1) = (-1-1)^2 + 1 = 4 + 1 = 5}", "correct"),
    Case("two-names-one-value", "5", r"\boxed{AB = BC = 5}", "correct"),
    Case("expression-in-variables", "16", r"\boxed{|r-s| = 16}", "correct"),
    Case("expression-then-true-link", "7", r"\boxed{a+b = 3+4 = 7}", "correct"),
    Case("fraction-chain", r"\frac{1}{2}", r"\boxed{P = \frac{3}{6} = \frac{1}{2}}", "correct"),
    Case("approximation-marked", r"\sqrt{2}", r"\boxed{x = \sqrt{2} \approx 1.414}", "correct"),
    Case("equation-gold", "4x-5y=-50", r"\boxed{4x - 5y = -50}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_equation_chains(case: Case) -> None:
    assert_case(case)
