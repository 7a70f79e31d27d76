r"""An operator glued outside the box changes the value the response shows: the box is not its answer (issue 31).

`-\boxed{5}` shows -5, `\frac{1}{\boxed{5}}` shows 1/5, `\boxed{5}^2` shows 25 (`outside.glued_operator`). Such a
response is incorrect whatever the gold, even when the shown value equals it (`-\boxed{5}` for gold -5: the box
must hold the answer). Lists, labels, units, degree signs, punctuation, markdown bullets, formatting commands
and a unary plus around a box leave it alone; a percent sign after the box belongs to the answer.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

from rlvr.verifiers.math import MathConfig
from rlvr.verifiers.math.score import score_math

CASES = [
    # before the box: a sign, an operand and an operator, a relation, a function or constant
    Case("minus", "5", r"-\boxed{5}", "incorrect"),
    Case("minus-in-math", "5", r"$-\boxed{5}$", "incorrect"),
    Case("minus-in-sentence", "5", r"The answer is $-\boxed{5}$.", "incorrect"),
    Case("minus-after-label", "5", r"x=-\boxed{5}", "incorrect"),
    Case("minus-in-display", "5", r"\[ -\boxed{5} \]", "incorrect"),
    Case("minus-before-math", "5", r"-$\boxed{5}$", "incorrect"),
    Case("minus-before-currency", "5", r"-\$\boxed{5}", "incorrect"),
    Case("minus-before-bold-command", "5", r"-\mathbf{\boxed{5}}", "incorrect"),
    Case("minus-shows-gold", "-5", r"-\boxed{5}", "incorrect"),
    Case("minus-answer-tag", "5", r"<answer>-\boxed{5}</answer>", "incorrect"),
    Case("minus-final-answer-line", "5", "We are done.\n\nFinal Answer: $-\\boxed{5}$", "incorrect"),
    Case("plus-minus", "5", r"\pm\boxed{5}", "incorrect"),
    Case("difference", "5", r"1-\boxed{5}", "incorrect"),
    Case("sum", "5", r"1 + \boxed{5}", "incorrect"),
    Case("product-times", "5", r"2 \times \boxed{5}", "incorrect"),
    Case("product-digit", "5", r"2\boxed{5}", "incorrect"),
    Case("decimal-point", "5", r"0.\boxed{5}", "incorrect"),
    Case("constant-before", "5", r"\pi\boxed{5}", "incorrect"),
    Case("less-than", "5", r"x < \boxed{5}", "incorrect"),
    Case("greater-than", "5", r"x > \boxed{5}", "incorrect"),
    Case("leq", "5", r"x \le \boxed{5}", "incorrect"),
    Case("geq", "5", r"x \geq \boxed{5}", "incorrect"),
    # the box as an argument
    Case("reciprocal", "5", r"\frac{1}{\boxed{5}}", "incorrect"),
    Case("reciprocal-shows-gold", r"\frac{1}{5}", r"\frac{1}{\boxed{5}}", "incorrect"),
    Case("numerator", "5", r"\frac{\boxed{5}}{1}", "incorrect"),
    Case("square-root", "5", r"\sqrt{\boxed{5}}", "incorrect"),
    Case("cube-root", "5", r"\sqrt[3]{\boxed{5}}", "incorrect"),
    Case("exponent", "5", r"e^{\boxed{5}}", "incorrect"),
    Case("exponent-bare", "5", r"10^\boxed{5}", "incorrect"),
    Case("log-base", "5", r"\log_{\boxed{5}} 5", "incorrect"),
    Case("overline", "5", r"\overline{\boxed{5}}", "incorrect"),
    Case("repeating-dot", "3", r"0.\dot{\boxed{3}}", "incorrect"),
    Case("absolute-value", "5", r"|\boxed{-5}|", "incorrect"),
    Case("absolute-value-left-right", "5", r"\left|\boxed{-5}\right|", "incorrect"),
    Case("floor", "5", r"\lfloor \boxed{5.5} \rfloor", "incorrect"),
    # after the box
    Case("square", "5", r"\boxed{5}^2", "incorrect"),
    Case("square-braced", "5", r"\boxed{5}^{2}", "incorrect"),
    Case("square-shows-gold", "25", r"\boxed{5}^2", "incorrect"),
    Case("square-of-parenthesis", "5", r"(\boxed{5})^2", "incorrect"),
    Case("square-of-left-right", "5", r"\left(\boxed{5}\right)^2", "incorrect"),
    Case("factorial", "5", r"\boxed{5}!", "incorrect"),
    Case("prime", "5", r"\boxed{5}'", "incorrect"),
    Case("base-subscript", "5", r"\boxed{5}_{8}", "incorrect"),
    Case("base-subscript-bare", "5", r"\boxed{5}_8", "incorrect"),
    Case("more-digits", "5", r"\boxed{5}.5", "incorrect"),
    Case("digit-glued", "5", r"\boxed{5}0", "incorrect"),
    Case("variable-glued", "5", r"\boxed{5}x", "incorrect"),
    Case("constant-after", "5", r"\boxed{5}\pi", "incorrect"),
    Case("product-after", "5", r"\boxed{5}\cdot 2", "incorrect"),
    Case("times-after", "5", r"\boxed{5} \times 3", "incorrect"),
    Case("minus-term-after", "5", r"\boxed{5} - 1", "incorrect"),
    Case("plus-term-after", "5", r"\boxed{5}+1", "incorrect"),
    Case("applied-to-parenthesis", "5", r"\boxed{5}(x+1)", "incorrect"),
    Case("bound-after", "5", r"\boxed{5} < x", "incorrect"),
    Case("boxes-summed", "2,3", r"\boxed{2}+\boxed{3}", "incorrect"),
    # controls: what stands around a box without changing it
    Case("unary-plus", "5", r"+\boxed{5}", "correct"),
    Case("exclamation-after-math", "5", r"$\boxed{5}$!", "correct"),
    Case("percent-after", "5", r"\boxed{5}\%", "correct"),
    Case("percent-after-math", "5", r"$\boxed{5}$%", "correct"),
    Case("percent-gold-percent", r"50\%", r"\boxed{50}\%", "correct"),
    Case("sentence", "5", r"The answer is $\boxed{5}$.", "correct"),
    Case("label", "5", r"x = \boxed{5}", "correct"),
    Case("equation-before", "5", r"2+3=\boxed{5}", "correct"),
    Case("equation-after", "5", r"\boxed{5} = x", "correct"),
    Case("markdown-bullet", "5", r"- \boxed{5}", "correct"),
    Case("markdown-bullet-math", "5", r"- $\boxed{5}$", "correct"),
    Case("markdown-star-bullet", "5", r"* \boxed{5}", "correct"),
    Case("numbered-item", "5", r"2. \boxed{5}", "correct"),
    Case("period", "5", r"\boxed{5}.", "correct"),
    Case("clause-after", "5", r"\boxed{5}, which is the answer.", "correct"),
    Case("prose-dash-after", "5", r"\boxed{5} - the answer", "correct"),
    Case("parenthesis", "5", r"(\boxed{5})", "correct"),
    Case("bold-command", "5", r"\mathbf{\boxed{5}}", "correct"),
    Case("colour", "5", r"\textcolor{red}{\boxed{5}}", "correct"),
    Case("grouping-braces", "5", r"{\boxed{5}}", "correct"),
    Case("smash", "5", r"\smash{\boxed{5}}", "correct"),
    Case("answer-tag", "5", r"<answer>\boxed{5}</answer>", "correct"),
    Case("arrow", "5", r"Therefore => \boxed{5}", "correct"),
    Case("latex-arrow", "5", r"Therefore $\Rightarrow \boxed{5}$", "correct"),
    Case("therefore", "5", r"\therefore \boxed{5}", "correct"),
    Case("degree-sign", "5", r"\boxed{5}^\circ", "correct"),
    Case("degree-sign-braced", "5", r"\boxed{5}^{\circ}", "correct"),
    Case("unit-text", "5", r"\boxed{5}\text{ cm}", "correct"),
    Case("unit-word", "5", r"\boxed{5} cm", "correct"),
    Case("unit-spaced-squared", "5", r"\boxed{5}\,\text{cm}^2", "correct"),
    Case("modulus", "5", r"\boxed{5} \pmod{7}", "correct"),
    Case("bold-markdown", "5", r"**\boxed{5}**", "correct"),
    Case("currency", "5", r"\$\boxed{5}", "correct"),
    Case("answer-colon", "5", r"Answer: \boxed{5}", "correct"),
    Case("parenthetical-after", "5", r"\boxed{5} (5 apples)", "correct"),
    Case("semicolon-after", "5", r"\boxed{5}; done", "correct"),
    Case("line-break-after", "5", r"\boxed{5}\\", "correct"),
    Case("quad-text-after", "5", r"\boxed{5}\quad\text{(answer)}", "correct"),
    Case("display", "5", r"\[\boxed{5}\]", "correct"),
    Case("text-after-math", "5", r"\(\boxed{5}\)^2", "correct"),
    Case("list-of-boxes", "2,3", r"\boxed{2}, \boxed{3}", "correct"),
    Case("boxes-and", "2,3", r"\boxed{2} and \boxed{3}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_glued_operators(case: Case) -> None:
    assert_case(case)


@pytest.mark.parametrize(("percent", "gold", "expected"), [
    ("strip", "5", "correct"), ("strict", "5", "incorrect"), ("strict", r"5\%", "correct"),
    ("fraction", "0.05", "correct"), ("fraction", "5", "incorrect"),
])
def test_a_percent_sign_after_the_box_belongs_to_the_answer(percent: str, gold: str, expected: str) -> None:
    """`\\boxed{5}\\%` is `5\\%`, compared under `MathConfig.percent` like `\\boxed{5\\%}`."""
    config = MathConfig(scoring="inline", percent=percent)
    for response in (r"\boxed{5}\%", r"\boxed{5\%}", r"$\boxed{5}$ percent"):
        verdict = score_math(config, response, gold)
        assert (verdict.status == "correct") == (expected == "correct"), (response, verdict.detail)


def test_the_verdict_names_the_operator() -> None:
    verdict = score_math(MathConfig(scoring="inline"), r"So $x = -\boxed{5}$.", "5")
    assert verdict.status == "incorrect" and verdict.reward == 0.0
    assert "'-'" in verdict.detail and verdict.extracted == "5"
