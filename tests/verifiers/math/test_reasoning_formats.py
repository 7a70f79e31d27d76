"""The reasoning blocks of shipping model families are reasoning, never the answer (red team, reasoning-blocks).

The answer is read after the last closing marker of any known format; an opened block never closed holds no answer.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

_HARMONY = "<|channel|>analysis<|message|>Trial: \\boxed{5}<|end|><|start|>assistant<|channel|>final<|message|>"
CASES = [
    Case("seed-think", "5", r"<seed:think>\boxed{5}</seed:think>The answer is 3.", "incorrect"),
    Case("seed-think-right", "3", r"<seed:think>\boxed{5}</seed:think>The answer is 3.", "correct"),
    Case("harmony", "5", _HARMONY + "The answer is 3.", "incorrect"),
    Case("harmony-right", "3", _HARMONY + "The answer is 3.", "correct"),
    Case("harmony-return-token", "3", _HARMONY + "The answer is \\boxed{3}.<|return|>", "correct"),
    Case("harmony-unfinished", "5", "<|channel|>analysis<|message|>so \\boxed{5}", "incorrect"),
    Case("harmony-commentary", "5", "<|channel|>commentary<|message|>\\boxed{5}<|end|>", "incorrect"),
    Case("kimi", "5", "\u25c1think\u25b7 \\boxed{5} \u25c1/think\u25b7 The answer is 3.", "incorrect"),
    Case("kimi-right", "3", "\u25c1think\u25b7 \\boxed{5} \u25c1/think\u25b7 The answer is 3.", "correct"),
    Case("analysis-tag", "5", r"<analysis>\boxed{5}</analysis> The answer is 3.", "incorrect"),
    Case("magistral", "5", r"[THINK]\boxed{5}[/THINK] The answer is 3.", "incorrect"),
    Case("magistral-right", "3", r"[THINK]\boxed{5}[/THINK] The answer is 3.", "correct"),
    Case("magistral-unclosed", "5", r"[THINK]I get \boxed{5} and", "incorrect"),
    Case("pipe-think", "5", r"<|think|>\boxed{5}<|/think|> The answer is 3.", "incorrect"),
    Case("pipe-think-right", "3", r"<|think|>\boxed{5}<|/think|> The answer is 3.", "correct"),
    Case("spaced-close-tag", "3", r"<think>\boxed{5}</ think> The answer is 3.", "correct"),
    # Controls: brackets and tags that are no reasoning marker leave the answer alone.
    Case("bracket-text", "4", r"We use [THINKING] as a label; \boxed{4}", "correct"),
    Case("interval-answer", "[1,2]", r"The answer is \boxed{[1,2]}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_reasoning_formats(case: Case) -> None:
    assert_case(case)
