"""A length limit never changes which answer is read (red team: the 100k-character clip).

Before, only the last `max_response_chars` characters were read: a cut could remove an opening
`<think>` (the reasoning's trial box became the answer) or an earlier competing box.
"""

from __future__ import annotations

import pytest

from rlvr.verifiers.math import MathConfig
from rlvr.verifiers.math.score import score_math

CONFIG = MathConfig(scoring="inline")
PAD = "a" * 100_050

CASES = [
    # (name, response, gold, status)
    ("competing-box-cut-away", "\\boxed{3}" + PAD + "\\boxed{5}", "5", "no_answer"),
    ("opening-think-cut-away", "<think>" + PAD + "\\boxed{5}", "5", "no_answer"),  # unclosed: all reasoning
    ("opening-think-cut-away-words", "<think>" + PAD + " The answer is 5.", "5", "no_answer"),
    ("long-padding-after-answer", "The answer is \\boxed{3}." + PAD, "3", "no_answer"),
    ("long-reasoning-then-answer", "<think>" + PAD + "\\boxed{4}</think> The answer is \\boxed{5}.", "5", "correct"),
    ("long-reasoning-then-wrong", "<think>" + PAD + "\\boxed{5}</think> The answer is \\boxed{4}.", "5", "incorrect"),
    ("short-response", "So the answer is \\boxed{5}.", "5", "correct"),
]


@pytest.mark.parametrize(("name", "response", "gold", "status"), CASES, ids=[c[0] for c in CASES])
def test_length_limit_never_changes_the_answer_read(name: str, response: str, gold: str, status: str) -> None:
    verdict = score_math(CONFIG, response, gold)
    assert verdict.status == status, (name, verdict.detail)
    if status == "no_answer":
        assert verdict.reward == CONFIG.no_answer_reward and verdict.extracted is None
    if name in ("competing-box-cut-away", "long-padding-after-answer"):
        assert "max_response_chars" in verdict.detail


def test_the_limit_is_configurable() -> None:
    config = MathConfig(scoring="inline", max_response_chars=200_000)
    # both answers are read: a hedge
    assert score_math(config, "\\boxed{3}" + PAD + "\\boxed{5}", "5").status == "incorrect"
