r"""Struck-out text is withdrawn: "The answer is ~~5~~." states no answer (red team, second pass).

Markdown `~~5~~`, HTML `<del>`, `<s>`, `<strike>` and LaTeX `\sout`, `\st`, `\cancel`, `\xcancel`
are read as hidden pieces (`rlvr.verifiers.math.visible`): a struck value is not the answer, the
value written after it is, and a struck box that differs from the visible one is a hedge.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("markdown-strike", "5", "The answer is ~~5~~.", "incorrect"),
    Case("html-del", "5", "The answer is <del>5</del>.", "incorrect"),
    Case("html-strike", "5", "The answer is <strike>5</strike>.", "incorrect"),
    Case("latex-sout", "5", r"The answer is $\sout{5}$.", "incorrect"),
    Case("struck-then-other", "5", "The answer is ~~5~~ 3.", "incorrect"),
    Case("struck-box-hedge", "5", r"~~\boxed{3}~~ \boxed{5}", "incorrect"),
    # controls
    Case("correction-after-strike", "3", "The answer is ~~5~~ 3.", "correct"),
    Case("correction-after-del", "3", "The answer is <del>5</del> 3.", "correct"),
    Case("cancelled-factors", "5", r"$\frac{\cancel{2}\cdot 5}{\cancel{2}} = 5$. So \boxed{5}", "correct"),
    Case("tilde-fence", "5", "~~~\ncode\n~~~\n\\boxed{5}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_struck_out(case: Case) -> None:
    assert_case(case)
