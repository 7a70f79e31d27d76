r"""Exact expressions with variables in exponents compare exactly, never by a tolerance (red team M2).

`2^{n} + 10^{-12}` is not `2^{n}`: both sides are evaluated at exact rational points, exponents
included; equations and inequalities are proportional exactly; a tiny written term (`\pi + 10^{-500}`)
is found because the working precision grows with the digits written; a written `1.0` does not buy
a tolerance for the exact rest of an expression with variables.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("power-n-plus-tiny", "2^{n}", r"\boxed{2^{n}+10^{-12}}", "incorrect"),
    Case("exp-100x-plus-one", "e^{100x}", r"\boxed{e^{100x}+1}", "incorrect"),
    Case("power-100n-plus-one", "2^{100n}", r"\boxed{2^{100n}+1}", "incorrect"),
    Case("self-power-plus-tiny", "x^{x}", r"\boxed{x^{x}+10^{-15}}", "incorrect"),
    Case("exp-times-near-one", "e^{x}", r"\boxed{e^{x}(1+10^{-12})}", "incorrect"),
    Case("power-minus-one-plus-tiny", "3^{n}-1", r"\boxed{3^{n}-1+10^{-20}}", "incorrect"),
    Case("n-power-plus-tiny-fraction", r"n 2^{n}", r"\boxed{n 2^{n}+\frac{1}{10^{30}}}", "incorrect"),
    Case("two-symbols-power-plus-tiny", "a^{b}", r"\boxed{a^{b}+10^{-13}}", "incorrect"),
    Case("negative-exponent-tiny-constant", "e^{-100x}", r"\boxed{e^{-100x}+e^{-200}}", "incorrect"),
    Case("tower-plus-one", "2^{2^{n}}", r"\boxed{2^{2^{n}}+1}", "incorrect"),
    Case("equation-exponent-plus-tiny", "y=2^{x}", r"\boxed{y=2^{x}+10^{-12}}", "incorrect"),
    Case("equation-big-constant-plus-one", "x+y=10^{12}", r"\boxed{x+y=10^{12}+1}", "incorrect"),
    Case("inequality-big-constant-plus-one", r"x^2 \geq 10^{12}", r"\boxed{x^2 \geq 10^{12}+1}", "incorrect"),
    Case("pi-plus-written-tiny-power", r"\pi", r"\boxed{\pi + 10^{-500}}", "incorrect"),
    Case("pi-plus-written-tiny-fraction", r"\pi", r"\boxed{\pi + \frac{1}{10^{450}}}", "incorrect"),
    Case("decimal-one-buys-no-tolerance", "2^{n}", r"\boxed{1.0\cdot 2^{n}+10^{-12}}", "incorrect"),
    Case("decimal-coefficient-is-exact", r"\frac{x}{3}", r"\boxed{0.3333333333333x}", "incorrect"),
    Case("decimal-pi-with-variable", r"\pi r^2", r"\boxed{3.14159265358979 r^2}", "incorrect"),
    # Equal forms stay equal.
    Case("power-shift", "2^{n+1}", r"\boxed{2\cdot 2^{n}}", "correct"),
    Case("power-of-four", "4^{n}", r"\boxed{2^{2n}}", "correct"),
    Case("power-of-exp", "e^{100x}", r"\boxed{(e^{x})^{100}}", "correct"),
    Case("self-power-as-exp", "x^{x}", r"\boxed{e^{x\ln x}}", "correct"),
    Case("tower-rewritten", "2^{2^{n}}", r"\boxed{4^{2^{n-1}}}", "correct"),
    Case("power-difference", "2^{n+1}", r"\boxed{3\cdot 2^{n}-2^{n}}", "correct"),
    Case("power-half", "2^{n-1}", r"\boxed{\frac{2^{n}}{2}}", "correct"),
    Case("decimal-half-power", "2^{n-1}", r"\boxed{0.5\cdot 2^{n}}", "correct"),
    Case("equation-power-rewritten", "y=2^{x}", r"\boxed{y=2\cdot 2^{x-1}}", "correct"),
    Case("equation-scaled", "x+y=10^{12}", r"\boxed{2x+2y=2\cdot 10^{12}}", "correct"),
    Case("pi-plus-cancelled-term", r"\pi", r"\boxed{\pi + 10^{-500} - \frac{1}{10^{500}}}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_symbolic_exponents(case: Case) -> None:
    assert_case(case)
