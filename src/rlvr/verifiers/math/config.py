"""Configuration of the math verifier."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rlvr.verifiers.base import VerifierConfig

__all__ = ["MathConfig"]


class MathConfig(VerifierConfig):
    """How `MathVerifier` extracts and compares answers. Frozen; unknown fields are rejected."""

    # -- extraction ------------------------------------------------------------------
    last_number_fallback: bool = Field(
        default=True,
        description="If no explicit answer marker (\\boxed, 'final answer', '####', 'Answer:') is found, "
        "use the last number in the response.",
    )
    max_response_chars: int = Field(
        default=100_000, ge=1, description="Responses longer than this are scored on their last N characters."
    )
    max_answer_chars: int = Field(
        default=2_000, ge=1, description="An extracted answer longer than this is not parsed symbolically."
    )
    # -- equivalence -----------------------------------------------------------------
    percent: Literal["strip", "fraction", "strict"] = Field(
        default="strip",
        description="How a trailing % compares with a bare number. 'strip': 50% == 50 (GSM8K/MATH convention); "
        "'fraction': 50% == 0.5; 'strict': 50% only equals 50%. Never a silent x100 tolerance.",
    )
    units: Literal["strip", "strict"] = Field(
        default="strip",
        description="'strip': drop trailing unit words/LaTeX \\text{} units before comparing (MATH convention); "
        "'strict': units must match.",
    )
    rel_tol: float = Field(default=1e-9, ge=0, description="Relative tolerance for numeric equality.")
    abs_tol: float = Field(default=1e-9, ge=0, description="Absolute tolerance for numeric equality.")
    float_rounding: int | None = Field(
        default=None,
        ge=0,
        description="If set, a response number also matches a gold rounded to this many decimals "
        "when the response was given to at least that many decimals and both round alike.",
    )
    # -- reward ----------------------------------------------------------------------
    correct_reward: float = Field(default=1.0, description="Reward of a correct answer.")
    incorrect_reward: float = Field(default=0.0, description="Reward of a wrong answer.")
    no_answer_reward: float = Field(default=0.0, description="Reward when no answer could be extracted.")
