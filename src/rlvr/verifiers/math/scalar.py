r"""Comparison of single answers: choice letters, numbers in a base, clock times, numbers, sympy values, text.

Numbers compare as exact rationals (``18.00 == 18``, ``1/2 == 0.5``; ``50 != 0.5``); a decimal
against an exact value follows the one decimal rule (`_decimals_agree`); anything else is parsed
and compared by `symbolic.sympy_equal`; prose compares case- and space-insensitively.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from rlvr.verifiers.math.config import MathConfig
from rlvr.verifiers.math.exact import exact_zero
from rlvr.verifiers.math.forms import canon, kinds_differ
from rlvr.verifiers.math.parse import ParsedNumber, parse_number, to_sympy
from rlvr.verifiers.math.symbolic import sympy_equal

__all__: list[str] = []

_CHOICE_RE = re.compile(r"^\(?\s*([A-J])\s*\)?(?:[.:]|\s|$)")
_OTHER_CHOICE_RE = re.compile(r"(?<![A-Za-z\\])([A-J])(?![A-Za-z])")
HEDGED = "hedged"  # several option letters: never equal to a gold letter


def choice_letter(s: str, *, any_case: bool = False) -> str | None:
    """The option letter of a multiple-choice answer: "(B)", "B", "B.", "(B) 12"; None otherwise.

    With `any_case` (the gold is a choice A-E) a lowercase "b" / "(b)" reads as "B".
    """
    s = s.replace("\\text{", "").replace("}", "").strip()
    if any_case:
        s = re.sub(r"^(\(?\s*)([a-e])(?=\s*\)?(?:[.:]|\s|$))", lambda m: m.group(1) + m.group(2).upper(), s)
    m = _CHOICE_RE.match(s)
    if m is None or (len(s) > 3 and not s.startswith("(")):
        return None
    if any(other != m.group(1) for other in _OTHER_CHOICE_RE.findall(s[m.end():])):
        return HEDGED  # "(B) (C)", "(A B C D)", "(B) or (D)": several choices are no choice
    return m.group(1)


_BASED_RE = re.compile(r"^([0-9A-Za-z]{1,60})(?:\.([0-9A-Za-z]{1,60}))?_\{?(\d{1,2})\}?$")


def _based(s: str) -> tuple[Fraction | None, str] | None:
    """(value, digits) of a number written with a base subscript (`101_2`, `0.101_{2}`, `1A_{16}`); None otherwise.

    The value is None when a digit is not one of the base's (`41121_3`). A letter with an index and
    no decimal digit (`a_2`, `x_{10}`) is a variable, not a number.
    """
    m = _BASED_RE.match(canon(s))
    if m is None or not 2 <= int(m.group(3)) <= 36:
        return None
    whole, frac, base = m.group(1), m.group(2) or "", int(m.group(3))
    digits = whole + ("." + frac if frac else "")
    if not re.search(r"\d", digits):
        return None
    try:
        value = Fraction(int(whole, base)) + (Fraction(int(frac, base), base ** len(frac)) if frac else 0)
    except ValueError:  # a digit the base does not have
        return None, digits
    return value, digits


def base_equal(g: str, p: str) -> bool | None:
    r"""Numbers written with a base subscript: by value (`101_2` is 5, `0.101_2` is 5/8, not `101_3`); None otherwise.

    Against a number without a subscript the subscripted side keeps its digit reading (`1202_7` is
    `1202`, as the grammar reads it; `0.101_2` is not `\frac{5}{8}`): a question asking for base 2
    wants base-2 digits. A digit the base does not have (`41121_3`) equals nothing.
    """
    gb, pb = _based(g), _based(p)
    if gb is None and pb is None:
        return None
    if gb is not None and pb is not None:
        return gb[0] is not None and gb[0] == pb[0]
    based = gb if gb is not None else pb
    if based is None:
        return None
    value, digits = based
    plain = parse_number(p if gb is not None else g)
    if plain is None:
        return None  # an expression: the grammar's digit reading is compared
    reading = parse_number(digits)
    return value is not None and reading is not None and reading.value == plain.value


_TIME_RE = re.compile(r"^(\d{1,2}):([0-5]\d)$")
_COLON_RE = re.compile(r"^(\d+):(\d+)$")


def clock_equal(g: str, p: str) -> str | bool | None:
    """A gold time `h:mm` (`1:30`) against a predicted `a:b`: equal only as the same time, never as a ratio.

    Other `a:b` golds (`1:2`, `3:4`) are ratios and compare as the quotient a/b (the parser's reading),
    so `2:4` equals `1:2`; a time `1:30` does not equal `2:60`. None: not a time question.
    """
    gm, pm = _TIME_RE.match(canon(g)), _COLON_RE.match(canon(p))
    if gm is None or pm is None:
        return None
    same = (int(gm.group(1)), int(gm.group(2))) == (int(pm.group(1)), int(pm.group(2)))
    return "time" if same else False


# -- scalar comparison ----------------------------------------------------------------------
def scalar_equal(g: str, p: str, cfg: MathConfig) -> str | None:
    """How two single answers (numbers, expressions, relations, text) are equal, or None when they are not."""
    gn, pn = parse_number(g), parse_number(p)
    if gn is not None and pn is not None:
        if gn.value == pn.value:
            return "numeric"
        if _rounds_to_exact(gn, pn, cfg):
            return "numeric, a correctly rounded decimal of the exact value"
        if _rounded_match(gn.value, pn.value, pn.decimals, cfg):
            return f"numeric, rounded to {cfg.float_rounding} decimals"
        return None
    ga = None if kinds_differ(g, p) else to_sympy(g)
    pa = None if ga is None else to_sympy(p)  # an unparsed gold (prose) compares as text: no parse of the prediction
    if ga is not None and pa is not None:
        try:
            if sympy_equal(ga, pa, cfg) and _decimals_agree(g, p, cfg):
                return "symbolic"
        except Exception:  # sympy raises many types on odd objects: treat as "not shown equal"
            pass
    if _is_text(g) and _text_key(g) == _text_key(p):
        return "text"
    return None


_DECIMAL_LIT_RE = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])")


def _rationalize(s: str) -> str:
    r"""Decimal literals as the exact fractions they write: `6227020801.0` -> `\frac{62270208010}{10}`."""
    return _DECIMAL_LIT_RE.sub(lambda m: f"\\frac{{{int(m.group(1) + m.group(2))}}}{{{10 ** len(m.group(2))}}}", s)


def _decimals_agree(g: str, p: str, cfg: MathConfig) -> bool:
    r"""The one decimal rule: a decimal equals an exact value when it is that value correctly rounded.

    Correctly rounded: within half a unit of its last written digit (IEEE 754 round-to-nearest to the
    written places; `repr(1/3)` is `0.3333333333333333`), or a double rendering of the value (within
    2^-52 relative: `repr(math.pi / 3)`); and within `rel_tol` of the value (default
    1e-9, the default of Python's `math.isclose`, PEP 485). So at the default a correctly rounded
    decimal of N = 10 or more significant digits always passes (its relative rounding error is at most
    5 * 10^-N), a shorter rounding (`0.33`, `3.14` for `1/3`, `\pi`) fails unless `float_rounding` (or a
    larger `rel_tol`) says otherwise, and a truncation (`0.6666666666` for `2/3`) fails at any length.
    The same rule holds for every exact gold: a fraction (`_rounds_to_exact`, without sympy), `\pi`,
    a root. The relative tolerance alone would let `6227020801.0` equal `13!` or `2^{4097}+0.0` equal
    `2^{4097}+1` (sympy rounds the sum to 15 digits). So a closed answer holding decimal literals
    is re-read with each literal as its exact fraction, and the exact difference must be at most
    `0.5 * 10^-k` for the most precise literal's k decimals (`3.14159265358979` equals `\pi`,
    `3.14159` does not: the relative tolerance still applies). With variables (expressions,
    equations) the literals are the exact fractions they write and the comparison is exact:
    `0.5x` equals `\frac{x}{2}`, `1.0 \cdot 2^{n} + 10^{-12}` is not `2^{n}` and `0.3333333333333x`
    is not `\frac{x}{3}` (red team M2: a written `1.0` must not buy a tolerance for an exact term).
    `float_rounding` replaces this rule.
    """
    lits = _DECIMAL_LIT_RE.findall(g) + _DECIMAL_LIT_RE.findall(p)
    if not lits or cfg.float_rounding is not None:
        return True
    ra, rb = to_sympy(_rationalize(g)), to_sympy(_rationalize(p))
    if not (isinstance(ra, sympy.Basic) and isinstance(rb, sympy.Basic)):
        return True  # no exact reading (the grammar rejects the rewritten literal): the float comparison stands
    if ra.free_symbols or rb.free_symbols:
        return bool(sympy_equal(ra, rb, cfg))
    if not (isinstance(ra, sympy.Expr) and isinstance(rb, sympy.Expr)):
        return True
    diff = sympy.Add(ra, -rb, evaluate=False)
    if exact_zero(diff):
        return True
    places = max(len(frac) for _, frac in lits)
    digits = max(len((whole + frac).lstrip("0")) for whole, frac in lits)
    return _rounding_of(abs(diff.evalf(30)), places, digits, abs(ra.evalf(30)))


def _rounds_to_exact(gn: ParsedNumber, pn: ParsedNumber, cfg: MathConfig) -> bool:
    """The decimal rule (`_decimals_agree`) for two numeric literals, one exact (`1/3`) and one a decimal.

    The decimal, written with k places, must be the exact value correctly rounded (within half a unit
    of its last digit) and within `rel_tol` of it: `0.3333333333333333` and `0.3333333333` equal `1/3`,
    `0.33` and the truncated `0.6666666666` do not equal `1/3` and `2/3`.
    """
    if (gn.decimals is None) == (pn.decimals is None):
        return False
    exact, decimal = (gn, pn) if gn.decimals is None else (pn, gn)
    places = decimal.decimals or 0
    digits = len(str(abs(int(decimal.value * 10**places))))
    diff = abs(decimal.value - exact.value)
    return _rounding_of(diff, places, digits, abs(exact.value)) and diff <= Fraction(cfg.rel_tol) * max(
        abs(decimal.value), abs(exact.value))


# A double's relative spacing (2^-52): `repr` of the double nearest a value may miss the value's correct
# rounding in its last digit (`repr(math.pi / 3)` ends in ...976, the value in ...977) but not by more. Only a
# decimal of 15+ significant digits (DBL_DIG, C's <float.h>) can be such a rendering (`2^{4097}+0.0` is not).
_DOUBLE_EPSILON = Fraction(1, 2**52)
_DOUBLE_DIGITS = 15


def _rounding_of(diff: Any, places: int, digits: int, magnitude: Any) -> bool:
    """True when a decimal (`places` decimals, `digits` significant digits) `diff` away from an exact value rounds it.

    Correctly rounded (half a unit of the last place), or a double-precision rendering of the value of size
    `magnitude` (Python's `repr`: 15+ significant digits, within 2^-52 relative).
    """
    half, epsilon = Fraction(1, 2 * 10**places), _DOUBLE_EPSILON
    if isinstance(diff, sympy.Basic):  # a sympy Float (it may hold no digit: `0.e+1068`): compare in sympy
        half, epsilon = sympy.Rational(half.numerator, half.denominator), sympy.Rational(1, 2**52)
    return bool(diff <= half or (digits >= _DOUBLE_DIGITS and diff <= epsilon * magnitude))


def _rounded_match(gold: Any, pred: Any, decimals: int | None, cfg: MathConfig) -> bool:
    """`config.float_rounding` (k): a response given to at least k decimals matches when both round alike."""
    k = cfg.float_rounding
    if k is None or decimals is None or decimals < k:
        return False
    return bool(round(gold, k) == round(pred, k))


def _is_text(s: str) -> bool:
    return re.search(r"[A-Za-z]{2,}", s.replace("\\text", "")) is not None


def _text_key(s: str) -> str:
    s = s.replace("\\text{", "").replace("{", "").replace("}", "")
    return re.sub(r"[\s.]+", "", s).lower()
