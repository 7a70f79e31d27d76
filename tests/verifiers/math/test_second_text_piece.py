r"""A second `\text{}`/`\mathrm{}`/`\textbf{}` piece is an answer, not a unit: hedges stay hedges (red team M3, M13)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("text-two-choices", "B", r"\boxed{\text{(B)}\text{(C)}}", "incorrect"),
    Case("text-two-choices-second", "C", r"\boxed{\text{(B)}\text{(C)}}", "incorrect"),
    Case("mathrm-two-choices", "B", r"\boxed{\mathrm{(B)}\ \mathrm{(C)}}", "incorrect"),
    Case("textbf-two-choices", "B", r"\boxed{\textbf{(B)}\textbf{(C)}}", "incorrect"),
    Case("text-or-choices", "B", r"\boxed{\text{(B)} \text{ or } \text{(C)}}", "incorrect"),
    Case("bare-then-text-choice", "B", r"\boxed{(B)\text{ (C)}}", "incorrect"),
    Case("yes-no", r"\text{Yes}", r"\boxed{\text{Yes}\text{ No}}", "incorrect"),
    Case("two-days", r"\text{Friday}", r"\boxed{\text{Friday}\text{ Saturday}}", "incorrect"),
    Case("two-days-or", r"\text{Friday}", r"\boxed{\text{Friday}\text{ or Saturday}}", "incorrect"),
    Case("number-then-day", "5", r"\boxed{5\text{ Friday}}", "incorrect"),
    Case("one-choice", "B", r"\boxed{\text{(B)}}", "correct"),
    Case("one-day", r"\text{Friday}", r"\boxed{\text{Friday}}", "correct"),
    Case("number-then-unit", "5", r"\boxed{5\text{ meters}}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_second_text_piece(case: Case) -> None:
    assert_case(case)
