r"""A small recursive-descent parser for the common LaTeX answer forms, ahead of the ANTLR grammar.

ANTLR (``latex2sympy2_extended``) costs 1-400 ms per answer and is most of the verifier's time;
most answers are simple: ``n^{2}``, ``\frac{3}{4}``, ``2\sqrt{3}``, ``5r^5``, ``\pi r^2``,
``-\frac{x}{2}+1``, ``20!``. This parser reads exactly that subset, builds the same sympy
objects as ``latex2sympy`` (unevaluated sums, products and powers; decimals as 53-bit
``Float``; ``e`` as Euler's number; ``x_1`` / ``x_{12}`` as symbols) and returns None for
anything else, which then goes to ANTLR unchanged. Also read as the grammar reads them: ``\pm\infty``
alone; functions ``\sin \cos \tan \cot \sec \csc``, their ``\arc`` and hyperbolic forms, ``\exp``,
``\ln`` (base e), ``\log`` (base 10) and ``\log_{b}``, with a parenthesised argument or a bare
product of factors (``\sin 2\pi x``), a power (``\sin^2 x``) or ``^{-1}`` for the inverse;
``\lfloor..\rfloor``, ``\lceil..\rceil``; a letter before a parenthesised expression (``n(n+1)``
is a product); a mixed number ``3\frac{3}{8}`` before ``+``/``-``/the end; ``pmatrix``/``bmatrix``
of such entries; a value with a one-letter label (``x = \frac{\pi}{6} + k\pi``). Ambiguous forms are always
left to ANTLR: commas, brackets, a letter before
``(x)`` (a function for the grammar), ``a/bc``, ``a^b^c``, a function argument holding ``/``,
``\cdot``, a sign or a bracket, any other command.
``tests/verifiers/math/test_fast_parser.py`` checks it against ``latex2sympy`` on real answers.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

from rlvr.verifiers.math.fastexpr import negative, parse_expression
from rlvr.verifiers.math.normalize import split_top_level

__all__: list[str] = []
_MATRIX_RE = re.compile(r"\\begin\{([pb]matrix)\}(.*)\\end\{\1\}", re.DOTALL)
_INFINITY_RE = re.compile(r"([-+]?)\s*\\infty")
_BASE_RE = re.compile(r"(\d{1,60})_(?:\d|\{\d{1,2}\})")  # a base subscript (`equivalence` reads its value)
_MAX_LEN = 200


def _matrix(body: str) -> Any:
    r"""A `pmatrix`/`bmatrix` body (`1 & 2 \\ 3 & 4`) as the grammar's Matrix; None for an entry outside the subset."""
    rows = [row.split("&") for row in body.split("\\\\")]
    if rows and not "".join(rows[-1]).strip():
        rows = rows[:-1]  # a trailing row separator
    if not rows or len({len(row) for row in rows}) != 1:
        return None
    entries = [[fast_parse(cell.strip()) for cell in row] for row in rows]
    if any(entry is None for row in entries for entry in row):
        return None
    return sympy.Matrix(entries)


_RELATIONS: dict[str, Any] = {"<": sympy.StrictLessThan, ">": sympy.StrictGreaterThan, "\\leq": sympy.LessThan,
                              "\\geq": sympy.GreaterThan, "\\neq": sympy.Unequality}
_RELATION_SPLIT_RE = re.compile(r"(<|>|\\leq(?![a-zA-Z])|\\geq(?![a-zA-Z])|\\neq(?![a-zA-Z]))")


def _items(inner: str) -> list[Any] | None:
    """Each top-level comma item parsed, or None when one is outside the subset (or empty)."""
    parts = split_top_level(inner, seps=",")
    out = [fast_parse(part) if part else None for part in parts]
    return None if any(x is None or isinstance(x, sympy.FiniteSet) for x in out) else out


def _structured(s: str) -> Any:
    r"""Relations, unions, intervals, tuples and sets as the grammar builds them; None outside the subset.

    `x > 2`, `-2 \leq x < 7` (an `And` of two, as the grammar chains them), `\{1, 2\}`, a bare list
    `2, 3, 4` (a FiniteSet), `(1, 2)` / `[0, 1)` (an Interval when the ends are in order, as the
    grammar reads two items; a Tuple otherwise is left to it), `(1, 2, 3)` (a Tuple), and `\cup` of
    those (unevaluated, nested to the left).
    """
    if _RELATION_SPLIT_RE.search(s):
        return None if "," in s or "\\cup" in s else _relation(s)
    pieces = split_top_level(s.replace("\\cup", "\x01"), seps="\x01")
    if len(pieces) > 1:
        return _union(pieces)
    if s.startswith("\\{") and s.endswith("\\}"):
        items = _items(s[2:-2])
        return None if items is None else sympy.FiniteSet(*items)
    if s[:1] in "([" and s[-1:] in ")]" and _one_group(s):
        return _bracketed(s)
    items = _items(s)
    return None if items is None or len(items) < 2 else sympy.FiniteSet(*items)


def _relation(s: str) -> Any:
    parts = _RELATION_SPLIT_RE.split(s)
    sides = [fast_parse(part.strip()) for part in parts[::2]]
    if len(sides) not in (2, 3) or any(x is None or not isinstance(x, sympy.Expr) for x in sides):
        return None
    rels = [_RELATIONS[op](a, b, evaluate=False) for a, op, b in zip(sides, parts[1::2], sides[1:], strict=False)]
    if len(rels) == 2 and any(isinstance(r, sympy.Unequality) for r in rels):
        return None
    return rels[0] if len(rels) == 1 else sympy.And(rels[1], rels[0], evaluate=False)


def _union(pieces: list[str]) -> Any:
    parsed = [_structured(piece.strip()) for piece in pieces]
    if any(x is None or not isinstance(x, (sympy.Interval, sympy.FiniteSet)) for x in parsed):
        return None
    union = parsed[0]
    for x in parsed[1:]:
        union = sympy.Union(union, x, evaluate=False)
    return union


def _bracketed(s: str) -> Any:
    items = _items(s[1:-1])
    if items is None or len(items) < 2 or not all(isinstance(x, sympy.Expr) for x in items):
        return None
    if len(items) > 2:
        return sympy.Tuple(*items) if s[0] + s[-1] in ("()", "[]") else None
    lo, hi = items
    if not (lo == -sympy.oo or hi == sympy.oo or lo.free_symbols or hi.free_symbols or bool(lo < hi)):
        return None  # `(5, 3)`: a Tuple for the grammar
    return sympy.Interval(lo, hi, s[0] == "(", s[-1] == ")")


def _plus_minus(s: str) -> Any:
    r"""`1 \pm \sqrt{19}`: the FiniteSet of both values, as the grammar builds it (one `\pm`, at the top level)."""
    parts = s.split("\\pm")
    if len(parts) != 2 or "\\mp" in s or any(ch in parts[1] for ch in "+-") or not _balanced_parts(parts):
        return None
    left, right = (fast_parse(part.strip()) for part in parts)
    if left is None or right is None or not (isinstance(left, sympy.Expr) and isinstance(right, sympy.Expr)):
        return None
    return sympy.FiniteSet(sympy.Add(left, right), sympy.Add(left, negative(right)))


def _balanced_parts(parts: list[str]) -> bool:
    return all(part.count("{") == part.count("}") and part.count("(") == part.count(")") for part in parts)


def _one_group(s: str) -> bool:
    """True when the bracket opening `s` closes at its last character."""
    depth = 0
    for i, ch in enumerate(s):
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        if depth == 0 and i < len(s) - 1:
            return False
    return depth == 0


_STRUCTURE_MARKS = (",", "<", ">", "\\cup", "\\{", "\\leq", "\\geq", "\\neq")
_NOT_HERE = object()  # `_whole_forms`: the answer is not one of the whole-answer forms


def _whole_forms(s: str) -> Any:
    r"""Answers read as a whole (lists, relations, sets, `\pm`, base ten, infinity, matrices); else `_NOT_HERE`."""
    if any(mark in s for mark in _STRUCTURE_MARKS):
        try:
            return _structured(s.strip())
        except (TypeError, ValueError, ZeroDivisionError, RecursionError):  # sympy rejecting a construction
            return None
    if "\\pm" in s:
        return _plus_minus(s)
    based = _BASE_RE.fullmatch(s.strip()) if "_" in s else None
    if based is not None:
        return sympy.Integer(int(based.group(1)))  # `1161_{10}`, `1202_7`: the digits, as the grammar reads them
    if "\\" in s:
        infinity = _INFINITY_RE.fullmatch(s.strip())
        if infinity is not None:
            return -sympy.oo if infinity.group(1) == "-" else sympy.oo
        matrix = _MATRIX_RE.fullmatch(s.strip())
        if matrix is not None:
            return _matrix(matrix.group(2))
    return _NOT_HERE


_LABEL_RE = re.compile(r"\s*(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\d|_\{\d{1,3}\})?\s*")


def _labelled_value(s: str) -> Any:
    r"""`x = <expr>` as the grammar reads it (`Eq(x, expr, evaluate=False)`); None for any other equation.

    Only one `=`, one letter or Greek letter (with an optional numeric subscript) on the left and a subset
    expression on the right: `f(x) = x^2`, `x^2 = 4`, `a = b = c`, `x = 1, 2`, `x = \pm 2` go to the grammar.
    """
    lhs, _, rhs = s.partition("=")
    if "=" in rhs or not _LABEL_RE.fullmatch(lhs):
        return None
    left, right = fast_parse(lhs.strip()), fast_parse(rhs.strip())
    if not isinstance(left, sympy.Symbol) or not isinstance(right, sympy.Expr):
        return None
    return sympy.Eq(left, right, evaluate=False)


def fast_parse(s: str) -> Any:
    r"""The sympy object for `s` when it is in the simple subset, else None (use the full grammar).

    Args:
        s: a normalised LaTeX answer (no `\left`, `\dfrac`, units or `$`).

    Returns:
        A sympy expression built like `latex2sympy` builds it, or None.
    """
    if not s or len(s) > _MAX_LEN or "|" in s:
        return None
    if "=" in s:
        return _labelled_value(s)
    whole = _whole_forms(s)
    if whole is not _NOT_HERE:
        return whole
    return parse_expression(s)
