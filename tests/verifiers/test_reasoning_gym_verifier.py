"""ReasoningGymVerifier: reasoning-gym's own score_answer, rebuilt and cached in the worker."""

from __future__ import annotations

import pytest

from rlvr.core.errors import ConfigError
from rlvr.verifiers.reasoning_gym import ReasoningGymVerifier, extract_answer


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("think\n<answer> abc </answer>", "abc"),
        ("<answer>1</answer> then <answer>2</answer>", "2"),
        ("so \\boxed{x}", "x"),
        ("line one\nfinal line  \n\n", "final line"),
        ("   ", None),
    ],
    ids=["tag", "last-tag", "boxed", "last-line", "blank"],
)
def test_extract_answer(response: str, answer: str | None) -> None:
    assert extract_answer(response) == answer


@pytest.fixture(scope="module")
def inline() -> ReasoningGymVerifier:
    return ReasoningGymVerifier(task="spell_backward", size=5, seed=1, scoring="inline")


def test_scores_with_the_generator(inline: ReasoningGymVerifier) -> None:
    ref = {"index": 2, "answer": inline.answer(2)}
    assert inline.check(ref).is_correct
    wrong = inline.verify("<answer>zzz</answer>", ref)
    assert wrong.status == "incorrect" and wrong.reward == 0.0 and wrong.extracted == "zzz"
    assert inline.verify("", ref).status == "no_answer"


def test_mismatched_dataset_is_an_error_not_a_zero(inline: ReasoningGymVerifier) -> None:
    verdict = inline.verify("<answer>x</answer>", {"index": 0, "answer": "not-this"})
    assert verdict.status == "error" and verdict.reward is None and "differ" in verdict.detail
    assert inline.verify("x", {"no_index": 1}).status == "error"


def test_plain_string_reference(inline: ReasoningGymVerifier) -> None:
    assert inline.verify("<answer>olleh</answer>", "olleh").is_correct


def test_in_worker_process() -> None:
    with ReasoningGymVerifier(task="spell_backward", size=5, seed=1) as v:
        refs = [{"index": i, "answer": v.answer(i)} for i in range(3)]
        verdicts = v.verify_batch([(v.reference_response(r), r) for r in refs])
    assert all(x.is_correct for x in verdicts)


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="needs task="):
        ReasoningGymVerifier()
    with pytest.raises(ConfigError, match="Did you mean spell_backward"):
        ReasoningGymVerifier(task="spell_backwards")
