r"""Identities the verifier proves quickly and soundly: trigonometry, factorial quotients, function symbols (issue 31).

These were the slow tail (20-160 ms, up to 1 s under load) and some were false fails: `\frac{n!}{(n-2)!}`
against `n(n-1)` was "not equal" because a factorial of a variable was never evaluated. Now each side is
evaluated at the 16 exact points (a 15-digit look first; then the working precision once: `exact._cancels`),
factorial and binomial identities are proven by `combsimp`, and each call of an undefined function
(`g(t)`) is one variable of its own (`symbolic._opaque_calls`). A wrong identity stays wrong.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("tan-plus-cot", r"\frac{2}{\sin 2x}", r"\boxed{\tan x + \cot x}", "correct"),
    Case("tan-minus-cot", r"\frac{2}{\sin 2x}", r"\boxed{\tan x - \cot x}", "incorrect"),
    Case("secant-squared", r"\sec^2 x", r"\boxed{1+\tan^2 x}", "correct"),
    Case("secant-squared-wrong", r"\sec^2 x", r"\boxed{1+\tan x}", "incorrect"),
    Case("double-angle-sine", r"2\sin x \cos x", r"\boxed{\sin 2x}", "correct"),
    Case("double-angle-cosine", r"\cos 2x", r"\boxed{\cos^2 x - \sin^2 x}", "correct"),
    Case("double-angle-cosine-sign", r"\cos 2x", r"\boxed{\sin^2 x - \cos^2 x}", "incorrect"),
    Case("half-angle", r"\sin^2 x", r"\boxed{\frac{1 - \cos 2x}{2}}", "correct"),
    Case("sum-angle", r"\sin(x+y)", r"\boxed{\sin x \cos y + \cos x \sin y}", "correct"),
    Case("sum-angle-wrong", r"\sin(x+y)", r"\boxed{\sin x \cos y - \cos x \sin y}", "incorrect"),
    Case("function-symbol-reordered", "5 - 4g(t)", r"\boxed{-4g(t)+5}", "correct"),
    Case("function-symbol-coefficient", "5 - 4g(t)", r"\boxed{5-3g(t)}", "incorrect"),
    Case("function-symbol-argument", "5 - 4g(t)", r"\boxed{5-4g(x)}", "incorrect"),
    Case("function-symbol-sum", "2f(x)", r"\boxed{f(x)+f(x)}", "correct"),
    Case("function-symbols-differ", "f(x)", r"\boxed{g(x)}", "incorrect"),
    Case("factorial-quotient", r"\frac{n!}{(n-2)!}", r"\boxed{n(n-1)}", "correct"),
    Case("factorial-quotient-wrong", r"\frac{n!}{(n-2)!}", r"\boxed{n(n+1)}", "incorrect"),
    Case("factorial-quotient-next", r"\frac{(n+1)!}{n!}", r"\boxed{n+1}", "correct"),
    Case("factorial-quotient-numbers", r"\frac{100!}{98!}", r"\boxed{9900}", "correct"),
    Case("factorial-quotient-numbers-wrong", r"\frac{100!}{98!}", r"\boxed{9901}", "incorrect"),
    Case("binomial-two", r"\binom{n}{2}", r"\boxed{\frac{n(n-1)}{2}}", "correct"),
    Case("binomial-two-wrong", r"\binom{n}{2}", r"\boxed{\frac{n(n+1)}{2}}", "incorrect"),
    Case("central-binomial", r"\frac{(2n)!}{(n!)^2}", r"\boxed{\binom{2n}{n}}", "correct"),
    Case("factorial-of-huge-multiple-structural", r"(10^{10} n)!", r"\boxed{(10^{10} n)! + 1}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_identities(case: Case) -> None:
    assert_case(case)
