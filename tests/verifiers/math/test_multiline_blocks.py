r"""A math block opened after an answer marker and closed lines later is read whole (found by Math-Verify's suite).

`Final answer: \(` then `9` then `\)` was read as the text `\(` (incorrect against gold 9): `\[ ... \]` and
`$$ ... $$` blocks already ran on to their close, the inline `\( ... \)` did not. The block is one answer:
its value is checked like any other, and a wrong or second value in it is still caught.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("inline-block-over-lines", "9", "The answer is \\(\n9\n\\)", "correct"),
    Case("inline-block-after-marker", "9", "Final answer: \\(\n 9\n\\).", "correct"),
    Case("inline-block-spaced", "9", "Answer \\( \n 9 \n \\)", "correct"),
    Case("inline-block-on-next-line", r"\frac{1}{2}", "Final answer:\n\\(\n\\frac{1}{2}\n\\)", "correct"),
    Case("inline-block-wrong-value", "9", "The answer is \\(\n8\n\\)", "incorrect"),
    Case("inline-block-two-values", "9", "The answer is \\(\n8 \\text{ or } 9\n\\)", "incorrect"),
    Case("inline-block-equation-result", "9", "Final answer: \\(\nx = 9\n\\)", "correct"),
    Case("inline-block-never-closed", "9", "Final answer: \\(\n8", "incorrect"),
    Case("display-block-still-read", "9", "Final answer:\n\\[\n9\n\\]", "correct"),
    Case("dollar-block-still-read", "9", "Final answer: $$\n9\n$$", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_multiline_blocks(case: Case) -> None:
    assert_case(case)
