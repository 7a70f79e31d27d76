r"""Symbolic answers are checked at negative, integer and zero points too (red team M1).

An answer that differs from the gold only for negative or integer arguments (a dropped absolute
value, `\sqrt{x^2}` read as `x`, floor vs ceiling) is incorrect; points outside either side's
domain are skipped.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("abs-vs-x", "x", r"\boxed{|x|}", "incorrect"),
    Case("sqrt-square-vs-x", "x", r"\boxed{\sqrt{x^2}}", "incorrect"),
    Case("abs-shift", "x-1", r"\boxed{|x-1|}", "incorrect"),
    Case("log-abs-antiderivative", r"\ln|x| + C", r"\boxed{\ln x + C}", "incorrect"),
    Case("max-zero", "x", r"\boxed{\max(x, 0)}", "incorrect"),
    Case("sign-vs-one", "1", r"\boxed{\frac{x}{|x|}}", "incorrect"),
    Case("sqrt-square-shift", "n+1", r"\boxed{\sqrt{n^2+2n+1}}", "incorrect"),
    Case("abs-plus-one", "n+1", r"\boxed{|n| + 1}", "incorrect"),
    Case("sqrt-product-square", "ab", r"\boxed{\sqrt{a^2 b^2}}", "incorrect"),
    Case("floor-plus-one-vs-ceil", r"\lceil x \rceil", r"\boxed{\lfloor x \rfloor + 1}", "incorrect"),
    Case("abs-gold-vs-plain", "|x+1|", r"\boxed{x+1}", "incorrect"),
    Case("abs-square-vs-cube", "x^3", r"\boxed{|x|^3}", "incorrect"),
    Case("even-power-root", "x", r"\boxed{(x^4)^{1/4}}", "incorrect"),
    Case("floor-vs-x", "x", r"\boxed{\lfloor x \rfloor}", "incorrect"),
    Case("abs-decimal-coefficient", "0.5x", r"\boxed{0.5|x|}", "incorrect"),
    # Terms that vanish at every rational point of small denominator without being 0 (red team, third pass).
    Case("sine-of-common-multiple", "x^2", r"\boxed{x^2+\sin(471240\pi x)}", "incorrect"),
    Case("floor-of-common-multiple", "x^2", r"\boxed{x^2+\lfloor 17!x\rfloor-17!x}", "incorrect"),
    Case("cosine-of-common-multiple", "1", r"\boxed{\cos(942480\pi t)}", "incorrect"),
    Case("fractional-part-two-variables", "x+y", r"\boxed{x+y+\lfloor 471240xy\rfloor-471240xy}", "incorrect"),
    Case("sine-of-common-multiple-in-exponent", "2^{n}", r"\boxed{2^{n+\sin(471240\pi n)}}", "incorrect"),
    # Right answers still compare equal, also where one side is undefined at some points.
    Case("pythagorean-identity", "1", r"\boxed{\sin^2 x+\cos^2 x}", "correct"),
    Case("sine-of-a-right-angle", "x^2+1", r"\boxed{x^2+\sin(\frac{\pi}{2})}", "correct"),
    Case("expanded-square", "(x+1)^2", r"\boxed{x^2+2x+1}", "correct"),
    Case("abs-squared", "x^2", r"\boxed{|x|^2}", "correct"),
    Case("abs-vs-sqrt-square", r"\sqrt{x^2}", r"\boxed{|x|}", "correct"),
    Case("log-abs-same", r"\ln|x| + C", r"\boxed{\ln|x| + C}", "correct"),
    Case("sign-undefined-at-zero", r"\frac{|x|}{x}", r"\boxed{\frac{x}{|x|}}", "correct"),
    Case("pole-at-zero", r"\frac{x^2+x}{x}", r"\boxed{x+1}", "correct"),
    Case("poles-at-integers", r"\frac{1}{x-2} - \frac{1}{x}", r"\boxed{\frac{2}{x(x-2)}}", "correct"),
    Case("ceil-identity", r"\lceil x \rceil", r"\boxed{-\lfloor -x \rfloor}", "correct"),
    Case("decimal-poly", "0.5x^2", r"\boxed{\frac{x^2}{2}}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_evaluation_points(case: Case) -> None:
    assert_case(case)
