r"""The last-number fallback reads a bare fraction, root or power whole (found by the lighteval suite, issue 31).

"The probability is \frac{2}{5}." (no `$`, no box) was read as its last number, the denominator 5, so it
scored correct against gold 5; "\sqrt{2} meters" scored correct against 2. A fraction, root or power written
without delimiters is now one candidate, taken when it ends last.
"""

from __future__ import annotations

import pytest
from _math_probe import Case, assert_case, params

CASES = [
    Case("fraction-not-denominator", "5", r"The probability is \frac{2}{5}.", "incorrect"),
    Case("fraction-not-numerator", "2", r"The probability is \frac{2}{5}.", "incorrect"),
    Case("fraction-value", r"\frac{2}{5}", r"The probability is \frac{2}{5}.", "correct"),
    Case("dfrac-value", "0.4", r"so the share is \dfrac{2}{5} of it", "correct"),
    Case("root-not-radicand", "2", r"So the side is \sqrt{2} meters long", "incorrect"),
    Case("root-value", r"\sqrt{2}", r"So the side is \sqrt{2} meters long", "correct"),
    Case("cube-root-not-radicand", "8", r"the edge is \sqrt[3]{8} cm", "incorrect"),
    Case("power-not-base", "2", r"We get 2^{10} ways", "incorrect"),
    Case("power-value", "1024", r"We get 2^{10} ways", "correct"),
    Case("mixed-number", "3.5", r"It is 3\frac{1}{2} cups", "correct"),
    Case("negative-fraction", "-0.5", r"so it is -\frac{1}{2} now", "correct"),
    Case("denied-fraction", r"\frac{2}{5}", r"it is not \frac{2}{5}", "incorrect"),
    Case("chinese-fraction-not-denominator", "5", r"答案：每份应该是 (\frac{2}{5}) 吨。", "incorrect"),
    Case("chinese-fraction-value", "2/5", r"答案：每份应该是 (\frac{2}{5}) 吨。", "correct"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_fallback_expressions(case: Case) -> None:
    assert_case(case)
