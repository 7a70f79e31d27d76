r"""Exact values without tolerance: whether a closed expression is zero, and the exact points variables take.

`exact_zero` decides `a - b == 0` for closed exact expressions (integers, rationals, factorials,
powers, roots, constants, functions of them) by strict evaluation at a working precision sized to
the numbers written in them (Richardson's uniformity rule of thumb, see `exact_zero`); values too
large to decide are undecided (None), which callers read as "not equal". `EXACT_POINTS` are the
small exact values substituted for variables (rationals and one irrational).
"""

from __future__ import annotations

import threading
from typing import Any

import sympy
from mpmath import libmp
from sympy.core.evalf import PrecisionExhausted

__all__: list[str] = []

_EXACT_DIGITS = 400  # working precision bound past the magnitude of the sides, decimal digits
_MAX_MAGNITUDE = 20_000  # exact values beyond 10^20000 are not evaluated (undecided)


def exact_zero(d: Any) -> bool | None:
    r"""Whether the closed exact expression `d` is zero, without tolerance.

    sympy's `evalf(strict=True)` raises `PrecisionExhausted` when it cannot find one significant
    digit of `d` at up to `_EXACT_DIGITS` digits past the magnitude of `d`'s terms plus the digits of
    the numbers written in `d` (`_written_digits`: `\pi + 10^{-500}` is worked at 900+ digits, so a
    tiny written term is found, never rounded away; the rule of thumb of Richardson's uniformity
    conjecture, "How to recognize zero", J. Symb. Comput. 24, 1997: a nonzero expression written
    with small numbers is not extremely small). Then `d` is 0 (to that many digits, a bound in
    size, never a relative tolerance) provided each term of
    `d` evaluates on its own; a term without a value (`\sin(10^{10^5})`, `\lfloor 10^{500}\pi\rfloor`)
    leaves `d` undecided (None), which callers read as not equal. A value is a proof of a nonzero
    difference. None: `d` is not a finite closed number, or evaluation failed or ran out.
    """
    if d == 0:
        return True
    if not isinstance(d, sympy.Expr) or d.free_symbols:
        return None
    try:
        precision = _working_precision(d)
        if precision is None:
            return None
        magnitude, digits = precision
        value = d.evalf(15, strict=True, maxn=digits)
    except PrecisionExhausted:
        # No digit found, but that is a zero only when every term has a value of its own and those
        # values cancel: `\sin(10^{10^5})` has none, and "unevaluable" must never read as "0".
        total = _terms_sum(d, digits)
        return None if total is None else bool(abs(total) <= sympy.Float(10, 30) ** (magnitude - digits + 10))
    except Exception:  # evaluation of odd objects fails many ways: undecided
        return None
    if not isinstance(value, sympy.Expr) or not value.is_number or value.has(sympy.nan, sympy.zoo, sympy.oo):
        return None
    return bool(value == 0)


def _working_precision(d: Any) -> tuple[int, int] | None:
    """(magnitude, digits) of `exact_zero`: the decimal size of `d`'s largest term and the digits to work at.

    None when a term is no finite number or the size is past `_MAX_MAGNITUDE`.
    """
    sizes = [_magnitude(t) for t in sympy.Add.make_args(d)]
    if any(size is None for size in sizes):
        return None
    magnitude = max((size for size in sizes if size is not None), default=0)
    digits = _EXACT_DIGITS + magnitude + _written_digits(d)
    if magnitude > _MAX_MAGNITUDE or digits > _MAX_MAGNITUDE:
        return None
    return magnitude, digits


_GUARD_DIGITS = 20


def _cancels(d: Any) -> bool | None:
    r"""`exact_zero(d)` for a `d` whose terms agree to 15 digits: each term evaluated once, no precision search.

    The terms are evaluated strictly at `_GUARD_DIGITS` past `exact_zero`'s working precision, so their
    sum is accurate far below the bound it is held to (10^(magnitude - digits), tighter than
    `exact_zero`'s own): the same verdict as `exact_zero`, without its search up to the working
    precision (sympy raising `PrecisionExhausted` after it prints the expression), which is most of the
    time of an identity (`\tan x + \cot x` against `\frac{2}{\sin 2x}`). None: undecided (a term has no value).
    """
    try:
        precision = _working_precision(d)
    except Exception:  # evaluation of odd objects fails many ways: undecided
        return None
    if precision is None:
        return None
    magnitude, digits = precision
    total = _terms_sum(d, digits + _GUARD_DIGITS)
    return None if total is None else bool(abs(total) <= sympy.Float(10, 30) ** (magnitude - digits))


# Working digits past the requested ones that sympy may use for a term: argument reduction of `\sin(1400)` needs a
# few (asked for exactly the digits it returns, it gave up: `\sin(80x)` was not `2\sin(40x)\cos(40x)`); a term
# such as `\sin(10^{10^5})` needs 10^5 and still has no value.
_TERM_GUARD = 60


def _terms_sum(d: Any, digits: int) -> Any:
    """The sum of the terms of `d`, each evaluated strictly to `digits` digits; None when one has no value."""
    total = sympy.Float(0, digits)
    try:
        for term in sympy.Add.make_args(d):
            value = term.evalf(digits, strict=True, maxn=digits + _TERM_GUARD)
            if not isinstance(value, sympy.Expr) or not value.is_number or value.has(sympy.nan, sympy.zoo, sympy.oo):
                return None
            total += value
    except Exception:  # PrecisionExhausted included: a term without a value decides nothing
        return None
    return total


def unbounded(x: Any) -> bool:
    """True when the closed value `x` is undefined or infinite (`1/0`, `log(0)`)."""
    return bool(x.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo))


def _written_digits(d: Any) -> int:
    """Decimal digits of the numbers written in `d`, capped just past `_MAX_MAGNITUDE`.

    Each rational's numerator and denominator, and `|n| * log10|b|` for a power `b^n` of a number
    with a numeric exponent (`10^{-500}`: 500).
    """
    total = 0.0
    for node in sympy.preorder_traversal(d):
        if isinstance(node, sympy.Rational):
            total += len(str(abs(node.p))) + (len(str(node.q)) if node.q != 1 else 0)
        elif isinstance(node, sympy.Pow) and node.base.is_number and node.exp.is_number:
            try:
                base, exp = abs(node.base.evalf(5)), abs(node.exp.evalf(5))
                total += float(exp) * abs(_log10(base)) if base != 0 else 0.0
            except (TypeError, ValueError, OverflowError):  # no numeric value: its own digits count
                continue
        if not total < _MAX_MAGNITUDE:  # also NaN
            return _MAX_MAGNITUDE + 1
    return int(total) + 1


def _magnitude(term: Any) -> int | None:
    """Decimal digits of |term| (0 for small terms), None when it is not a finite number."""
    value = sympy.N(term, 5)
    if not value.is_number or value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    size = abs(value)
    return 0 if size < 10 else int(_log10(size)) + 1


_LN10 = libmp.mpf_log(libmp.from_int(10), 80)


def _log10(x: Any) -> float:
    """`log10(x)` of a positive sympy number as a float, with mpmath at 80 bits.

    Not `sympy.log(x, 10)`: building that symbolic quotient costs about 80 microseconds a call, and these
    logs only size a working precision (at an exact power of ten the two may differ by one digit).
    """
    return float(libmp.to_float(libmp.mpf_div(libmp.mpf_log(sympy.Float(x)._mpf_, 80), _LN10, 80)))


def exact_rational(x: Any) -> Any:
    """The exact Rational value of a closed integer/fraction expression with small exponents, else None."""
    if isinstance(x, sympy.Rational):
        return x
    if x.free_symbols or x.atoms(sympy.Float) or not all(
        isinstance(n, (sympy.Add, sympy.Mul, sympy.Pow, sympy.Rational)) for n in sympy.preorder_traversal(x)
    ):
        return None
    for node in x.atoms(sympy.Pow):
        if not isinstance(node.exp, sympy.Integer) or abs(node.exp) > 4096 or not isinstance(node.base, sympy.Rational):
            return None
    try:
        value = x.doit()
    except (ZeroDivisionError, ValueError, TypeError):
        return None
    return value if isinstance(value, sympy.Rational) else None


def no_value(x: Any) -> bool:
    """True when the closed expression `x` has no finite value sympy can find a digit of (a pole, `0/0`)."""
    try:
        value = x.evalf(15, strict=True, maxn=_EXACT_DIGITS)
    except Exception:  # PrecisionExhausted included
        return True
    return not isinstance(value, sympy.Expr) or not value.is_number or unbounded(value)


def symbolic_exponent(*exprs: Any) -> bool:
    """True when a power in one of `exprs` has a variable in its exponent (`2^{n}`, `x^{x}`)."""
    return any(node.exp.free_symbols for x in exprs for node in x.atoms(sympy.Pow))


def beyond_bound(x: Any) -> bool:
    """True when the closed value `x` is larger than `10^_MAX_MAGNITUDE` (not evaluated exactly)."""
    try:
        size = _magnitude(x)
    except Exception:  # evaluation of odd objects fails many ways: not known to be huge
        return False
    return size is not None and size > _MAX_MAGNITUDE


_WORK = threading.local()


def count_work() -> None:
    """Count one value compared at a point (`work_done`)."""
    _WORK.count = work_done() + 1


def work_done() -> int:
    """Values compared at a point so far in this thread (`count_work` calls): a deterministic measure of work.

    A caller bounds its own work by the difference of two readings (`equivalence._unordered`): the same
    inputs always take the same number, whatever the machine's speed or load.
    """
    return int(getattr(_WORK, "count", 0))


def zero_at_point(sa: Any, sb: Any) -> bool | None:
    """`exact_zero(sa - sb)`, decided the cheapest way that gives its verdict.

    Rational values (the common case) compare directly; closed values are first told apart at 15
    digits (a proof of a difference), and when they agree, `_cancels` decides.
    """
    count_work()
    ra, rb = exact_rational(sa), exact_rational(sb)
    if ra is not None and rb is not None:
        return bool(ra == rb)
    if closed_and_apart(sa, sb, []):
        return False
    d = sympy.Add(sa, -sb, evaluate=False)
    if sa.free_symbols or sb.free_symbols:
        return exact_zero(d)
    decided = _cancels(d)
    return decided if decided is not None else exact_zero(d)


def closed_and_apart(a: Any, b: Any, symbols: list[Any]) -> bool:
    """True when `a` and `b` are closed (no `symbols`) and their values, each to 15 digits, differ.

    Each side is evaluated on its own with `evalf(strict=True)` (sympy controls the error, or raises), so a
    relative gap over 1e-10 proves `a != b`: then `exact_zero(a - b)` is False or None (it works the
    difference to 400+ digits), and no expansion can make `a - b` 0. False decides nothing. Not `a - b`
    itself: an exact zero difference runs evalf to its bound before giving up (4-13 ms).
    """
    if symbols:
        return False
    try:
        va, vb = a.evalf(15, strict=True), b.evalf(15, strict=True)
        if not (_finite_number(va) and _finite_number(vb)):
            return False
        return bool(abs(va - vb) > 1e-10 * max(abs(va), abs(vb)))
    except Exception:  # PrecisionExhausted included: decided the long way
        return False


def _finite_number(x: Any) -> bool:
    return isinstance(x, sympy.Expr) and bool(x.is_number) and not x.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo)


# Exact points: small rationals (positive, negative, integers, 0) and one irrational, sqrt(2) + 1/3. With
# rationals alone a term that vanishes at every one of them without being 0 was not seen: 471240 is a multiple of
# every denominator, so `\sin(471240\pi x)` and `\lfloor 471240x\rfloor - 471240x` are 0 at all of them (red team,
# third pass); at an irrational point they are not.
EXACT_POINTS: tuple[Any, ...] = (
    *(sympy.Rational(n, d) for n, d in ((7, 5), (13, 8), (-7, 3), (29, 11), (0, 1), (37, 5), (-5, 9), (2, 1), (52, 3),
                                        (-11, 4), (4, 7), (-3, 1), (22, 7), (5, 1), (43, 6))),
    sympy.sqrt(2) + sympy.Rational(1, 3),
)


def exact_point(name: str, k: int) -> Any:
    """A small exact point for the symbol `name` at round `k` (distinct symbols, distinct values)."""
    h = sum((i + 1) * ord(c) for i, c in enumerate(name))
    base = EXACT_POINTS[(k + h) % len(EXACT_POINTS)]
    return base if base.is_integer else base + sympy.Rational(h % 13, 17)


_BINDING = (sympy.Sum, sympy.Product, sympy.Integral, sympy.Lambda, sympy.Derivative, sympy.Limit)


def substitute(x: Any, values: dict[Any, Any]) -> Any:
    """`x` with its free variables replaced by `values`: `xreplace` (a tree rebuild, 30x faster than `subs`).

    `subs` only where a variable may also be bound (sums, integrals, limits): it leaves bound ones alone.
    """
    if any(x.atoms(*_BINDING)) if isinstance(x, sympy.Basic) else False:
        return x.subs(values)
    return x.xreplace(values)
