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
of such entries. Ambiguous forms are always left to ANTLR: commas, brackets, a letter before
``(x)`` (a function for the grammar), ``a/bc``, ``a^b^c``, a function argument holding ``/``,
``\cdot``, a sign or a bracket, any other command.
``tests/verifiers/math/test_fast_parser.py`` checks it against ``latex2sympy`` on real answers.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

from rlvr.verifiers.math.normalize import split_top_level

__all__ = ["fast_parse"]

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<cmd>\\[a-zA-Z]+)|(?P<sym>[a-zA-Z](?:_(?:\d|[a-zA-Z]|\{[a-zA-Z0-9]+\}))?)"
    r"|(?P<op>[-+*/^(){}!\[\]_]))"
)
# Functions as the grammar builds them (unevaluated); `^{-1}` on one of `_INVERSE` is its inverse.
_FUNCTIONS: dict[str, Any] = {
    "\\sin": sympy.sin, "\\cos": sympy.cos, "\\tan": sympy.tan, "\\cot": sympy.cot, "\\sec": sympy.sec,
    "\\csc": sympy.csc, "\\arcsin": sympy.asin, "\\arccos": sympy.acos, "\\arctan": sympy.atan,
    "\\sinh": sympy.sinh, "\\cosh": sympy.cosh, "\\tanh": sympy.tanh, "\\exp": sympy.exp,
}
_INVERSE: dict[str, Any] = {"\\sin": sympy.asin, "\\cos": sympy.acos, "\\tan": sympy.atan}
_LOGS = frozenset({"\\ln", "\\log"})
_COMMANDS = frozenset({"\\frac", "\\sqrt", "\\pi", "\\cdot", "\\div", "\\mod", "\\binom", "\\lfloor", "\\rfloor",
                       "\\lceil", "\\rceil", *_FUNCTIONS, *_LOGS})
_CALLABLE = frozenset({*_FUNCTIONS, *_LOGS})
# What may follow a function's bare argument (`\sin x + 1`, `\sin x \cos x`, `\lfloor \log_2 n \rfloor`).
_ARG_END = frozenset({"+", "-", ")", "}", "]", "\\rfloor", "\\rceil", *_CALLABLE})
_MATRIX_RE = re.compile(r"\\begin\{([pb]matrix)\}(.*)\\end\{\1\}", re.DOTALL)
_INFINITY_RE = re.compile(r"([-+]?)\s*\\infty")
_BASE_RE = re.compile(r"(\d{1,60})_(?:\d|\{\d{1,2}\})")  # a base subscript (`equivalence` reads its value)
_CLOSERS = frozenset({"\\rfloor", "\\rceil"})
_MAX_LEN = 200
_COMMAND_RE = re.compile(r"\\[a-zA-Z]+")
_DIFFERENTIAL_RE = re.compile(r"d[a-zA-Z]")
_MAX_POWER_EXP = 10**4


def _negative(term: Any) -> Any:
    """`-term` as the grammar builds it: a negative number for a number (`x - 2` is `x + (-2)`), else `-1 * term`."""
    return -term if isinstance(term, sympy.Number) else sympy.Mul(-1, term, evaluate=False)


class _Bail(Exception):
    """The input is outside the subset: let ANTLR parse it."""


def _tokens(s: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    s = s.rstrip()
    while pos < len(s):
        m = _TOKEN_RE.match(s, pos)
        if m is None or m.end() == pos:
            raise _Bail
        kind = m.lastgroup
        assert kind is not None
        text = m.group(kind)
        if kind == "cmd" and text not in _COMMANDS:
            raise _Bail
        out.append((kind, text))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.toks = tokens
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, text: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != text:
            raise _Bail
        self.i += 1

    def expr(self) -> Any:
        terms = [self.signed()]
        while (tok := self.peek()) is not None and tok[1] in "+-" and tok[0] == "op":
            self.i += 1
            term = self.product()
            terms.append(term if tok[1] == "+" else _negative(term))
        return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)

    def signed(self) -> Any:
        tok = self.peek()
        if tok is not None and tok == ("op", "-"):
            self.i += 1
            return _negative(self.product())
        if tok is not None and tok == ("op", "+"):
            self.i += 1
        return self.product()

    def product(self) -> Any:
        factors = [self.power()]
        while (tok := self.peek()) is not None:
            if tok[1] in ("*", "\\cdot"):
                self.i += 1
                factors.append(self.power())
            elif tok[1] in ("/", "\\div"):
                self.i += 1
                den = self.power()
                nxt = self.peek()
                if nxt is not None and not (nxt[0] == "op" and nxt[1] in "+-)}") and nxt[1] not in _CLOSERS:
                    raise _Bail  # `1/2x`: the grammar's reading of what follows is its own
                factors.append(sympy.Pow(den, -1, evaluate=False))
            elif tok[1] == "\\mod":  # `2n \mod 3`: the product so far modulo one factor, as the grammar reads it
                self.i += 1
                left = factors[0] if len(factors) == 1 else sympy.Mul(*factors, evaluate=False)
                right = self.power()
                nxt = self.peek()
                if nxt is not None and not (nxt[0] == "op" and nxt[1] in "+-)}"):
                    raise _Bail
                factors = [sympy.Mod(left, right, evaluate=False)]
            elif tok[1] in _CLOSERS:
                break
            elif tok[0] in ("num", "sym", "cmd") or tok[1] in "({":
                if tok[0] == "num":
                    raise _Bail  # `2 3`, `x 3.5`: a number after a factor is read oddly by the grammar
                factors.append(self.power())
            else:
                break
        return factors[0] if len(factors) == 1 else sympy.Mul(*factors, evaluate=False)

    def power(self) -> Any:
        base = self.postfix()
        tok = self.peek()
        if tok is not None and tok[1] == "^":
            self.i += 1
            exp = self.exponent()
            towers = any(node.exp != -1 for node in exp.atoms(sympy.Pow))  # `10^{1/100}` is no tower
            if (isinstance(exp, sympy.Integer) and abs(int(exp)) > _MAX_POWER_EXP) or towers:
                raise _Bail  # huge or tower exponents (`10^{10^{10}}`): the grammar keeps them unevaluated
            nxt = self.peek()
            if nxt is not None and nxt[1] in ("^", "!"):
                raise _Bail  # `a^b^c`, `a^b!`
            return sympy.Pow(base, exp, evaluate=False)
        return base

    def exponent(self) -> Any:
        tok = self.peek()
        if tok is None:
            raise _Bail
        if tok[1] == "{":
            return self.group()
        if tok[0] == "num" and tok[1].isdigit():
            self.i += 1
            return sympy.Integer(int(tok[1][0])) if len(tok[1]) == 1 else self._bail()
        if tok[0] == "sym" and len(tok[1]) == 1:
            self.i += 1
            return self._symbol(tok[1])
        raise _Bail

    @staticmethod
    def _bail() -> Any:
        raise _Bail

    def postfix(self) -> Any:
        x = self.atom()
        tok = self.peek()
        if tok is not None and tok[1] == "!":
            self.i += 1
            if not isinstance(x, sympy.Integer) or int(x) > 1000:
                raise _Bail
            return sympy.factorial(x, evaluate=False)
        return x

    def argument(self) -> Any:
        r"""A command's argument: a `{group}` or one digit (`\frac12`, `\sqrt2`, `\frac{8\pi}5`)."""
        tok = self.peek()
        if tok == ("op", "{"):
            return self.group()
        if tok is None or tok[0] != "num" or not tok[1].isdigit():
            raise _Bail
        digit, rest = tok[1][0], tok[1][1:]
        if rest:
            self.toks[self.i] = ("num", rest)
        else:
            self.i += 1
        return sympy.Integer(int(digit))

    def group(self) -> Any:
        self.take("{")
        x = self.expr()
        self.take("}")
        return x

    def atom(self) -> Any:
        tok = self.peek()
        if tok is None:
            raise _Bail
        kind, text = tok
        self.i += 1
        if kind == "num":
            nxt = self.peek()
            if nxt is not None and nxt[1] == "\\frac":
                return self._mixed_number(text)
            return sympy.Float(text) if "." in text else sympy.Integer(int(text))
        if kind == "sym":
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                return self._letter_before_paren(text)
            return self._symbol(text)
        if kind == "cmd":
            return self.command(text)
        if text == "(":
            x = self.expr()
            self.take(")")
            return x
        if text == "{":
            x = self.expr()
            self.take("}")
            return x
        raise _Bail

    def _mixed_number(self, whole: str) -> Any:
        r"""`3\frac{3}{8}` = 27/8 where the grammar reads a mixed number (integers; then `+`, `-`, a closer, end)."""
        before = self.toks[self.i - 2][1] if self.i >= 2 else None
        if "." in whole or before in ("*", "/", "\\cdot", "^"):
            raise _Bail
        self.i += 1  # `\frac`
        num, den = self.argument(), self.argument()
        nxt = self.peek()
        if not (isinstance(num, sympy.Integer) and isinstance(den, sympy.Integer) and den != 0):
            raise _Bail
        if nxt is not None and not (nxt[0] == "op" and nxt[1] in "+-)}") and nxt[1] not in _CLOSERS:
            raise _Bail  # `3\frac{1}{4}x` is a product for the grammar
        return sympy.Rational(int(whole)) + sympy.Rational(num, den)

    def _letter_before_paren(self, letter: str) -> Any:
        """`n(n+1)`: a product, as the grammar reads it; `f(x)`, `a(1, 2)` (one atom or a list) are its functions."""
        depth, j = 0, self.i
        while j < len(self.toks):
            depth += {"(": 1, ")": -1}.get(self.toks[j][1], 0) if self.toks[j][0] == "op" else 0
            if depth == 0:
                break
            j += 1
        if j - self.i == 2 and letter not in "eE" and self.toks[self.i + 1][0] in ("num", "sym"):
            self.i += 3  # `f(x)`, `n(2)`: the grammar's undefined function applied to one atom
            arg = self.toks[self.i - 2][1]
            value = sympy.Integer(int(arg)) if arg.isdigit() else None if "." in arg else self._symbol(arg)
            if value is None:
                raise _Bail
            return sympy.Function(letter)(value)
        if j - self.i <= 2:
            raise _Bail
        return self._symbol(letter)  # the parenthesis is the next factor: `n(n+1)^x` is n (n+1)^x

    def function(self, text: str) -> Any:
        r"""`\sin x`, `\sin^2(x)`, `\tan^{-1} 2`, `\log_{10} 250`, `\ln x^2`: the grammar's objects."""
        power = base = None
        if self.peek() == ("op", "^"):
            self.i += 1
            power = self.exponent()
        if self.peek() == ("op", "_"):
            if text != "\\log" or power is not None:
                raise _Bail
            self.i += 1
            base = self.exponent()
        if self.peek() == ("op", "("):
            self.i += 1
            arg = self.expr()
            self.take(")")
            if power is not None and self.peek() is not None and self.peek()[1] in ("^", "!"):  # type: ignore[index]
                raise _Bail
        else:
            arg = self.bare_argument()
        if power is not None and power.doit() == -1:
            if text not in _INVERSE:
                raise _Bail
            return _INVERSE[text](arg, evaluate=False)
        if text == "\\ln":
            value = sympy.log(arg, sympy.E, evaluate=False)
        elif text == "\\log":
            value = sympy.log(arg, base if base is not None else sympy.Integer(10), evaluate=False)
        else:
            value = _FUNCTIONS[text](arg, evaluate=False)
        return value if power is None else sympy.Pow(value, power, evaluate=False)

    def bare_argument(self) -> Any:
        r"""A function's argument without parentheses: a product of plain factors (`2\pi x`, `\frac{\pi}{2}`)."""
        factors: list[Any] = []
        while (tok := self.peek()) is not None:
            if tok[0] == "num" and factors:
                raise _Bail  # `\sin x 2`
            if tok[0] == "sym" or tok[0] == "num" or tok[1] in ("\\pi", "\\frac", "\\sqrt", "{"):
                if tok[0] == "sym" and self.i + 1 < len(self.toks) and self.toks[self.i + 1][1] == "(":
                    raise _Bail  # `\sin x(x+1)`
                if factors and tok[1] in ("e", "i", "\\frac", "\\sqrt", "{"):
                    raise _Bail  # `\cos^2 y e`, `\sin x \sqrt{3}`: the grammar ends the argument its own way
                factors.append(self.power())
            else:
                break
        tok = self.peek()
        if not factors or (tok is not None and tok[1] not in _ARG_END):
            raise _Bail  # `\sin -x`, `\sin x/2`, `\sin x \cdot y`: the grammar's own argument rules
        return factors[0] if len(factors) == 1 else sympy.Mul(*factors, evaluate=False)

    def command(self, text: str) -> Any:
        if text == "\\pi":
            return sympy.pi
        if text in _CALLABLE:
            return self.function(text)
        if text == "\\binom":
            top, bottom = self.argument(), self.argument()
            if not (isinstance(top, sympy.Integer) and isinstance(bottom, sympy.Integer) and 0 <= top <= 1000):
                raise _Bail  # the grammar evaluates binomials; only small ones are evaluated here
            return sympy.binomial(top, bottom)
        if text in ("\\lfloor", "\\lceil"):
            inner = self.expr()
            self.take("\\rfloor" if text == "\\lfloor" else "\\rceil")
            return (sympy.floor if text == "\\lfloor" else sympy.ceiling)(inner, evaluate=False)
        if text == "\\frac":
            num = self.argument()
            den = self.argument()
            if isinstance(num, sympy.Integer) and isinstance(den, sympy.Integer) and den != 0:
                return sympy.Rational(num, den)
            return sympy.Mul(num, sympy.Pow(den, -1, evaluate=False), evaluate=False)
        if text == "\\sqrt":
            if self.peek() == ("op", "["):
                self.i += 1
                index = self.expr()
                self.take("]")
                if not isinstance(index, sympy.Integer) or int(index) < 2:
                    raise _Bail
                return sympy.Pow(self.argument(), sympy.Rational(1, int(index)), evaluate=False)
            return sympy.sqrt(self.argument(), evaluate=False)
        raise _Bail  # `\cdot` where an operand belongs

    @staticmethod
    def _symbol(text: str) -> Any:
        if text == "e":
            return sympy.E
        if text in ("E", "I", "S", "N", "O", "Q"):
            raise _Bail  # names sympy or the grammar may treat specially
        return sympy.Symbol(text)


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
    return sympy.FiniteSet(sympy.Add(left, right), sympy.Add(left, _negative(right)))


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


def fast_parse(s: str) -> Any:
    r"""The sympy object for `s` when it is in the simple subset, else None (use the full grammar).

    Args:
        s: a normalised LaTeX answer (no `\left`, `\dfrac`, units or `$`).

    Returns:
        A sympy expression built like `latex2sympy` builds it, or None.
    """
    if not s or len(s) > _MAX_LEN or "|" in s or "=" in s:
        return None
    whole = _whole_forms(s)
    if whole is not _NOT_HERE:
        return whole
    if _DIFFERENTIAL_RE.search(_COMMAND_RE.sub(" ", s)):
        return None  # `dx`, `da`: the grammar reads a differential
    try:
        parser = _Parser(_tokens(s))
        if not parser.toks:
            return None
        x = parser.expr()
        if parser.i != len(parser.toks):
            return None
        return x
    except (_Bail, RecursionError):
        return None
    except (TypeError, ValueError, ZeroDivisionError):  # sympy rejecting a construction: leave it to the grammar
        return None
