r"""Indexed and outside labels, solution tuples, glued connectives, bound variables (issue 31 item 8).

- Indices of one name are positions: gold `x_{1}=2, x_{2}=3` is the bare `2, 3` in index order (not `3, 2`); a
  prediction `x_1 = 2, x_2 = 3` states the list `2, 3` (a bare gold list is unordered, a tuple ordered).
- A label outside the box is stated: `y_1 = \boxed{5}` reads `y_1 = 5` (so `y_2 = \boxed{5}` is not gold `y_1=5`).
- A tuple assignment of several solutions, `(x, y) = (5, 8) and (8, 5)`, matches bare gold tuples only when it
  does under every order of the names (the question's order is unknown): symmetric solution sets pass.
- `x=2orx=-2`: an "or"/"and" glued between a value and the next label separates them.
- A function's variable is bound: `g(t)=t^2` is gold `g(x)=x^2`; `g(t)=x^2` (constant in t) is not.
Distinct names against bare values stay incorrect (M5, `test_labelled_tuples.py`).
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    # indices of one name
    Case("indexed-gold-bare-boxes", "x_1=2, x_2=3", r"\boxed{2}, \boxed{3}", "correct"),
    Case("indexed-braced-gold-bare-boxes", "x_{1}=2, x_{2}=3", r"\boxed{2}, \boxed{3}", "correct"),
    Case("indexed-gold-and-boxes", r"x_{1}=\frac{1}{2},\quad x_{2}=-3", r"$\boxed{\frac12}$ and $\boxed{-3}$",
         "correct"),
    Case("indexed-gold-tuple", "x_1=2, x_2=3", r"\boxed{(2, 3)}", "correct"),
    Case("indexed-gold-reversed", "x_{1}=2, x_{2}=3", r"\boxed{3}, \boxed{2}", "incorrect"),
    Case("indexed-gold-wrong-value", "x_1=2, x_2=3", r"\boxed{2}, \boxed{4}", "incorrect"),
    Case("indexed-gold-missing-value", "x_1=2, x_2=3", r"\boxed{2}", "incorrect"),
    Case("indexed-prediction-bare-gold", "2,3", r"\boxed{x_1=2, x_2=3}", "correct"),
    Case("indexed-prediction-bare-gold-reversed", "2,3", r"\boxed{x_1=3, x_2=2}", "correct"),  # a bare list
    Case("indexed-prediction-tuple-gold", "(2,3)", r"\boxed{x_1=2, x_2=3}", "correct"),
    Case("indexed-prediction-tuple-gold-reversed", "(2,3)", r"\boxed{x_1=3, x_2=2}", "incorrect"),
    Case("indexed-labels-swapped", "x_1=2, x_2=3", r"\boxed{x_1=3, x_2=2}", "incorrect"),
    Case("two-names-not-indices", "a=2, b=3", r"\boxed{2}, \boxed{3}", "incorrect"),
    # labels outside the boxes
    Case("outside-labels", "x_1=2, x_2=3", r"$x_1 = \boxed{2}$, $x_2 = \boxed{3}$", "correct"),
    Case("outside-labels-swapped", "x_1=2, x_2=3", r"x_1 = \boxed{3}, x_2 = \boxed{2}", "incorrect"),
    Case("outside-labels-bare-gold", "2,3", r"x_1 = \boxed{2}, x_2 = \boxed{3}", "correct"),
    Case("outside-label-single", "5", r"y_1 = \boxed{5}", "correct"),
    Case("outside-label-same-name", "y_1=5", r"$y_1 = \boxed{5}$", "correct"),
    Case("outside-label-other-name", "y_1=5", r"$y_2 = \boxed{5}$", "incorrect"),
    Case("outside-labels-functions", "y_1 = -2x^2+4x+3, y_2 = 3x^2+12x+10",
         r"\(y_1 = \boxed{-2(x - 1)^2 + 5}\) and \(y_2 = \boxed{3(x + 2)^2 - 2}\)", "correct"),
    Case("outside-labels-functions-swapped", "y_1 = -2x^2+4x+3, y_2 = 3x^2+12x+10",
         r"\(y_1 = \boxed{3(x + 2)^2 - 2}\) and \(y_2 = \boxed{-2(x - 1)^2 + 5}\)", "incorrect"),
    Case("sum-before-box-is-no-label", "5", r"$x + y = \boxed{5}$", "correct"),
    Case("fraction-before-box-is-no-label", r"\frac34", r"$\frac{j_1}{j_2} = \boxed{\frac 34}$", "correct"),
    Case("product-before-box-is-no-label", "-2+7i", r"the image is $i(7 + 2i) = \boxed{-2 + 7i}.$", "correct"),
    # solution tuples under one tuple of names
    Case("symmetric-solutions", "(5,8),(8,5)", r"(x, y) = (5, 8) and (8, 5)", "correct"),
    Case("symmetric-solutions-boxed", "(5,8),(8,5)", r"\boxed{(x, y) = (5, 8) \quad \text{and} \quad (8, 5)}",
         "correct"),
    Case("symmetric-solutions-reordered", "(8,5),(5,8)", r"\boxed{(x, y) = (5, 8), (8, 5)}", "correct"),
    Case("symmetric-solutions-gold-assignment", "(x, y) = (5, 8) and (8, 5)", r"(5,8),(8,5)", "correct"),
    Case("asymmetric-solutions", "(5,8),(3,5)", r"\boxed{(x, y) = (5, 8), (3, 5)}", "incorrect"),
    Case("asymmetric-solutions-wrong", "(5,8),(8,6)", r"\boxed{(x, y) = (5, 8), (8, 6)}", "incorrect"),
    Case("solutions-missing-one", "(5,8),(8,5),(1,1)", r"\boxed{(x, y) = (5, 8), (8, 5)}", "incorrect"),
    Case("single-labelled-tuple-stays-m5", "(5,8)", r"\boxed{(x, y) = (5, 8)}", "incorrect"),
    # "or" glued between a value and the next label
    Case("glued-or", r"x=2 \text{ or } x=-2", "x=2orx=-2", "correct"),
    Case("glued-or-plus-minus", r"x=\pm 2", r"\boxed{x=2orx=-2}", "correct"),
    Case("glued-or-bare-gold", "2,-2", "x=2orx=-2", "correct"),
    Case("glued-and", "2,-2", "x=2andx=-2", "correct"),
    Case("glued-or-wrong-value", "2,-2", "x=2orx=-3", "incorrect"),
    Case("plus-minus-labelled", r"x=\pm 2", r"\boxed{x = 2 \text{ or } x = -2}", "correct"),
    Case("plus-minus-labelled-wrong", r"x=\pm 2", r"\boxed{x = 2 \text{ or } x = -3}", "incorrect"),
    # bound variables of a function
    Case("function-variable-renamed", "g(x)=x^2", r"\boxed{g(t)=t^2}", "correct"),
    Case("function-variable-renamed-linear", "f(x)=2x+1", r"\boxed{f(y) = 2y + 1}", "correct"),
    Case("function-two-variables-renamed", "f(x, y)=x+2y", r"\boxed{f(a, b) = a + 2b}", "correct"),
    Case("function-variables-swapped-names", "f(x, y)=x+2y", r"\boxed{f(y, x) = y + 2x}", "correct"),
    Case("function-variables-swapped-wrong", "f(x, y)=x+2y", r"\boxed{f(a, b) = b + 2a}", "incorrect"),
    Case("function-variables-swapped-body", "f(x, y)=x+2y", r"\boxed{f(y, x) = x + 2y}", "incorrect"),
    Case("function-constant-in-its-variable", "g(x)=x^2", r"\boxed{g(t)=x^2}", "incorrect"),
    Case("function-free-gold-variable", "g(x)=x^2+x", r"\boxed{g(t)=t^2+x}", "incorrect"),
    Case("function-other-name", "g(x)=x^2", r"\boxed{f(t)=t^2}", "incorrect"),
    Case("function-other-body", "g(x)=x^2", r"\boxed{g(t)=t^3}", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_label_forms(case: Case) -> None:
    assert_case(case)
