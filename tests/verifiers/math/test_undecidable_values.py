r"""A comparison that cannot be decided is not equal: unevaluable closed terms never match (red team M0).

`\sin(10^{10^5})`, `\tan(10^{500})`, `(-1)^{\lfloor 10^{500}\pi\rfloor}` have no digit sympy can find
within the working precision; their difference from any gold must not read as 0.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

_U = r"\sin(10^{10^{5}})"
_V = r"\sin(3^{1000})"

CASES = [
    Case("sin-tower-int", "5", rf"\boxed{{{_U}}}", "incorrect"),
    Case("sin-tower-fraction", r"\frac{17}{3}", rf"\boxed{{{_U}}}", "incorrect"),
    Case("sin-tower-pi", r"\pi", rf"\boxed{{{_U}}}", "incorrect"),
    Case("sin-tower-surd", r"\sqrt{3}", rf"\boxed{{{_U}}}", "incorrect"),
    Case("sin-tower-power", "2^{100}", rf"\boxed{{{_U}}}", "incorrect"),
    Case("sin-tower-poly", "x^2+1", rf"\boxed{{{_U}}}", "incorrect"),
    Case("sin-tower-labelled", "x = 5", rf"\boxed{{x = {_U}}}", "incorrect"),
    Case("sin-tower-hashes", "18", f"#### {_U}", "incorrect"),
    Case("sin-tower-tuple", "(1,2)", rf"\boxed{{({_U}, {_U})}}", "incorrect"),
    Case("sin-tower-plus-poly", "x^3", rf"\boxed{{x^2 + {_U}}}", "incorrect"),
    Case("sin-pow3", "5", rf"\boxed{{{_V}}}", "incorrect"),
    Case("sin-pow3-decimal", "0.5", rf"\boxed{{{_V}}}", "incorrect"),
    Case("sin-pow3-interval", "[2, 5]", rf"\boxed{{[{_V}, {_V}]}}", "incorrect"),
    Case("sin-pow3-equation", "y = 2x+1", rf"\boxed{{y = {_V}}}", "incorrect"),
    Case("sin-pow3-times-x", "0", rf"\boxed{{{_V} x}}", "incorrect"),
    Case("sin-pow3-plus-x", "x", rf"\boxed{{x + {_V}}}", "incorrect"),
    Case("sin-pow3-symbolic-exponent", "2^n", rf"\boxed{{2^n + {_V}}}", "incorrect"),
    Case("sin-pow3-unit", r"12 \text{ cm}", rf"\boxed{{{_V} \text{{ cm}}}}", "incorrect"),
    Case("tan-huge", "7", r"\boxed{\tan(10^{500})}", "incorrect"),
    Case("floor-huge-sign", "5", r"\boxed{(-1)^{\lfloor 10^{500} \pi \rfloor}}", "incorrect"),
    Case("exp-sin-huge", "5", r"\boxed{e^{\sin(10^{500})}}", "incorrect"),
    Case("sin-sin-huge", "5", r"\boxed{\sin(\sin(10^{500}))}", "incorrect"),
    Case("arctan-tan-huge", "5", r"\boxed{\arctan(\tan(10^{500}))}", "incorrect"),
    Case("pythagoras-huge", "1", r"\boxed{\sin^2(10^{500}) + \cos^2(10^{500})}", "incorrect"),
    # True zero differences that sympy proves only to the working precision still compare equal.
    Case("pythagoras-small", "1", r"\boxed{\sin^2(1)+\cos^2(1)}", "correct"),
    Case("surd-square", "5", r"\boxed{(\sqrt2+\sqrt3)^2-2\sqrt6}", "correct"),
    Case("surd-product", r"\sqrt{6}", r"\boxed{\sqrt{2}\sqrt{3}}", "correct"),
    Case("pythagoras-symbolic", "1", r"\boxed{\sin^2 x + \cos^2 x}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_undecidable_values(case: Case) -> None:
    assert_case(case)
