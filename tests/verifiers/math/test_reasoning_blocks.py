"""A trial answer inside `<think>...</think>` is never the answer: the text after the last `</think>` is (case 6)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("trial-box-in-think", "5", r"<think>maybe \boxed{5} hmm</think> The answer is 3.", "incorrect"),
    Case("answer-after-think", "3", r"<think>maybe \boxed{5} hmm</think> The answer is 3.", "correct"),
    Case("only-inside-think", "5", r"<think>so \boxed{5}</think>", "incorrect"),
    Case("unclosed-think", "5", r"<think>I get \boxed{5} and then", "incorrect"),
    Case("two-think-blocks", "3", r"<think>a</think><think>\boxed{3}</think> Answer: 4", "incorrect"),
    Case("two-think-blocks-right", "4", r"<think>a</think><think>\boxed{3}</think> Answer: 4", "correct"),
    Case("same-answer-both", "7", "<think>\\boxed{7}</think>\n\nSo \\boxed{7}", "correct"),
    Case("final-answer-after", "8", r"<think>7</think>The final answer is $\boxed{8}$", "correct"),
    Case("final-answer-after-wrong", "7", r"<think>7</think>The final answer is $\boxed{8}$", "incorrect"),
    Case("closing-tag-only", "2", r"reasoning \boxed{9} ...</think> \boxed{2}", "correct"),
    Case("closing-tag-only-trial", "9", r"reasoning \boxed{9} ...</think> \boxed{2}", "incorrect"),
    Case("answer-tag-inside-think", "5", r"<think><answer>5</answer></think><answer>6</answer>", "incorrect"),
    Case("answer-tag-after-think", "6", r"<think><answer>5</answer></think><answer>6</answer>", "correct"),
    Case("last-number-inside-think", "12", "<think>12</think> I am not sure.", "incorrect"),
    Case("thinking-tag", "5", r"<thinking>\boxed{5}</thinking> Answer: 4", "incorrect"),
    Case("reasoning-tag-upper", "5", r"<REASONING>\boxed{5}</REASONING> Answer: 4", "incorrect"),
    # Red team M4: a second block opened after the last closing tag and never closed; other tag names.
    Case("reopened-think", "18", r"<think>a</think> <think>\boxed{18}", "incorrect"),
    Case("reopened-think-hedge", "18", r"<think>a</think> The answer is 19. <think>\boxed{18}", "incorrect"),
    Case("reopened-think-hedge-right", "19", r"<think>a</think> The answer is 19. <think>\boxed{18}", "correct"),
    Case("reopened-think-box-before", "18", r"<think>a</think> \boxed{18} <think> \boxed{19}", "correct"),
    Case("scratchpad-tag", "18", r"<scratchpad>\boxed{18}</scratchpad>The answer is 19.", "incorrect"),
    Case("scratchpad-tag-right", "19", r"<scratchpad>\boxed{18}</scratchpad>The answer is 19.", "correct"),
    Case("reflection-tag", "18", r"<reflection>\boxed{18}</reflection>The answer is 19.", "incorrect"),
    Case("begin-of-thought", "18", r"<|begin_of_thought|>\boxed{18}<|end_of_thought|> The answer is 19.", "incorrect"),
    Case("begin-of-thought-right", "19", r"<|begin_of_thought|>\boxed{18}<|end_of_thought|> The answer is 19.",
         "correct"),
    Case("begin-of-thought-unclosed", "18", r"The answer is 19. <|begin_of_thought|>\boxed{18}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_reasoning_blocks(case: Case) -> None:
    assert_case(case)
