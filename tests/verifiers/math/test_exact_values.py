"""Exact forms compare exactly however large: never a relative tolerance between exact values (issue 20, case 1)."""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("factorial-vs-off-by-one", "13!", r"\boxed{6227020801}", "incorrect"),
    Case("factorial-vs-value", "13!", r"\boxed{6227020800}", "correct"),
    Case("factorial-minus-one", "20!", r"\boxed{20!-1}", "incorrect"),
    Case("factorial-plus-one-pred", "20!", r"\boxed{20!+1}", "incorrect"),
    Case("factorial-value", "20!", r"\boxed{2432902008176640000}", "correct"),
    Case("factorial-ratio-form", "13!", r"\boxed{\frac{14!}{14}}", "correct"),
    Case("power-4097-plus-one", r"2^{4097}+1", r"\boxed{2^{4097}}", "incorrect"),
    Case("power-4097-doubled", r"2^{4097}", r"\boxed{2\cdot 2^{4096}}", "correct"),
    Case("power-10000-plus-one", r"2^{10000}", r"\boxed{2^{10000}+1}", "incorrect"),
    Case("power-beyond-exact-bound", r"10^{30000}", r"\boxed{10^{30000}+1}", "incorrect"),
    Case("power-3-100-minus-one", r"3^{100}", r"\boxed{3^{100}-1}", "incorrect"),
    Case("pi-times-big-plus-one", r"10^{10}\pi", r"\boxed{10^{10}\pi+1}", "incorrect"),
    Case("pi-times-big-written-out", r"10^{10}\pi", r"\boxed{10000000000\pi}", "correct"),
    Case("pi-times-huge-plus-one", r"10^{100}\pi", r"\boxed{10^{100}\pi+1}", "incorrect"),
    Case("sqrt-times-big-plus-one", r"10^{20}\sqrt{2}", r"\boxed{10^{20}\sqrt{2}+1}", "incorrect"),
    Case("sqrt-of-big-plus-one", r"10^{15}", r"\boxed{\sqrt{10^{30}+1}}", "incorrect"),
    Case("exp-big-plus-one", r"e^{50}", r"\boxed{e^{50}+1}", "incorrect"),
    Case("binomial-off-by-one", r"\binom{30}{15}", r"\boxed{155117521}", "incorrect"),
    Case("binomial-value", r"\binom{30}{15}", r"\boxed{155117520}", "correct"),
    Case("binomial-as-factorials", r"\binom{50}{25}", r"\boxed{\frac{50!}{25!\,25!}}", "correct"),
    Case("two-64-minus-one", r"2^{64}", r"\boxed{18446744073709551615}", "incorrect"),
    Case("two-64-value", r"2^{64}", r"\boxed{18446744073709551616}", "correct"),
    Case("twenty-digit-neighbour", "12345678901234567890", r"\boxed{12345678901234567891}", "incorrect"),
    Case("tiny-fraction-neighbour", r"\frac{1}{3^{40}}", r"\boxed{\frac{1}{3^{40}+1}}", "incorrect"),
    Case("hundred-factorial-plus-one", "100!", r"\boxed{100!+1}", "incorrect"),
    Case("pi-power-plus-small", r"\pi^{20}", r"\boxed{\pi^{20}+\frac{1}{10^{6}}}", "incorrect"),
    Case("pi-approximation", r"\pi", r"\boxed{3.14159}", "incorrect"),
    Case("pi-decimal-within-tolerance", r"\pi", r"\boxed{3.14159265358979}", "correct"),  # decimals: rel_tol
    # issue 31 item 7: the decimal rule of `\pi` holds for a fraction too (12 correctly rounded digits pass)
    Case("third-as-rounded-decimal", r"\frac{1}{3}", r"\boxed{0.333333333333}", "correct"),
    Case("third-as-short-decimal", r"\frac{1}{3}", r"\boxed{0.333333}", "incorrect"),
    Case("power-ratio", "2", r"\boxed{\frac{2^{100}}{2^{99}}}", "correct"),
    Case("root-forms", r"\frac{\sqrt{2}}{2}", r"\boxed{\frac{1}{\sqrt{2}}}", "correct"),
    Case("root-simplified", r"2\sqrt{2}", r"\boxed{\sqrt{8}}", "correct"),
    Case("nested-root", r"\sqrt{2}+\sqrt{3}", r"\boxed{\sqrt{5+2\sqrt{6}}}", "correct"),
    Case("log-power", r"3\ln 2", r"\boxed{\ln 8}", "correct"),
    Case("decimal-vs-fraction", r"\frac{3}{2}", r"\boxed{1.5}", "correct"),
    Case("symbolic-tiny-term", "x", r"\boxed{x+\frac{1}{10^{12}}}", "incorrect"),
    Case("symbolic-big-coefficient", r"10^{12}x", r"\boxed{(10^{12}+1)x}", "incorrect"),
    Case("symbolic-same", r"(x+1)^2", r"\boxed{x^2+2x+1}", "correct"),
    Case("factorial-as-decimal-off-by-one", "13!", r"\boxed{6227020801.0}", "incorrect"),
    Case("factorial-as-decimal", "13!", r"\boxed{6227020800.0}", "correct"),
    Case("power-plus-decimal-zero", r"2^{4097}+1", r"\boxed{2^{4097}+0.0}", "incorrect"),
    Case("big-value-within-rel-tol", r"10^{12}", r"\boxed{1000000000000.5}", "incorrect"),
    Case("root-decimal-within-last-digit", r"\sqrt{2}", r"\boxed{1.41421356237310}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_exact_values(case: Case) -> None:
    assert_case(case)
