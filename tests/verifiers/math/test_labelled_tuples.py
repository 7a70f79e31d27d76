r"""Labelled values never match an unlabelled tuple by position (red team M5).

The order of an ordered tuple is the question's, and `verify(response, reference)` never sees the
question: `y=1, x=2` against gold `(1, 2)` reads (1, 2) by position but binds x=2, and a gold
`x=1, y=2` does not say that the question asked for `(x, y)` rather than `(y, x)`. So labelled
values (two or more names) and a bare tuple or list never match, in either direction. A gold
written as a tuple assignment `(x, y) = (1, 2)` names its own order: bare `(1, 2)` matches it by
position and labelled values match it by name.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("tuple-gold-swapped-labels", "(1, 2)", r"\boxed{x=2, y=1}", "incorrect"),
    Case("tuple-gold-reversed-listing", "(1, 2)", r"\boxed{y=1, x=2}", "incorrect"),
    Case("tuple-gold-labelled-in-order", "(1, 2)", r"\boxed{x=1, y=2}", "incorrect"),
    Case("tuple-gold-reversed-tuple-assignment", "(1, 2)", r"\boxed{(y, x) = (1, 2)}", "incorrect"),
    Case("tuple-gold-tuple-assignment", "(1, 2)", r"\boxed{(x, y) = (1, 2)}", "incorrect"),
    Case("triple-gold-labelled", "(1, 2, 3)", r"\boxed{a=1, b=2, c=3}", "incorrect"),
    Case("list-gold-two-names", "1, -3", r"\boxed{x=1, y=-3}", "incorrect"),
    Case("scalar-gold-two-names", "3", r"\boxed{x=3, y=3}", "incorrect"),
    Case("labelled-gold-reversed-tuple", "x=1, y=2", r"\boxed{(2, 1)}", "incorrect"),
    Case("labelled-gold-tuple", "x=1, y=2", r"\boxed{(1, 2)}", "incorrect"),
    Case("labelled-gold-bare-list", "x=1, y=2", r"The answer is $1, 2$.", "incorrect"),
    Case("reversed-labelled-gold-tuple", "y=2, x=1", r"\boxed{(2, 1)}", "incorrect"),
    Case("tuple-assignment-gold-bare-tuple", "(x, y) = (1, 2)", r"\boxed{(1, 2)}", "correct"),
    Case("tuple-assignment-gold-bare-list", "(x, y) = (1, 2)", r"\boxed{1, 2}", "correct"),
    Case("tuple-assignment-gold-reversed-tuple", "(x, y) = (1, 2)", r"\boxed{(2, 1)}", "incorrect"),
    Case("tuple-assignment-gold-by-name", "(x, y) = (1, 2)", r"\boxed{y=2, x=1}", "correct"),
    Case("tuple-assignment-gold-swapped-names", "(x, y) = (1, 2)", r"\boxed{x=2, y=1}", "incorrect"),
    Case("triple-assignment-gold-bare", "(a, b, c) = (1, 2, 3)", r"\boxed{(1, 2, 3)}", "correct"),
    Case("triple-assignment-gold-by-name", "(a, b, c) = (1, 2, 3)", r"\boxed{c=3, b=2, a=1}", "correct"),
    Case("triple-assignment-gold-reversed", "(a, b, c) = (1, 2, 3)", r"\boxed{(3, 2, 1)}", "incorrect"),
    Case("bare-tuple-both-sides", "(1, 2)", r"\boxed{(1, 2)}", "correct"),
    Case("roots-one-name", "1, -3", r"\boxed{x=1, x=-3}", "correct"),
    Case("scalar-one-name", "3", r"\boxed{x = 3}", "correct"),
    Case("bracketed-labelled-list", "f(n)=n, g(n)=1", r"\boxed{\left( f(n) = n, g(n) = 1 \right)}", "correct"),
    Case("bracketed-labelled-list-swapped", "f(n)=n, g(n)=1", r"\boxed{( f(n) = 1, g(n) = n )}", "incorrect"),
    # A tuple assignment then the bare tuple is one answer stated twice, not a hedge (ProcessBench math-847).
    Case("tuple-assignment-then-tuple", "(6,5)", "Final answer: $(b,c)=(6,5)$\n\n$\\boxed{(6,5)}$", "correct"),
    Case("tuple-assignment-then-other-tuple", "(6,5)", "Final answer: $(b,c)=(5,6)$\n\n$\\boxed{(6,5)}$", "incorrect"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_labelled_tuples(case: Case) -> None:
    assert_case(case)
