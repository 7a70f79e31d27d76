"""One choice or none: hedged multiple-choice answers are incorrect (issue 20, case 3), and other hedges."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("two-choices-boxed", "B", r"\boxed{(B) (C)}", "incorrect"),
    Case("two-choices-answer-colon", "B", "Answer: (B) (D)", "incorrect"),
    Case("all-choices-boxed", "A", r"\boxed{(A B C D)}", "incorrect"),
    Case("choices-or", "B", r"\boxed{B \text{ or } C}", "incorrect"),
    Case("choices-comma", "B", r"\boxed{B, C}", "incorrect"),
    Case("choices-two-boxes", "B", r"So it is \boxed{B} or \boxed{C}.", "incorrect"),
    Case("choices-glued", "C", r"\boxed{(A)(B)(C)(D)}", "incorrect"),
    Case("choices-and-text", "B", r"\boxed{\text{B and D}}", "incorrect"),
    Case("choices-slash", "B", r"\boxed{B/C}", "incorrect"),
    Case("choices-answer-is-or", "B", "The answer is (B) or (C).", "incorrect"),
    Case("choices-letters-run", "D", r"\boxed{ABCD}", "incorrect"),
    Case("choice-paren", "B", r"\boxed{(B)}", "correct"),
    Case("choice-text", "B", r"\boxed{\text{(B)}}", "correct"),
    Case("choice-bare", "B", r"\boxed{B}", "correct"),
    Case("choice-lowercase", "B", r"\boxed{b}", "correct"),
    Case("choice-with-value", "B", r"\boxed{(B)\ 12}", "correct"),
    Case("choice-answer-is", "C", "The answer is (C).", "correct"),
    Case("choice-wrong", "B", r"\boxed{(C)}", "incorrect"),
    Case("value-hedge-two-boxes", "3", r"It is \boxed{3} or \boxed{5}.", "incorrect"),
    Case("value-hedge-or", "3", r"\boxed{3 \text{ or } 5}", "incorrect"),
    Case("value-hedge-pm", "3", r"\boxed{\pm 3}", "incorrect"),
    Case("value-hedge-list", "7", r"\boxed{5, 6, 7, 8}", "incorrect"),
    Case("value-hedge-in-text", "5", r"\boxed{5\text{ or 7}}", "incorrect"),
    Case("box-then-final-answer-line", "203", "$\\boxed{204}$\n\nFinal Answer: 203", "incorrect"),
    Case("box-then-gsm8k-marker", "203", "$\\boxed{204}$\n#### 203", "incorrect"),
    Case("box-then-same-final-answer", "203", "$\\boxed{203}$\n\nFinal Answer: 203", "correct"),
    Case("quoted-gold-box-after", "203", "$\\boxed{204}$ (a grader expecting `\\boxed{203}` should accept this)",
         "incorrect"),
    Case("quoted-gold-box-in-quotes", "203", 'So \\boxed{204}. Some would write "\\boxed{203}".', "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_multiple_choice(case: Case) -> None:
    assert_case(case)
