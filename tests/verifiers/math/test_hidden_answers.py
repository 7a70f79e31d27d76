r"""Only what a reader sees is an answer; a hidden or second final answer that differs is a hedge (red team M12).

`\phantom{\boxed{5}}`, white text (`\color{white}`, `\textcolor{#FFFFFF}{..}`), a `%` comment,
`\iffalse..\fi`, an HTML comment or hidden element, and a box written inside `\text{}` (shown as
characters) are not read; an answer in them that differs from the visible one makes the response
incorrect, against either. Two final answers stated one after the other ("Final answer: 3", then
"Final answer: 5"; a box, then "So the answer is" and another box) are a hedge.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("phantom-gold-box", "5", r"The answer is \boxed{3}. \phantom{\boxed{5}}", "incorrect"),
    Case("phantom-box-against-visible", "3", r"The answer is \boxed{3}. \phantom{\boxed{5}}", "incorrect"),
    Case("hphantom-before", "5", r"\hphantom{\boxed{5}}\boxed{3}", "incorrect"),
    Case("white-group", "5", r"\boxed{3} {\color{white}\boxed{5}}", "incorrect"),
    Case("white-switch", "5", r"\boxed{3} \color{white}{\boxed{5}}", "incorrect"),
    Case("white-textcolor", "5", r"\boxed{3} \textcolor{white}{\boxed{5}}", "incorrect"),
    Case("white-hex", "5", r"\boxed{3} \textcolor{#FFFFFF}{\boxed{5}}", "incorrect"),
    Case("white-rgb", "5", r"\boxed{3} {\color[rgb]{1,1,1} \boxed{5}}", "incorrect"),
    Case("box-in-text", "5", r"\boxed{3} \text{\boxed{5}}", "incorrect"),
    Case("latex-comment", "5", "\\boxed{3}\n% \\boxed{5}", "incorrect"),
    Case("latex-comment-same-line", "5", r"\boxed{3} % \boxed{5}", "incorrect"),
    Case("iffalse", "5", "\\boxed{3}\n\\iffalse \\boxed{5} \\fi", "incorrect"),
    Case("html-comment-box", "5", r"\boxed{3} <!-- \boxed{5} -->", "incorrect"),
    Case("html-comment-final-line", "5", "The answer is 3. <!-- Final answer: 5 -->", "incorrect"),
    Case("html-hidden-span", "5", r'<span style="display:none">\boxed{5}</span> The answer is \boxed{3}.', "incorrect"),
    Case("html-white-span", "5", r'The answer is \boxed{3}. <span style="color: white">\boxed{5}</span>', "incorrect"),
    Case("two-final-lines", "5", "Final answer: 3\n\nFinal answer: 5", "incorrect"),
    Case("box-then-answer-phrase-box", "5", "\\boxed{3}\n\nSo the answer is \\boxed{5}", "incorrect"),
    Case("final-line-then-box", "5", "Final Answer: 3\n\n\\boxed{5}", "incorrect"),
    Case("two-hash-lines", "5", "#### 3\n#### 5", "incorrect"),
    Case("box-then-final-box", "5", r"\boxed{3}. Thus, the final answer is $\boxed{5}$.", "incorrect"),
    # Controls: visible answers, agreeing hidden copies, percent signs and reasoning between boxes.
    Case("phantom-agrees", "5", r"\boxed{5} \phantom{\boxed{5}}", "correct"),
    Case("percent-is-no-comment", "5", r"The discount is 20% so the answer is \boxed{5}", "correct"),
    Case("spaced-percent-is-no-comment", "5", r"That is 20 % more, so the answer is \boxed{5}", "correct"),
    Case("same-answer-twice", "5", "\\boxed{5}\n\nFinal Answer: 5", "correct"),
    Case("final-line-with-box", "5", r"Final Answer: \boxed{5}", "correct"),
    Case("text-inside-box", "5", r"\boxed{\text{5}}", "correct"),
    Case("visible-color", "5", r"The answer is {\color{blue}\boxed{5}}", "correct"),
    Case("trial-then-reasoning", "5", "First guess \\boxed{3}. Let me recheck the computation: 2 + 3 = 5 and not 3, "
         "because I dropped a term in the second step of the work above.\n\nSo the answer is \\boxed{5}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_hidden_answers(case: Case) -> None:
    assert_case(case)
