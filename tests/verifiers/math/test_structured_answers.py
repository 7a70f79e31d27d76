r"""Matrices, intervals, unions, relations and lists read by the fast parser compare as before (issue 20 item 17).

Each form here used to reach the ANTLR grammar; the fast paths (`fastparse`, the canonical union of
intervals, the interval of a one-variable inequality, answers of kinds that are never equal) must
give the same verdicts.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

_M = r"\begin{pmatrix} -1/3 \\ 2/3 \\ 5/3 \end{pmatrix}"
_H = r"\frac{\sqrt{2}}{2}"
_R = rf"\begin{{pmatrix}} {_H} & {_H} \\ -{_H} & {_H} \end{{pmatrix}}"
_S = r"1/\sqrt{2}"

CASES = [
    Case("matrix-fractions", _M, r"\boxed{\begin{pmatrix} -\frac{1}{3} \\ \frac{2}{3} \\ \frac{5}{3} \end{pmatrix}}",
         "correct"),
    Case("matrix-entry-off", _M, r"\boxed{\begin{pmatrix} -\frac{1}{3} \\ \frac{2}{3} \\ \frac{4}{3} \end{pmatrix}}",
         "incorrect"),
    Case("matrix-roots", _R, rf"\boxed{{\begin{{pmatrix}} {_S} & {_S} \\ -{_S} & {_S} \end{{pmatrix}}}}", "correct"),
    Case("matrix-sign-off", _R, rf"\boxed{{\begin{{pmatrix}} {_S} & {_S} \\ {_S} & {_S} \end{{pmatrix}}}}",
         "incorrect"),
    Case("matrix-vs-tuple", _M, r"\boxed{\left(-\frac{1}{3}, \frac{2}{3}, \frac{5}{3}\right)}", "incorrect"),
    Case("matrix-vs-scalar", _M, r"\boxed{2}", "incorrect"),
    Case("union-merged", r"(-\infty, 2) \cup (2, \infty)", r"\boxed{(-\infty, 2) \cup (2, 5] \cup (5, \infty)}",
         "correct"),
    Case("union-point-missing", r"(-\infty, 2) \cup (2, \infty)", r"\boxed{(-\infty, 2) \cup (2, 5) \cup (5, \infty)}",
         "incorrect"),
    Case("union-same-pieces-merged", r"(-\infty, 3]", r"\boxed{(-\infty, 1) \cup [1, 3]}", "correct"),
    Case("union-roots", r"(-\infty, \frac{1 - \sqrt{17}}{2}) \cup (\frac{1 + \sqrt{17}}{2}, \infty)",
         r"\boxed{\left(\frac{1+\sqrt{17}}{2}, \infty\right) \cup \left(-\infty, \frac{1-\sqrt{17}}{2}\right)}",
         "correct"),
    Case("union-vs-interval", r"(-\infty, -2] \cup [2, \infty)", r"\boxed{x > 2}", "incorrect"),
    Case("inequality-as-interval", r"(2, \infty)", r"\boxed{x > 2}", "correct"),
    Case("inequality-closed-end", r"(2, \infty)", r"\boxed{x \geq 2}", "incorrect"),
    Case("chain-as-interval", r"[-2, 7)", r"\boxed{-2 \leq x < 7}", "correct"),
    Case("chain-as-interval-open", r"[-2, 7)", r"\boxed{-2 < x < 7}", "incorrect"),
    Case("interval-bracket-kind", "(0, 1]", r"\boxed{(0, 1)}", "incorrect"),
    Case("tuple-vs-scalar", "5", r"\boxed{(-3, 2)}", "incorrect"),
    Case("plus-minus-one-root", r"1 \pm \sqrt{19}", r"\boxed{1+\sqrt{19}}", "incorrect"),
    Case("function-names", r"\frac{\log 2}{\log 2-\log 3}", r"\boxed{\frac{\ln 2}{\ln 2 - \ln 3}}", "correct"),
    Case("inverse-tangent", r"8 \tan^{-1}(2)", r"\boxed{8\arctan 2}", "correct"),
    Case("floor-product", r"\lfloor \frac{n}{2} \rfloor", r"\boxed{\lfloor \frac{n+1}{2} \rfloor}", "incorrect"),
    Case("letter-times-parenthesis", r"\frac{n(n+1)}{2}", r"\boxed{\frac{n^2+n}{2}}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_structured_answers(case: Case) -> None:
    assert_case(case)
