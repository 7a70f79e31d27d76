"""FormatReward: a strict, non-gameable format component added by wrapping a verifier."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.core.errors import ConfigError
from rlvr.verifiers.testing import ConstantVerifier
from rlvr.verifiers.wrappers import FormatReward, boxed_contents, format_score, last_boxed


@pytest.mark.parametrize(
    ("response", "score"),
    [
        ("so \\boxed{42}.", 1.0),
        ("\\boxed{\\frac{1}{2}}", 1.0),
        ("\\fbox{x+1}", 1.0),
        ("\\boxed{}", 0.0),
        ("\\boxed{   }", 0.0),
        ("\\boxed{?!}", 0.0),
        ("\\boxed{42", 0.0),
        ("\\boxed{1} or \\boxed{2}", 0.0),
        ("the answer is 42", 0.0),
        ("", 0.0),
        ("\\boxed{" + "1" * 500 + "}", 0.0),
    ],
    ids=["int", "nested", "fbox", "empty", "blank", "punct", "unclosed", "hedged", "unboxed", "nothing", "too-long"],
)
def test_format_score_boxed(response: str, score: float) -> None:
    assert format_score(response) == score


def test_format_score_custom_pattern() -> None:
    pattern = r"<answer>(.*?)</answer>"
    assert format_score("<answer>noremopyh</answer>", pattern) == 1.0
    assert format_score("<answer> </answer>", pattern) == 0.0
    assert format_score("<answer>a</answer><answer>b</answer>", pattern) == 0.0


def test_boxed_helpers() -> None:
    assert boxed_contents("\\boxed{a} \\boxed{b{c}} \\boxed{d") == ["a", "b{c}", None]
    assert last_boxed("\\boxed{a} \\boxed{ b }") == "b"
    assert last_boxed("none") is None


@given(st.text(max_size=300))
def test_format_score_never_raises(text: str) -> None:
    assert format_score(text) in (0.0, 1.0)
    assert format_score(text, r"<answer>(.*?)</answer>") in (0.0, 1.0)


@given(st.text(alphabet=" \t\n{}\\", max_size=40))
def test_whitespace_and_braces_never_earn_format(text: str) -> None:
    assert format_score(f"\\boxed{{{text}}}") == 0.0


def test_reward_is_base_plus_weighted_format() -> None:
    wrapped = FormatReward(ConstantVerifier("incorrect", 0.0), weight=0.2)
    verdict = wrapped.verify("\\boxed{7}", "8")
    assert verdict.status == "incorrect" and verdict.reward == pytest.approx(0.2)
    assert verdict.components["format"] == 1.0
    assert wrapped.verify("\\boxed{}", "8").reward == 0.0
    assert wrapped.reference_response("8") == "8" and wrapped.name == "constant+format"


def test_error_stays_error() -> None:
    wrapped = FormatReward(ConstantVerifier("error", None), weight=0.5)
    verdict = wrapped.verify("\\boxed{7}", "7")
    assert verdict.status == "error" and verdict.reward is None and "format" not in verdict.components


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match=">= 0"):
        FormatReward(ConstantVerifier(), weight=-1)
    with pytest.raises(ConfigError, match="not a valid regex"):
        FormatReward(ConstantVerifier(), pattern="(")


def test_runs_in_worker_processes() -> None:
    from rlvr.verifiers.math import MathVerifier

    with FormatReward(MathVerifier(), weight=0.1) as wrapped:
        verdicts = wrapped.verify_batch([("\\boxed{2}", "2"), ("2", "2"), ("\\boxed{3}", "2")], workers=2)
    assert [v.reward for v in verdicts] == [pytest.approx(1.1), 1.0, pytest.approx(0.1)]
