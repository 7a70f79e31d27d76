r"""Shortcuts for one identity: a proof without evaluation points, and a look at float points that refutes one.

`expands_to_zero` (`expand`) and `combines_to_zero` (`combsimp`, for factorials and binomials of
variables) prove an identity of small expressions outright; `simplified_zero` is the bounded last
resort (only small expressions), after `apart_somewhere` looks for a float point where the sides
differ. `POINTS` and `point` are the float evaluation points of `symbolic` (distinct per variable name).
None of these ever says "not equal" from a failed proof.
"""

from __future__ import annotations

from typing import Any

import sympy

from rlvr.verifiers.math.exact import closed_and_apart, count_work, substitute

__all__: list[str] = []

# Evaluation points: positive and negative non-integers, integers and 0, so that `|x|`, `\sqrt{x^2}`,
# `\max(x, 0)` differ from `x`, `\ln x` from `\ln|x|`, `\lfloor x\rfloor + 1` from `\lceil x\rceil` somewhere.
# Points where either side is undefined (`x/|x|` at 0) are skipped; at least `symbolic._MIN_DEFINED` must remain.
POINTS = (0.7390851, 1.6180339, -2.3581321, 2.7182818, 0.0, 7.3890561, -0.8414709, 2.0, 17.320508, -5.4365636,
           0.5772156, -3.0, 3.1415926, 5.0, 43.713714)


def point(name: str, k: int) -> sympy.Float:
    """A fixed evaluation point for the symbol `name` at round `k` (distinct symbols, distinct values)."""
    h = sum((i + 1) * ord(c) for i, c in enumerate(name))
    base = POINTS[(k + h) % len(POINTS)]
    return sympy.Float(base if base == int(base) else base + (h % 97) / 101.0, 30)


def evaluate(expr: Any) -> Any:
    """Evaluate a closed expression at 30 digits; None when it is not a finite number."""
    count_work()
    try:
        value = sympy.N(expr, 30)
    except Exception:  # evaluation of odd objects (undefined functions, sets) fails many ways
        return None
    if not isinstance(value, sympy.Expr) or value.free_symbols or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    if not value.is_number:
        return None
    return value


_EXPAND_OPS = 60  # `expand` is tried on differences this small, with integer powers up to `_EXPAND_POWER`
_EXPAND_POWER = 12


def expands_to_zero(a: Any, b: Any) -> bool:
    """True when `expand(a - b)` is 0: an identity, so equal without evaluation (never a reason for "not equal").

    Only for small expressions whose integer powers are small (`(x+1)^{1000}` is not expanded).
    """
    try:
        if sympy.count_ops(a) + sympy.count_ops(b) > _EXPAND_OPS:
            return False
        for x in (a, b):
            for node in x.atoms(sympy.Pow):
                if node.exp.is_Integer and abs(int(node.exp)) > _EXPAND_POWER:
                    return False
                if node.exp.is_number and not node.exp.is_Rational:
                    return False  # `2^{\sqrt 2}`: nothing to expand, and evaluation decides quickly
        return bool(sympy.expand(a - b) == 0)
    except Exception:  # expansion of odd objects fails many ways: no proof
        return False


_COMBINATORIAL = (sympy.factorial, sympy.binomial, sympy.gamma, sympy.RisingFactorial, sympy.FallingFactorial)


def combines_to_zero(a: Any, b: Any) -> bool:
    """True when `combsimp(a - b)` is 0 for factorials, binomials or gammas of variables (a proof of an identity).

    Only for small expressions holding such a term; never a reason for "not equal" (the points decide).
    """
    if not any(node.free_symbols for x in (a, b) for node in x.atoms(*_COMBINATORIAL)):
        return False
    try:
        if sympy.count_ops(a) + sympy.count_ops(b) > _EXPAND_OPS:
            return False
        return bool(sympy.combsimp(a - b) == 0)
    except Exception:  # simplification of odd objects fails many ways: no proof
        return False


def simplified_zero(a: Any, b: Any) -> bool:
    """True when `simplify(a - b)` is 0 (only for small expressions: `simplify` is unbounded in time).

    A cheap look first (`apart_somewhere`): two sides that differ at some point are not simplified.
    """
    if sympy.count_ops(a) + sympy.count_ops(b) > 80 or apart_somewhere(a, b):
        return False
    return bool(sympy.simplify(a - b) == 0)


# Points where answers with a restricted domain (`\sqrt{x-100}`, `\ln(x-1000)`) may have a value.
_FAR_POINTS = (1000.37, -1000.37, 10**6 + 0.71, 0.013)


def apart_somewhere(a: Any, b: Any) -> bool:
    """True when `a` and `b` have clearly different finite values (15 digits each) at one of the float points."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda x: x.name)
    for k in range(len(POINTS) + len(_FAR_POINTS)):
        values = {x: point(x.name, k) if k < len(POINTS) else sympy.Float(_FAR_POINTS[k - len(POINTS)] + i, 30)
                  for i, x in enumerate(symbols)}
        if closed_and_apart(substitute(a, values), substitute(b, values), []):
            return True
        if not symbols:
            return False
    return False
