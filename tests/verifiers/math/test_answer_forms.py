"""Answer forms the math verifier reads: sentence tails after a marker, bold, parentheticals, units, LaTeX
thousands separators, alternative boxes in a reference, `<answer>` tags, Chinese markers, choice letters,
empty sets, ratios vs clock times. Each case stands for its kind, with variants (found by a new-user review)."""

from __future__ import annotations

import pytest

from rlvr.verifiers.math import MathConfig, MathVerifier
from rlvr.verifiers.math.extract import ALTERNATIVE_SEP, extract_answer, extract_reference

INLINE = MathConfig(scoring="inline")


def status(response: str, reference: str, config: MathConfig = INLINE) -> str:
    return MathVerifier(config).verify(response, reference).status


def param(response: str, reference: str, expected: str, id: str) -> object:
    return pytest.param(response, reference, expected, id=id)


CASES = [
    # 1. after a marker, the first complete answer expression, not the sentence's last number
    param("The answer is 18 because 9 eggs sell for $2 each.", "18", "correct", "marker-because"),
    param("The answer is 18 because 9 eggs sell for $2 each.", "2", "incorrect", "marker-because-exploit"),
    param("Final answer: 18 dollars, since 16-3-4 = 9.", "18", "correct", "final-answer-since"),
    param("#### 18 dollars since 9*2", "18", "correct", "gsm8k-since"),
    param("the answer is 7, which is the sum of 3 and 4.", "4", "incorrect", "marker-which-exploit"),
    param("the answer is 7, which is the sum of 3 and 4.", "7", "correct", "marker-which"),
    param("The answer is 18 and the eggs cost $2 each.", "2", "incorrect", "marker-and-the-exploit"),
    param("Answer: The total is 18 dollars because 9 eggs cost $2 each.", "18", "correct", "marker-sentence-because"),
    param("The answer is 3 and -4", "3,-4", "correct", "marker-and-list-kept"),
    param("The answer, which we computed above, is 7.", "7", "correct", "marker-which-before-answer"),
    # 2. bold followed by a period
    param("The answer is **7**.", "7", "correct", "answer-is-bold-period"),
    param("Final answer: **7**.", "7", "correct", "final-answer-bold-period"),
    param("**Answer:** **\\(42\\)**.", "42", "correct", "answer-bold-math-period"),
    # 3. trailing parenthetical
    param("The answer is 7 (since 3 + 4 = 7).", "7", "correct", "parenthetical-since"),
    param("Answer: 18 (9 eggs x $2)", "18", "correct", "parenthetical-words"),
    param("The answer is: $(2, 4)$ (the point P).", "(2,4)", "correct", "parenthetical-after-tuple"),
    param("Answer: $\\frac{1}{2} (\\sqrt{3}+1)$", "\\frac{\\sqrt3+1}{2}", "correct", "parenthetical-math-kept"),
    # 4. a single letter after a number is a variable, not a unit
    param("\\boxed{5 i}", "5", "incorrect", "unit-not-i"),
    param("\\boxed{5 x}", "5", "incorrect", "unit-not-x"),
    param("\\boxed{5 e}", "5", "incorrect", "unit-not-e"),
    param("\\boxed{2n}", "$2 n$", "correct", "gold-2n-kept"),
    param("\\boxed{2}", "$2 n$", "incorrect", "gold-2n-not-2"),
    param("\\boxed{5 ab}", "5", "incorrect", "unit-not-two-letter-variable"),
    param("\\boxed{4\\pi \\text{ cm}^2}", "4\\pi", "correct", "unit-text-after-pi"),
    param("\\boxed{4\\pi}", "4\\pi \\mbox{ cm}^2", "correct", "unit-mbox-gold"),
    param("\\boxed{3\\sqrt{2} \\text{ units}}", "3\\sqrt2", "correct", "unit-text-after-sqrt"),
    param("\\boxed{5 \\text{ m}}", "5", "correct", "unit-text-single-letter"),
    param("\\boxed{12 tomatoes}", "12", "correct", "unit-noun"),
    param("\\boxed{5 cm}", "5", "correct", "unit-cm"),
    # 5. LaTeX thousands separators in the last-number fallback
    param("She earns \\$32,\\!348 in total.", "32348", "correct", "fallback-comma-bang"),
    param("Total: $1{,}234.", "1234", "correct", "fallback-brace-comma"),
    param("Total: $1{,}234{,}567$ dollars.", "1234567", "correct", "fallback-brace-comma-millions"),
    param("The total is 1\\,234 apples.", "1234", "correct", "fallback-thin-space"),
    # 6. alternative boxes in a reference solution
    param("\\boxed{\\frac{639}{40}}", "so $\\boxed{15\\frac{39}{40}},$ or $\\boxed{\\frac{639}{40}}$", "correct",
          "gold-alternatives-second"),
    param("\\boxed{15\\frac{39}{40}}", "so $\\boxed{15\\frac{39}{40}},$ or $\\boxed{\\frac{639}{40}}$", "correct",
          "gold-alternatives-first"),
    param("\\boxed{16}", "so $\\boxed{15\\frac{39}{40}},$ or $\\boxed{\\frac{639}{40}}$", "incorrect",
          "gold-alternatives-wrong"),
    param("\\boxed{\\frac12}", "We get $\\boxed{50\\%}$, equivalently $\\boxed{\\frac{1}{2}}$", "correct",
          "gold-alternatives-equivalently"),
    param("\\boxed{0.5}", "We get \\boxed{\\frac{1}{2}}, i.e. \\boxed{0.5}", "correct", "gold-alternatives-ie"),
    param("\\boxed{2}", "So \\boxed{2} and \\boxed{3}", "incorrect", "gold-multipart-and-kept"),
    param("\\boxed{2, 3}", "So \\boxed{2} and \\boxed{3}", "correct", "gold-multipart-and-list"),
    # 7. <answer> tags
    param("<answer>7</answer>\nLet me double check: 3 + 5 = 8.", "7", "correct", "answer-tag-then-text"),
    param("<answer>\\boxed{7}</answer>", "7", "correct", "answer-tag-boxed"),
    param("<think>3 + 5 = 8</think>\n<answer>The answer is 7</answer>", "7", "correct", "answer-tag-marker"),
    param("<answer>\n$x = 7$\n</answer>", "7", "correct", "answer-tag-multiline"),
    # 8. Chinese markers
    param("答案是 7", "7", "correct", "zh-answer-is"),
    param("答案：7", "7", "correct", "zh-answer-colon"),
    param("最终答案是 \\boxed{7}", "7", "correct", "zh-final-boxed"),
    param("所以答案是 $\\frac{1}{2}$。", "0.5", "correct", "zh-answer-fraction"),
    param("答案为 7", "7", "correct", "zh-answer-wei"),
    # 9. multiple-choice letters in any case
    param("Answer: b", "B", "correct", "choice-lowercase"),
    param("Answer: (b)", "B", "correct", "choice-lowercase-paren"),
    param("Answer: c", "B", "incorrect", "choice-lowercase-wrong"),
    param("\\boxed{\\text{evelyn}}", "Evelyn", "correct", "text-case-kept"),
    # 10. empty sets, matrix plus zero
    param("\\boxed{\\varnothing}", "\\emptyset", "correct", "emptyset-varnothing"),
    param("\\boxed{\\{\\}}", "\\emptyset", "correct", "emptyset-braces"),
    param("\\boxed{\\O}", "\\varnothing", "correct", "emptyset-O"),
    param("\\boxed{\\{0\\}}", "\\emptyset", "incorrect", "emptyset-not-zero-set"),
    param("\\boxed{\\Omega}", "\\O", "incorrect", "emptyset-not-omega"),
    param("\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix} + 0}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "correct",
          "matrix-plus-zero"),
    param("\\boxed{0 + \\begin{pmatrix}1\\\\2\\end{pmatrix}}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "correct",
          "matrix-zero-plus"),
    # 11. ratios vs clock times
    param("\\boxed{2:60}", "1:30", "incorrect", "time-not-ratio"),
    param("\\boxed{01:30}", "1:30", "correct", "time-leading-zero"),
    param("\\boxed{2:4}", "1:2", "correct", "ratio-as-quotient"),
    param("\\boxed{1:2}", "\\frac12", "correct", "ratio-vs-fraction-gold"),
    param("\\boxed{3:5}", "6:10", "incorrect", "ratio-with-two-digit-second-part-reads-as-time"),
]


@pytest.mark.parametrize(("response", "reference", "expected"), CASES)
def test_answer_form_verdict(response: str, reference: str, expected: str) -> None:
    assert status(response, reference) == expected


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        pytest.param("<answer>7</answer>", "7", id="tag-no-fallback"),
        pytest.param("<answer>7</answer>\nLet me double check: 3 + 5 = 8.", "7", id="tag-then-text-no-fallback"),
        pytest.param("<answer>\\boxed{7}</answer>", "7", id="tag-boxed-no-fallback"),
        pytest.param("答案是 7", "7", id="zh-no-fallback"),
        pytest.param("The answer is 7 (since 3 + 4 = 7).", "7", id="parenthetical-no-fallback"),
    ],
)
def test_extract_without_fallback(response: str, answer: str) -> None:
    found = extract_answer(response, last_number_fallback=False)
    assert found is not None and found.text == answer


def test_reference_alternatives_are_marked() -> None:
    gold = extract_reference("so $\\boxed{15\\frac{39}{40}},$ or $\\boxed{\\frac{639}{40}}$")
    assert gold.text.split(ALTERNATIVE_SEP) == ["15\\frac{39}{40}", "\\frac{639}{40}"]
    assert extract_reference("So \\boxed{2} and \\boxed{3}").text == "2,3"


def test_units_strict_still_sees_text_units() -> None:
    strict = MathConfig(scoring="inline", units="strict")
    assert status("\\boxed{4\\pi \\text{ cm}^2}", "4\\pi", strict) == "incorrect"
    assert status("\\boxed{4\\pi \\text{ cm}^2}", "4\\pi \\text{ cm}^2", strict) == "correct"
