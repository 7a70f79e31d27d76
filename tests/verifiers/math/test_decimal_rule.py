r"""One decimal rule for every exact gold: a correctly rounded long decimal passes, a short one fails (issue 31).

`1/3` against `0.3333333333333333` used to fail while `\pi` against `3.14159265358979` passed. Now both follow
`scalar._decimals_agree`: the decimal must be the exact value correctly rounded to its written places (or
Python's `repr` of the nearest double, 15+ significant digits within 2^-52) and within `rel_tol` (1e-9, so
10+ significant digits). A truncation fails at any length; `float_rounding` or a larger `rel_tol` admit short
roundings.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

from rlvr.verifiers.math import MathConfig
from rlvr.verifiers.math.score import score_math

CASES = [
    Case("third-repr", "1/3", "0.3333333333333333", "correct"),
    Case("third-ten-digits", r"\frac{1}{3}", "0.3333333333", "correct"),
    Case("third-boxed", r"\frac{1}{3}", r"\boxed{0.3333333333333333}", "correct"),
    Case("two-thirds-rounded-up", r"\frac{2}{3}", "0.6666666667", "correct"),
    Case("two-thirds-repr", r"\frac{2}{3}", "0.6666666666666666", "correct"),
    Case("two-thirds-rounded-fourteen", r"\frac{2}{3}", "0.66666666666667", "correct"),
    Case("decimal-gold-exact-prediction", "0.3333333333333333", r"\boxed{\frac{1}{3}}", "correct"),
    Case("pi-fifteen-digits", r"\pi", "3.14159265358979", "correct"),
    Case("pi-rounded-ten-places", r"\pi", "3.1415926536", "correct"),
    Case("pi-third-repr", r"\frac{\pi}{3}", "1.0471975511965976", "correct"),
    Case("root-two", r"\sqrt{2}", "1.4142135624", "correct"),
    Case("negative-seventh-repr", r"-\frac{1}{7}", "-0.14285714285714285", "correct"),
    Case("twenty-two-sevenths", r"\frac{22}{7}", "3.142857142857143", "correct"),
    Case("eighth-exact", r"\frac{1}{8}", "0.125", "correct"),
    # short roundings, truncations, wrong signs, exact values that differ
    Case("third-two-places", r"\frac{1}{3}", "0.33", "incorrect"),
    Case("third-three-places", r"\frac{1}{3}", "0.333", "incorrect"),
    Case("third-six-places", r"\frac{1}{3}", "0.333333", "incorrect"),
    Case("decimal-gold-short", "0.33", r"\boxed{\frac{1}{3}}", "incorrect"),
    Case("two-thirds-truncated", r"\frac{2}{3}", "0.6666666666", "incorrect"),
    Case("two-thirds-truncated-fourteen", r"\frac{2}{3}", "0.66666666666666", "incorrect"),
    Case("pi-truncated", r"\pi", "3.1415926535", "incorrect"),
    Case("pi-two-places", r"\pi", "3.14", "incorrect"),
    Case("root-two-two-places", r"\sqrt{2}", "1.41", "incorrect"),
    Case("negative-seventh-sign", r"-\frac{1}{7}", "0.14285714285714285", "incorrect"),
    Case("zero-tiny", "0", "0.0000000001", "incorrect"),
    Case("power-plus-decimal-zero", r"2^{4097}+1", r"2^{4097}+0.0", "incorrect"),
    Case("factorial-decimal", "13!", "6227020801.0", "incorrect"),
    Case("pi-not-twenty-two-sevenths", r"\frac{22}{7}", r"\boxed{\pi}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_decimal_rule(case: Case) -> None:
    assert_case(case)


@pytest.mark.parametrize(("config", "expected"), [
    (MathConfig(scoring="inline"), "incorrect"),
    (MathConfig(scoring="inline", float_rounding=2), "correct"),
    (MathConfig(scoring="inline", rel_tol=0.02), "correct"),
    (MathConfig(scoring="inline", float_rounding=3), "incorrect"),  # 0.33 is not given to 3 places
])
def test_a_short_rounding_passes_only_when_the_config_says_so(config: MathConfig, expected: str) -> None:
    for gold in ("1/3", r"\frac{1}{3}"):
        verdict = score_math(config, r"\boxed{0.33}", gold)
        assert (verdict.status == "correct") == (expected == "correct"), (gold, verdict.detail)
