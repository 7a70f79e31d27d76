"""Hand-written cases: the issue's must-pass bugs (each stands for its kind, with variants), extraction,
configuration, timeouts and crashes."""

from __future__ import annotations

import asyncio
import functools

import pytest

from rlvr.core.types import Verdict
from rlvr.verifiers.math import MathConfig, MathVerifier
from rlvr.verifiers.math.extract import extract_answer, extract_reference
from rlvr.verifiers.math.score import score_math

INLINE = MathConfig(scoring="inline")


def check(response: str, reference: str, config: MathConfig = INLINE) -> Verdict:
    return MathVerifier(config).verify(response, reference)


CORRECT = [
    # must-pass bug cases, then variants of their kind
    pytest.param("We had 5 apples and 12 pears.\n\nFinal Answer: **73**", "73", id="final-answer-bold-after-numbers"),
    pytest.param("Step 1: 3 + 4 = 7.\n**Final Answer:** 73 dollars", "73", id="final-answer-unit"),
    pytest.param("#### 18.00", "18", id="gsm8k-trailing-zeros"),
    pytest.param("#### $18", "18", id="gsm8k-dollar"),
    pytest.param("#### 7,425,000", "7425000", id="gsm8k-thousands"),
    pytest.param("(2,4)", "(2,4)", id="tuple-identical"),
    pytest.param("\\boxed{\\left(2, 4\\right)}", "(2,4)", id="tuple-left-right"),
    pytest.param("So #### 42\n\nI checked: 6 * 7 = 42, and 1, 2, 3 are smaller.", "42", id="gsm8k-marker-then-text"),
    pytest.param("50", "50\\%", id="percent-strip"),
    pytest.param("\\boxed{50\\%}", "50", id="percent-strip-pred"),
    pytest.param("the answer is \\boxed{\\frac{1}{2}}", "0.5", id="fraction-vs-decimal"),
    pytest.param("\\boxed{\\dfrac{1}{2}}", "\\frac12", id="dfrac"),
    pytest.param("\\boxed{-1,3}", "3,-1", id="unordered-list"),
    pytest.param("\\boxed{x=11}", "11", id="label-prefix"),
    pytest.param("\\boxed{\\text{(B)}}", "B", id="choice-text-paren"),
    pytest.param("The answer is (B).", "\\text{(B)}", id="choice-answer-is"),
    pytest.param("\\boxed{90^\\circ}", "90", id="degrees"),
    pytest.param("\\boxed{10\\text{ cm}^2}", "10", id="units-text"),
    pytest.param("\\boxed{[0, 1)}", "[0,1)", id="interval"),
    pytest.param("\\boxed{(-\\infty, 2) \\cup (3, \\infty)}", "(3,\\infty)\\cup(-\\infty,2)", id="union"),
    pytest.param("\\boxed{\\{1, 2, 3\\}}", "\\{3,2,1\\}", id="set"),
    pytest.param("\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}}",
                 "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}", id="matrix"),
    pytest.param("\\boxed{\\frac{x}{7}+\\frac{2}{7}}", "\\frac{x+2}{7}", id="symbolic"),
    pytest.param("\\boxed{y = -\\frac{1}{2}x + \\frac{3}{4}}", "2x+4y-3=0", id="equation-scalar-multiple"),
    pytest.param("\\boxed{1 \\pm \\sqrt{19}}", "1+\\sqrt{19}, 1-\\sqrt{19}", id="plus-minus"),
    pytest.param("\\boxed{1 \\pm \\sqrt{19}}", "\\{1-\\sqrt{19}, 1+\\sqrt{19}\\}", id="plus-minus-set"),
    pytest.param("\\boxed{\\frac{1+\\sqrt5}{2}, \\frac{1-\\sqrt5}{2}}", "\\frac{1\\pm\\sqrt5}{2}",
                 id="plus-minus-gold"),
    pytest.param("\\boxed{\\text{Evelyn}}", "\\text{evelyn}", id="text-case"),
    pytest.param("\\fbox{12}", "12", id="fbox"),
    pytest.param("\\boxed{\\boxed{5}}", "5", id="nested-boxed"),
    pytest.param("first \\boxed{3} but that was wrong so we get \\boxed{\\frac{1}{3}}", "1/3", id="last-boxed-wins"),
    pytest.param("The answer is 1/3.", "\\frac{1}{3}", id="answer-is-slash"),
    pytest.param("Some work: 2 + 2 = 4, 4 * 3 = 12.", "12", id="last-number-fallback"),
    pytest.param("Thus $x \\geq 5$ is the solution.", "x \\ge 5", id="inequality-env"),
    pytest.param("\\boxed{5 \\geq x}", "x \\leq 5", id="inequality-flipped"),
    pytest.param("\\boxed{\\frac{1}{2004!}}", "\\frac{1}{2004!}", id="factorial-same"),
    pytest.param("\\boxed{1-\\frac{1}{e}}", "1-e^{-1}", id="euler-e"),
    pytest.param("\\boxed{3*x-1*y+13=0}", "3x-y+13=0", id="plain-equation"),
]

INCORRECT = [
    pytest.param("\\boxed{\\frac{1}{2006!}}", "\\frac{1}{2004!}", id="factorial-tiny-numbers"),
    pytest.param("\\boxed{\\frac{1}{2005!}}", "\\frac{1}{2004!}", id="factorial-neighbour"),
    pytest.param("\\boxed{10^{-30}}", "10^{-31}", id="tiny-powers"),
    pytest.param("\\boxed{3*x-1*y+13=0}", "3x+4y+14=0", id="equation-different"),
    pytest.param("\\boxed{3x+4y+15=0}", "3x+4y+14=0", id="equation-constant"),
    pytest.param("\\boxed{x+y=1}", "x+y=2", id="equation-not-multiple"),
    pytest.param("\\boxed{1,-2}", "1,-3", id="list-element"),
    pytest.param("\\boxed{1,-3,5}", "1,-3", id="list-length"),
    pytest.param("\\boxed{0.5}", "50", id="percent-not-x100"),
    pytest.param("\\boxed{50}", "0.5", id="percent-not-x100-reverse"),
    pytest.param("\\boxed{1+\\frac{1}{e}}", "1-\\frac{1}{e}", id="sign-flip"),
    pytest.param("\\boxed{(4,2)}", "(2,4)", id="tuple-order"),
    pytest.param("\\boxed{[2,4]}", "(2,4)", id="interval-brackets"),
    pytest.param("\\boxed{\\{2,4\\}}", "(2,4)", id="tuple-not-set"),
    pytest.param("\\boxed{1 \\pm \\sqrt{18}}", "1+\\sqrt{19}, 1-\\sqrt{19}", id="plus-minus-other-root"),
    pytest.param("\\boxed{1 + \\sqrt{19}}", "1+\\sqrt{19}, 1-\\sqrt{19}", id="plus-minus-one-value"),
    pytest.param("\\boxed{1 \\pm \\sqrt{19}}", "1+\\sqrt{19}", id="plus-minus-against-one-value"),
    pytest.param("\\boxed{1 \\pm \\sqrt{19}}", "(1+\\sqrt{19}, 1-\\sqrt{19})", id="plus-minus-states-no-order"),
    pytest.param("\\boxed{(C)}", "B", id="choice-other"),
    pytest.param("\\boxed{x < 5}", "x > 5", id="inequality-direction"),
    pytest.param("\\boxed{x+1}", "x+2n+1", id="symbolic-missing-term"),
    pytest.param("\\boxed{y+1}", "x+1", id="symbolic-other-variable"),
    pytest.param("\\boxed{\\lfloor n/2 \\rfloor}", "\\lfloor\\sqrt{n-1}\\rfloor", id="integer-valued-functions"),
    pytest.param("\\boxed{1:00}", "12:00", id="time-not-division-by-zero"),
    pytest.param("AZYUK2A", "2", id="digit-inside-word"),
    pytest.param("\\boxed{\\begin{pmatrix}1&2\\\\3&5\\end{pmatrix}}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
                 id="matrix-entry"),
    pytest.param("\\boxed{\\text{odd}}", "\\text{even}", id="text"),
]


@pytest.mark.parametrize(("response", "reference"), CORRECT)
def test_correct(response: str, reference: str) -> None:
    v = check(response, reference)
    assert v.status == "correct", v.detail
    assert v.reward == 1.0 and v.components == {"correct": 1.0}
    assert v.extracted is not None and "gold" in v.detail


@pytest.mark.parametrize(("response", "reference"), INCORRECT)
def test_incorrect(response: str, reference: str) -> None:
    v = check(response, reference)
    assert v.status == "incorrect", v.detail
    assert v.reward == 0.0 and v.components == {"correct": 0.0}


def test_factorial_case_is_fast() -> None:
    v = check("\\boxed{\\frac{1}{2006!}}", "\\frac{1}{2004!}")
    assert v.status == "incorrect" and v.elapsed_s < 2.0


def test_huge_factorial_is_not_evaluated() -> None:
    v = check("\\boxed{(10^{10^{10}})!}", "5")
    assert v.status == "incorrect" and v.elapsed_s < 2.0


@pytest.mark.parametrize(
    ("reference", "gold"),
    [
        pytest.param("Natalia sold 48/2 = 24 clips.\n#### 72", "72", id="gsm8k-solution"),
        pytest.param("So $x = \\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}", id="math-solution"),
        pytest.param("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{3}}{2}", id="bare-latex"),
    ],
)
def test_reference_extraction(reference: str, gold: str) -> None:
    assert extract_reference(reference).text == gold


@pytest.mark.parametrize(
    ("response", "answer", "source"),
    [
        pytest.param("\\boxed{\\frac{a}{\\sqrt{b}}}", "\\frac{a}{\\sqrt{b}}", "boxed", id="nested-braces"),
        pytest.param("x \\boxed{1} and \\boxed{2}", "1,2", "boxed", id="joined-boxes"),
        pytest.param("\\boxed{200} ... Final Answer: The final answer is $10,455$. I hope it is correct.", "10,455",
                     "final_answer", id="final-answer-after-intermediate-box"),
        pytest.param("The answer is: 17", "17", "answer_is", id="answer-is"),
        pytest.param("Answer: $\\frac{3}{4}$", "\\frac{3}{4}", "answer_is", id="answer-colon"),
        pytest.param("so she has **12 tomatoes** left", "12 tomatoes", "bold", id="bold"),
    ],
)
def test_extraction(response: str, answer: str, source: str) -> None:
    found = extract_answer(response)
    assert found is not None and (found.text, found.source) == (answer, source)


def test_no_answer() -> None:
    v = check("I do not know.", "5")
    assert v.status == "no_answer" and v.reward == 0.0 and v.extracted is None


def test_no_last_number_fallback() -> None:
    config = INLINE.model_copy(update={"last_number_fallback": False})
    assert check("we get 2 + 3 = 5 in the end, I think", "5", config).status == "no_answer"


def test_percent_modes() -> None:
    fraction = MathConfig(scoring="inline", percent="fraction")
    strict = MathConfig(scoring="inline", percent="strict")
    assert check("\\boxed{0.5}", "50\\%", fraction).status == "correct"
    assert check("\\boxed{50}", "50\\%", fraction).status == "incorrect"
    assert check("\\boxed{50}", "50\\%", strict).status == "incorrect"
    assert check("\\boxed{50\\%}", "50\\%", strict).status == "correct"


def test_units_strict() -> None:
    strict = MathConfig(scoring="inline", units="strict")
    assert check("\\boxed{10 \\text{ cm}}", "10", strict).status == "incorrect"
    assert check("\\boxed{10 \\text{ cm}}", "10 \\text{ cm}", strict).status == "correct"


def test_float_rounding() -> None:
    config = MathConfig(scoring="inline", float_rounding=2)
    assert check("\\boxed{0.33}", "\\frac{1}{3}", config).status == "correct"
    assert check("\\boxed{0.33}", "\\frac{1}{3}").status == "incorrect"


def test_custom_rewards() -> None:
    config = MathConfig(scoring="inline", correct_reward=2.0, incorrect_reward=-1.0, no_answer_reward=-2.0)
    assert check("\\boxed{1}", "1", config).reward == 2.0
    assert check("\\boxed{2}", "1", config).reward == -1.0
    assert check("I have nothing.", "1", config).reward == -2.0


def test_size_caps() -> None:
    config = MathConfig(scoring="inline", max_response_chars=1000, max_answer_chars=50)
    v = check("blah " * 100_000 + "\\boxed{7}", "7", config)  # never cut and read: a cut could drop a rival
    assert v.status == "no_answer" and "max_response_chars" in v.detail
    assert check("<think>" + "blah " * 100_000 + "</think> \\boxed{7}", "7", config).status == "correct"
    long_answer = "+".join(["x"] * 100)
    assert check(f"\\boxed{{{long_answer}}}", long_answer, config).status == "correct"
    assert check(f"\\boxed{{{long_answer}+1}}", long_answer, config).status == "incorrect"


def test_process_scoring_batch_and_async() -> None:
    with MathVerifier(MathConfig(timeout_s=30)) as verifier:
        verdicts = verifier.verify_batch([("\\boxed{1}", "1"), ("\\boxed{2}", "1"), ("#### 3", "3")], workers=2)
        assert [v.status for v in verdicts] == ["correct", "incorrect", "correct"]
        assert asyncio.run(verifier.averify("\\boxed{\\frac{1}{2}}", "0.5")).status == "correct"
        assert verifier.check("Natalia sold 48/2 = 24 clips.\n#### 72").status == "correct"


def test_timeout_then_keeps_working() -> None:
    # Deeply nested parentheses make the comparison run for many seconds (150 levels: over 10 s).
    heavy = "\\boxed{" + "(" * 150 + "\\sin x+1" + ")" * 150 + "}"
    with MathVerifier(MathConfig(timeout_s=1.0)) as verifier:
        v = verifier.verify(heavy, "x+2")
        assert v.status == "timeout" and v.reward == 0.0
        assert verifier.verify("\\boxed{2}", "2").status == "correct"


def test_crash_is_error_with_no_reward() -> None:
    class Broken(MathVerifier):
        def scorer(self):  # type: ignore[no-untyped-def]
            return functools.partial(score_math, None)  # AttributeError inside the worker

    with Broken(MathConfig(timeout_s=30)) as verifier:
        v = verifier.verify("\\boxed{1}", "1")
    assert v.status == "error" and v.reward is None
    inline = Broken(INLINE).verify("\\boxed{1}", "1")
    assert inline.status == "error" and inline.reward is None


def test_empty_reference_is_error() -> None:
    v = check("\\boxed{1}", "   ")
    assert v.status == "error" and v.reward is None
