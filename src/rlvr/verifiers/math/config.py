"""Configuration of the math verifier."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rlvr.verifiers.base import VerifierConfig

__all__: list[str] = []


class MathConfig(VerifierConfig):
    r"""How `MathVerifier` extracts and compares answers. Frozen; unknown fields are rejected.

    Fixed conventions (not configurable):

    - Reasoning blocks: with a closing ``</think>`` (``</thinking>``, ``</reasoning>``) only the text
      after the last one is read; an unclosed ``<think>`` holds no answer.
    - Extraction: an ``<answer>...</answer>`` tag (R1-style) wins over everything else; then the
      latest of ``\boxed{}``, ``####`` and "final answer" (also ``最终答案``); then "the answer is" /
      "Answer:" (also ``答案是``/``答案：``). After a marker the first complete answer expression is
      taken, cut at a clause boundary (" because", " since", ", which", a worded parenthetical,
      ". "), never a later number of the same sentence.
    - Boxes: an operator glued outside the box changes the value the response shows (``-\boxed{5}``,
      ``\boxed{5}^2``, ``\frac{1}{\boxed{5}}``, ``x < \boxed{5}``), so such a response is incorrect even when
      the shown value is the gold (`outside`); a percent sign after the box belongs to the answer.
    - Reference solutions: boxes joined by "or" / "equivalently" / "i.e." are alternative forms of
      one answer (a prediction equal to any is correct); boxes joined by "and" or commas are one
      multi-part answer.
    - Units (``units='strip'``): a unit is a word of 2+ letters after a number (cm, dollars, apples)
      or a ``\text{}``/``\mbox{}`` unit after any expression (``4\pi \text{ cm}^2``); a single
      letter (``5 x``, ``2 n``, ``5 i``) is a variable and is never stripped.
    - Numbers: LaTeX thousands groups ``32,\!348``, ``1{,}234``, ``1\,234`` are one number;
      a comma otherwise separates list items (no decimal commas).
    - Ratios and times: ``a:b`` is read as the quotient a/b (``2:4 == 1:2 == \frac12``), except
      that a gold clock time ``h:mm`` (two-digit minutes below 60, e.g. ``1:30``) only equals the
      same time (``01:30``), never ``2:60``; so a ratio gold such as ``6:10`` is read as a time too.
    - Multiple choice: a gold letter A-E matches the same letter in either case (``b``, ``(b)``);
      an answer naming several letters (``(B) (C)``, ``(A B C D)``) matches none; other text answers
      compare case-insensitively.
    - Labels: ``x=1, y=2`` equals ``y=2, x=1`` and ``(x,y)=(1,2)`` but not ``x=2, y=1``; a value under
      another name (``y=3`` for gold ``x=3``) is incorrect.
    - Exactness: exact forms (integers, fractions, factorials, powers, roots, constants) compare
      without tolerance however large. One decimal rule for every exact gold (``\frac{1}{3}`` as well as
      ``\pi``): a decimal equals it when it is the value correctly rounded to its written places (or
      Python's ``repr`` of the nearest double) and within `rel_tol`; at the default `rel_tol` that is
      any correctly rounded decimal of 10 or more significant digits (``0.3333333333``), never a short
      rounding (``0.33``) or a truncation (``0.6666666666``); `float_rounding` (or a larger `rel_tol`)
      admits shorter roundings.
    - Chinese (and Japanese/Korean counters): a sentence without Latin letters is prose (its last number is
      read, unless words deny, bound or retract it: ``不是300``, ``超过300``, ``300不对``); a measure word after
      a number is a unit (``300分钟``, ``3页``, `cjk`); 万 and 亿 multiply (``300万`` is 3,000,000).
    - Magnitudes: thousand/million/billion/trillion and a ``k`` suffix multiply; ``\mathrm{i}`` is
      the imaginary unit; Unicode minus signs, superscripts and vulgar fractions are read as math.
    """

    # -- extraction ------------------------------------------------------------------
    last_number_fallback: bool = Field(
        default=True,
        description="If no explicit answer marker (\\boxed, 'final answer', '####', 'Answer:') is found, "
        "use the last number in the response.",
    )
    max_response_chars: int = Field(
        default=100_000,
        ge=1,
        description="A response whose final part (after its reasoning block) is longer than this is no_answer.",
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
    rel_tol: float = Field(default=1e-9, ge=0, description="Relative tolerance for numeric equality (decimals against "
                           "exact values: see 'Exactness'; 1e-9 is the default of Python's math.isclose).")
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
