r"""A percentage against its decimal: `40\%` and `0.4` differ by default, in both directions (issue 31 item 8).

Decision (`MathConfig.percent`): under the default "strip" (GSM8K/MATH golds drop the sign: gold `40` for "what
percent"), a percent sign is dropped and the number compared as written, so `40\%` equals `40` and not `0.4`,
and gold `0.4` is not `40\%`; reading both `40` and `0.4` as `40\%` would pass any answer off by a factor of 100
on such golds. "fraction" reads N% as N/100 (`40\%` equals `0.4` and `\frac{2}{5}`, not `40`); "strict" wants
the sign on both sides.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

from rlvr.verifiers.math import MathConfig
from rlvr.verifiers.math.score import score_math

CASES = [
    Case("percent-gold-decimal-prediction", r"40\%", r"\boxed{0.4}", "incorrect"),
    Case("decimal-gold-percent-prediction", "0.4", r"\boxed{40\%}", "incorrect"),
    Case("percent-gold-number", r"40\%", r"\boxed{40}", "correct"),
    Case("number-gold-percent", "40", r"\boxed{40\%}", "correct"),
    Case("percent-word", "40", "The answer is 40 percent.", "correct"),
    Case("percent-gold-fraction-prediction", r"40\%", r"\boxed{\frac{2}{5}}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_percent_readings(case: Case) -> None:
    assert_case(case)


@pytest.mark.parametrize(("mode", "gold", "response", "expected"), [
    ("fraction", r"40\%", r"\boxed{0.4}", "correct"),
    ("fraction", "0.4", r"\boxed{40\%}", "correct"),
    ("fraction", r"40\%", r"\boxed{\frac{2}{5}}", "correct"),
    ("fraction", r"40\%", r"\boxed{40}", "incorrect"),
    ("fraction", "40", r"\boxed{40\%}", "incorrect"),
    ("strict", r"40\%", r"\boxed{40\%}", "correct"),
    ("strict", r"40\%", r"\boxed{40}", "incorrect"),
    ("strict", "40", r"\boxed{40\%}", "incorrect"),
    ("strict", r"40\%", r"\boxed{0.4}", "incorrect"),
    ("strip", r"40\%", r"\boxed{0.4}", "incorrect"),
    ("strip", "0.4", r"\boxed{40\%}", "incorrect"),
])
def test_each_percent_mode_in_both_directions(mode: str, gold: str, response: str, expected: str) -> None:
    verdict = score_math(MathConfig(scoring="inline", percent=mode), response, gold)
    assert (verdict.status == "correct") == (expected == "correct"), verdict.detail
