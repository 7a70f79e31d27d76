r"""An answer with an undefined term has no value: `5 + \frac{0}{0}` is not 5 (red team, second pass).

The parsers keep `0/0`, `1/0`, `\log 0`, `\cot 0`, `(-1)!` unevaluated and the symbolic difference then cancels
them (`5 + 0/0 - 5` simplified to 0), so adding an undefined term to the right value passed.
A division by zero, a logarithm of zero or a pole (`\tan`, `\cot`, `\sec`, `\csc`, `!`, `\Gamma`) anywhere in the
answer now makes it unparseable.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("zero-over-zero", "5", r"\boxed{5 + \frac{0}{0}}", "incorrect"),
    Case("zero-over-zero-plain", "5", r"\boxed{5 + 0/0}", "incorrect"),
    Case("zero-over-zero-fraction-gold", r"\frac{1}{2}", r"\boxed{\frac{1}{2} + \frac{0}{0}}", "incorrect"),
    Case("infinities-cancel", "5", r"\boxed{5 + \frac{1}{0} - \frac{1}{0}}", "incorrect"),
    Case("log-zero-cancels", "5", r"\boxed{5 + \log 0 - \log 0}", "incorrect"),
    Case("zero-denominator-sum", "5", r"\boxed{\frac{5}{1} + \frac{0}{1-1}}", "incorrect"),
    Case("undefined-in-tuple", "(5,6)", r"\boxed{(\frac{5}{1} + \frac{0}{0}, 6)}", "incorrect"),
    Case("undefined-with-variable", "x+1", r"\boxed{x + 1 + \frac{0}{0}}", "incorrect"),
    Case("cot-pole-cancels", "5", r"\boxed{5 + \cot 0 - \cot 0}", "incorrect"),
    Case("tan-pole-cancels", "5", r"\boxed{5 + \tan\frac{\pi}{2} - \tan\frac{\pi}{2}}", "incorrect"),
    Case("negative-factorial-cancels", "5", r"\boxed{5 + (-1)! - (-1)!}", "incorrect"),
    # controls: removable forms that simplify stay equal
    Case("x-over-x", "5", r"\boxed{5 + \frac{x}{x} - 1}", "correct"),
    Case("zero-over-one", "5", r"\boxed{5 + \frac{0}{1}}", "correct"),
    Case("log-one", "5", r"\boxed{5 + \log 1}", "correct"),
    Case("tan-defined", "6", r"\boxed{5 + \tan\frac{\pi}{4}}", "correct"),
    Case("factorial-defined", "11", r"\boxed{5 + 3!}", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_undefined_terms(case: Case) -> None:
    assert_case(case)
