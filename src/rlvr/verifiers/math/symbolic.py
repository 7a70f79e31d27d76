"""Symbolic and numeric equivalence of parsed answers (sympy).

Closed expressions compare exactly when both are exact rationals, else at 30 significant digits
with a relative tolerance; expressions with free symbols are evaluated at fixed points (distinct
per symbol) and fall back to `sympy.simplify` only for small expressions. Relations compare up
to a nonzero (equations) or positive (inequalities) constant factor. Huge factorials, sums and
products are compared structurally and never evaluated.
"""

from __future__ import annotations

import functools
from typing import Any

import sympy
from sympy.core.function import AppliedUndef
from sympy.core.relational import Relational

from rlvr.verifiers.math.config import MathConfig
from rlvr.verifiers.math.exact import (
    EXACT_POINTS,
    beyond_bound,
    closed_and_apart,
    exact_point,
    exact_rational,
    exact_zero,
    no_value,
    substitute,
    symbolic_exponent,
    unbounded,
    zero_at_point,
)
from rlvr.verifiers.math.forms import brackets
from rlvr.verifiers.math.normalize import split_top_level
from rlvr.verifiers.math.parse import to_sympy
from rlvr.verifiers.math.proofs import (
    POINTS,
    combines_to_zero,
    evaluate,
    expands_to_zero,
    point,
    simplified_zero,
)

__all__: list[str] = []

_MIN_DEFINED = 6  # evaluation points inside both domains that an expression comparison needs


def sympy_equal(a: Any, b: Any, cfg: MathConfig) -> bool:
    """True when two parsed answers (expressions, relations, sets, matrices) are equivalent."""
    if _undefined(a) or _undefined(b):
        return False  # `12:00` parses as 12/0: never equal by accident
    if a == b or (type(a) is type(b) and len(getattr(a, "args", ())) == len(getattr(b, "args", ()))
                  and sympy.srepr(a) == sympy.srepr(b)):
        return True  # (`srepr` costs milliseconds on a sum: only objects of one shape are printed)
    if _heavy(a) or _heavy(b):
        return False  # structural only: no evaluation of `(10^{10})!` or 10^6-term sums
    a, b = _opaque_calls(_explicit(a), _explicit(b))
    if a == b:
        return True
    if isinstance(a, sympy.MatrixBase) or isinstance(b, sympy.MatrixBase):
        return _matrix_equal(a, b, cfg)
    if isinstance(a, Relational) and isinstance(b, Relational):
        return _relation_equal(a, b, cfg)
    if isinstance(a, (sympy.And, sympy.Or, Relational)):
        return _relation_as_set_equal(a, b, cfg)
    if isinstance(b, (sympy.And, sympy.Or, Relational)):
        return _relation_as_set_equal(b, a, cfg)
    if isinstance(a, sympy.Set) or isinstance(b, sympy.Set):
        return _set_equal(a, b, cfg)
    if isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr):
        return _expr_equal(a, b, cfg)
    return False


# Mixes a tuple's item values in order (an irrational point, so that (1, 2) and (2, 1) differ).
_MIX = complex(0.6180339887, 0.4142135624)


@functools.lru_cache(maxsize=4096)
def fingerprint(s: str) -> complex | None:
    """The value of the answer `s` with its variables at fixed points (15 digits); None when it has none.

    Only an order of tries for list items (`equivalence._unordered`): equal items have about the same value.
    A tuple or list (`(1, 0)`, `1, 2`) is its items' values mixed in order, without parsing it whole: the LaTeX
    grammar spends 50-150 ms on one tuple, and a tuple is not an expression with a value anyway.
    """
    group = brackets(s)
    items = group[2] if group is not None else split_top_level(s)
    if len(items) > 16:
        return None
    if len(items) > 1:
        values = [fingerprint(item) for item in items]
        if any(v is None for v in values):
            return None
        return sum(v * _MIX**k for k, v in enumerate(values) if v is not None)
    parsed = to_sympy(s) if len(s) <= 200 else None
    if not isinstance(parsed, sympy.Expr) or _heavy(parsed):
        return None
    try:
        parsed = _opaque_calls(parsed, parsed)[0]
        value = sympy.N(substitute(parsed, {x: point(x.name, 0) for x in parsed.free_symbols}), 15)
        return complex(value) if value.is_number else None
    except Exception:  # no value at the point (a pole, an odd object): no fingerprint
        return None


def _opaque_calls(a: Any, b: Any) -> tuple[Any, Any]:
    """Each call of an undefined function (`g(t)`, `f(x+1)`) as one variable of its own, on both sides alike.

    An identity in those variables holds for every function (`5 - 4g(t)` is `-4g(t) + 5`); `5 - 3g(t)`
    differs from `5 - 4g(t)` at the first point, where evaluating `g` itself would find no value at any
    point and fall back to `simplify` (a quarter of a second). Calls with the same argument are one
    variable (`g(2t)` and `g(t+t)` are sympy's one `g(2t)`); calls that are equal only after rewriting
    their arguments are told apart (a false fail, never a false pass).
    """
    calls = {c for x in (a, b) if isinstance(x, sympy.Basic) for c in x.atoms(AppliedUndef)}
    if not calls:
        return a, b
    names = {c: sympy.Symbol(f"{c}") for c in sorted(calls, key=str)}
    return (a.xreplace(names) if isinstance(a, sympy.Basic) else a,
            b.xreplace(names) if isinstance(b, sympy.Basic) else b)


_HEAVY_LIMIT = 10**5


def _heavy(x: Any) -> bool:
    """True when evaluating `x` could take unbounded time or memory (huge factorials, sums, products)."""
    if not isinstance(x, sympy.Basic):
        return False
    for node in sympy.preorder_traversal(x):
        if isinstance(node, (sympy.factorial, sympy.gamma, sympy.binomial)) and any(_big(a) for a in node.args):
            return True
        if isinstance(node, (sympy.Sum, sympy.Product)) and any(
            _big(bound) for limit in node.limits for bound in limit[1:]
        ):
            return True
    return False


def _big(arg: Any) -> bool:
    r"""True for an argument or bound past `_HEAVY_LIMIT`, or one with no value.

    An argument with variables (`n!`, `(n-2)!`, `\binom{2n}{n}`) is big only when a number in it is:
    the variables take small exact points (`EXACT_POINTS`), so `\frac{n!}{(n-2)!}` is evaluated and
    equals `n(n-1)`, while `(10^{10} n)!` stays structural.
    """
    try:
        if isinstance(arg, sympy.Basic) and arg.free_symbols:
            return any(abs(number) > _HEAVY_LIMIT for number in arg.atoms(sympy.Number))
        value = sympy.N(arg, 15)
        return not value.is_number or abs(value) > _HEAVY_LIMIT
    except Exception:  # an unevaluable bound counts as big
        return True


def _explicit(x: Any) -> Any:
    """Evaluate an unevaluated small matrix product or sum (`A B` of two pmatrix literals)."""
    if isinstance(x, sympy.MatrixExpr) and not isinstance(x, sympy.MatrixBase):
        rows, cols = x.shape
        if isinstance(rows, (int, sympy.Integer)) and isinstance(cols, (int, sympy.Integer)) and rows * cols <= 400:
            return x.as_explicit()
    return x


def _undefined(x: Any) -> bool:
    try:
        return bool(x.has(sympy.zoo, sympy.nan))
    except Exception:  # objects without `has`
        return False


def _matrix_equal(a: Any, b: Any, cfg: MathConfig) -> bool:
    if not (isinstance(a, sympy.MatrixBase) and isinstance(b, sympy.MatrixBase)) or a.shape != b.shape:
        return False
    return all(_expr_equal(x, y, cfg) for x, y in zip(a, b, strict=True))


def _set_equal(a: Any, b: Any, cfg: MathConfig) -> bool:
    if isinstance(a, sympy.FiniteSet) and isinstance(b, sympy.FiniteSet):
        if len(a) != len(b):
            return False
        unused = list(b)
        for x in a:
            idx = next((j for j, y in enumerate(unused) if sympy_equal(x, y, cfg)), None)
            if idx is None:
                return False
            del unused[idx]
        return True
    if isinstance(a, sympy.Interval) and isinstance(b, sympy.Interval):
        return (a.left_open, a.right_open) == (b.left_open, b.right_open) and _expr_equal(
            a.start, b.start, cfg
        ) and _expr_equal(a.end, b.end, cfg)
    if isinstance(a, sympy.Set) and isinstance(b, sympy.Set):
        ca, cb = _canonical_intervals(a), _canonical_intervals(b)
        if ca is not None and cb is not None:  # unions of intervals: the merged, sorted pieces decide
            return len(ca) == len(cb) and all(_set_equal(x, y, cfg) for x, y in zip(ca, cb, strict=True))
        return bool(a.symmetric_difference(b) == sympy.S.EmptySet)
    return False


def _canonical_intervals(x: Any) -> list[Any] | None:
    """The pieces of a union of intervals with numeric ends, merged and sorted (sympy's evaluated Union); else None.

    That form is unique, so two such sets are equal exactly when their pieces are.
    """
    pieces, stack = [], [x]
    while stack:  # unevaluated unions nest (`Union(Union(a, b), c)`, as the grammar builds them)
        node = stack.pop()
        if isinstance(node, sympy.Union):
            stack.extend(node.args)
        else:
            pieces.append(node)
    if not all(isinstance(p, sympy.Interval) and p.start.is_number and p.end.is_number for p in pieces):
        return None
    merged = sympy.Union(*pieces)
    out = list(merged.args) if isinstance(merged, sympy.Union) else [merged]
    return out if all(isinstance(p, sympy.Interval) for p in out) else None


def _relation_as_set_equal(a: Any, b: Any, cfg: MathConfig) -> bool:
    r"""A gold inequality in one variable (`-2 \le x \le 7`) equals the predicted set (`[-2, 7]`)."""
    if isinstance(b, sympy.Eq) and isinstance(b.rhs, sympy.Set):
        b = b.rhs
    if not isinstance(b, sympy.Set):
        return bool(a == b)
    free = a.free_symbols
    if len(free) != 1:
        return False
    var = next(iter(free))
    simple = _interval_of(a, var)
    if simple is not None:
        return _set_equal(simple, b, cfg)
    real = sympy.Dummy("t", real=True)
    return _set_equal(a.subs(var, real).as_set(), b, cfg)


def _interval_of(rel: Any, var: Any) -> Any:
    r"""The interval of `x > 2`, `3 \geq x`, `-2 \leq x < 7` (numeric real bounds); None for other relations.

    The same set as `as_set()` gives for a real `x`, without the inequality solver (50 ms a call).
    """
    parts = rel.args if isinstance(rel, sympy.And) else (rel,)
    if len(parts) > 2 or not all(isinstance(r, (sympy.StrictLessThan, sympy.LessThan, sympy.StrictGreaterThan,
                                                 sympy.GreaterThan)) for r in parts):
        return None
    interval = sympy.Interval(-sympy.oo, sympy.oo)
    for r in parts:
        lo, hi, strict = (r.lhs, r.rhs, isinstance(r, sympy.StrictLessThan)) if isinstance(
            r, (sympy.StrictLessThan, sympy.LessThan)) else (r.rhs, r.lhs, isinstance(r, sympy.StrictGreaterThan))
        if lo == var and hi.is_number and hi.is_extended_real:
            interval = interval.intersect(sympy.Interval(-sympy.oo, hi, True, strict))
        elif hi == var and lo.is_number and lo.is_extended_real:
            interval = interval.intersect(sympy.Interval(lo, sympy.oo, strict, True))
        else:
            return None
    return interval


def _relation_equal(a: Relational, b: Relational, cfg: MathConfig) -> bool:
    if isinstance(a, sympy.Eq) != isinstance(b, sympy.Eq) or isinstance(a, sympy.Ne) != isinstance(b, sympy.Ne):
        return False
    if isinstance(a, (sympy.Eq, sympy.Ne)):
        if isinstance(a.rhs, sympy.Set) or isinstance(b.rhs, sympy.Set):
            return bool(a.lhs == b.lhs) and sympy_equal(a.rhs, b.rhs, cfg)
        return _proportional(a.lhs - a.rhs, b.lhs - b.rhs, cfg, positive=False)
    ga, sa = _as_positive_form(a)
    gb, sb = _as_positive_form(b)
    return sa == sb and _proportional(ga, gb, cfg, positive=True)


def _as_positive_form(r: Relational) -> tuple[Any, bool]:
    """`a < b` -> (b - a, strict): the relation reads `expr > 0` (strict) or `expr >= 0`."""
    if isinstance(r, (sympy.StrictLessThan, sympy.LessThan)):
        return r.rhs - r.lhs, isinstance(r, sympy.StrictLessThan)
    return r.lhs - r.rhs, isinstance(r, sympy.StrictGreaterThan)


def _proportional(a: Any, b: Any, cfg: MathConfig, *, positive: bool) -> bool:
    """True when `a == c * b` for a constant c != 0 (c > 0 when `positive`), checked at fixed points."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    if symbols and (a.free_symbols != b.free_symbols):
        return False
    if not (a.atoms(sympy.Float) or b.atoms(sympy.Float)):
        return _exact_proportional(a, b, symbols, positive=positive)
    ratio: Any = None
    defined = 0
    for k in range(len(POINTS) if symbols else 1):
        subs = {s: point(s.name, k) for s in symbols}
        va, vb = evaluate(substitute(a, subs)), evaluate(substitute(b, subs))
        if va is None or vb is None:
            continue  # outside either side's domain at this point
        defined += 1
        if _close(va, 0, cfg) and _close(vb, 0, cfg):
            continue
        if _close(vb, 0, cfg) or _close(va, 0, cfg):
            return False
        r = va / vb
        if ratio is None:
            ratio = r
        elif not _close(r, ratio, cfg):
            return False
    if defined < (_MIN_DEFINED if symbols else 1):
        return bool(sympy.simplify(a - b) == 0)
    if ratio is None:
        return bool(a == b)
    return not positive or bool(sympy.re(ratio) > 0)


def _exact_proportional(a: Any, b: Any, symbols: list[Any], *, positive: bool) -> bool:
    r"""`a == c * b` for a constant c != 0 (c > 0 when `positive`), exactly: no tolerance between exact forms.

    The ratio c is read exactly at the first exact point where `b` is nonzero; at every point
    inside both domains `a - c b` must be exactly 0 (`x + y = 10^{12}` is not `x + y = 10^{12} + 1`).
    """
    ratio: Any = None
    defined = 0
    for k in range(len(EXACT_POINTS) if symbols else 1):
        subs = {x: exact_point(x.name, k) for x in symbols}
        va, vb = substitute(a, subs), substitute(b, subs)
        if unbounded(va) or unbounded(vb):
            continue
        za, zb = exact_zero(va), exact_zero(vb)
        if symbols and za is None and no_value(va):
            continue  # the gold (`a`) has no value here
        if za is None or zb is None:
            return False  # undecided: not shown proportional
        defined += 1
        if za or zb:
            if za != zb:
                return False  # one side zero, the other not
            continue
        if ratio is None:
            ratio = va / vb
            continue
        if not exact_zero(sympy.Add(va, -ratio * vb, evaluate=False)):
            return False
    if defined < (_MIN_DEFINED if symbols else 1):
        return simplified_zero(a, b)
    if ratio is None:
        return bool(a == b)
    return not positive or bool(sympy.re(sympy.N(ratio, 30)) > 0)


def _close(a: Any, b: Any, cfg: MathConfig) -> bool:
    """Relative closeness at 30 digits; the absolute tolerance applies only when one side is exactly 0."""
    diff = abs(sympy.N(a - b, 30))
    scale = max(abs(sympy.N(a, 30)), abs(sympy.N(b, 30)))
    if diff == 0:
        return True
    if a == 0 or b == 0:
        return bool(diff <= cfg.abs_tol)
    return bool(diff <= cfg.rel_tol * scale)


def _rounded_close(a: Any, b: Any, k: int) -> bool:
    va, vb = evaluate(a), evaluate(b)
    if va is None or vb is None or not (va.is_real and vb.is_real):
        return False
    return bool(round(float(va), k) == round(float(vb), k))


def _exact_decision(a: Any, b: Any) -> bool | None:
    r"""Decide without tolerance when infinities are involved or both sides are exact.

    Exact forms (integers, rationals, factorials, binomials, powers, `\pi`, roots: no decimal
    literal anywhere) never compare with a tolerance: `13!` is not 6227020801,
    `10^{10}\pi + 1` is not `10^{10}\pi`, `2^{n} + 10^{-12}` is not `2^{n}` (red team M2). With free
    symbols both sides are evaluated at exact rational points, variables in exponents included
    (`e^{100x}`, `x^{x}`); a point where both sides exceed `10^{20000}` (`2^{2^{n}}` at a
    large `n`) decides nothing, a point where only one does is a difference. Exact values too
    large to decide (`exact_zero` is None) are not equal. Fewer than `_MIN_DEFINED` points inside
    both domains: a bounded `simplify` of the difference decides. None only when a decimal is
    involved (the caller's float comparison with `rel_tol` decides).
    """
    if a.has(sympy.oo, -sympy.oo, sympy.zoo) or b.has(sympy.oo, -sympy.oo, sympy.zoo):
        return bool(a == b)
    ra, rb = exact_rational(a), exact_rational(b)
    if ra is not None and rb is not None:
        return bool(ra == rb)  # both exact: no tolerance (2^{100}+1 is not 2^{100})
    if a.atoms(sympy.Float) or b.atoms(sympy.Float):
        return None
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda x: x.name)
    early = _before_points(a, b, symbols)
    if early is not None:
        return early
    defined, towers = 0, bool(symbols) and symbolic_exponent(a, b)
    for k in range(len(EXACT_POINTS) if symbols else 1):
        subs = {x: exact_point(x.name, k) for x in symbols}
        sa, sb = substitute(a, subs), substitute(b, subs)
        if symbols and (unbounded(sa) or unbounded(sb)):
            continue  # a point outside either side's domain (`x/|x|` at 0) decides nothing
        huge = (beyond_bound(sa), beyond_bound(sb)) if towers else (False, False)
        if all(huge):
            continue  # both sides beyond the size bound here (`2^{2^{n}}`): another point decides
        zero = None if any(huge) else zero_at_point(sa, sb)
        if zero is None and symbols and no_value(sa):
            continue  # the gold (`a`) has no value here: a pole reached through unevaluated arithmetic (`1/(2-1*2)`)
        if not zero:
            return False  # nonzero, or too large to decide exactly: never a tolerance between exact forms
        defined += 1
    if symbols and defined < _MIN_DEFINED:
        return simplified_zero(a, b)  # too few points in both domains: an exact proof or not equal
    return True


def _before_points(a: Any, b: Any, symbols: list[Any]) -> bool | None:
    """`_exact_decision`'s answer when it needs no evaluation point, else None."""
    if len(symbols) > 8:
        return False
    if closed_and_apart(a, b, symbols):
        return False  # two closed values that differ: what the points would conclude, at a fraction of the cost
    if expands_to_zero(a, b):
        return True  # an identity (`\frac{\pi}{6} + k\pi` and `k\pi + \frac{\pi}{6}`): no point needed
    if combines_to_zero(a, b):
        return True  # a factorial or binomial identity (`\frac{n!}{(n-2)!}`, `n(n-1)`): no gamma at 400 digits
    return None


def _expr_equal(a: Any, b: Any, cfg: MathConfig) -> bool:
    if a == b:
        return True
    if not isinstance(a, sympy.Expr) or not isinstance(b, sympy.Expr):
        return sympy_equal(a, b, cfg) if not (isinstance(a, sympy.Expr) or isinstance(b, sympy.Expr)) else False
    exact = _exact_decision(a, b)
    if exact is not None:
        return exact
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    if len(symbols) > 8:
        return False
    if not symbols and cfg.float_rounding is not None and _rounded_close(a, b, cfg.float_rounding):
        return True
    decided = 0
    for k in range(len(POINTS) if symbols else 1):
        subs = {s: point(s.name, k) for s in symbols}
        va, vb = evaluate(substitute(a, subs)), evaluate(substitute(b, subs))
        if va is None or vb is None:
            continue  # outside either side's domain at this point
        if not _close(va, vb, cfg):
            return False
        decided += 1
        if not symbols:
            return True
    if symbols and decided >= _MIN_DEFINED:
        return True
    return simplified_zero(a, b)
