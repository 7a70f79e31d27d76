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
]


@pytest.mark.parametrize("case", params(CASES))
def test_reasoning_blocks(case: Case) -> None:
    assert_case(case)
