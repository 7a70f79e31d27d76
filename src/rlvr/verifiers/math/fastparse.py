r"""A small recursive-descent parser for the common LaTeX answer forms, ahead of the ANTLR grammar.

ANTLR (``latex2sympy2_extended``) costs 1-400 ms per answer and is most of the verifier's time;
most answers are simple: ``n^{2}``, ``\frac{3}{4}``, ``2\sqrt{3}``, ``5r^5``, ``\pi r^2``,
``-\frac{x}{2}+1``, ``20!``. This parser reads exactly that subset, builds the same sympy
objects as ``latex2sympy`` (unevaluated sums, products and powers; decimals as 53-bit
``Float``; ``e`` as Euler's number; ``x_1`` / ``x_{12}`` as symbols) and returns None for
anything else, which then goes to ANTLR unchanged. Ambiguous forms are always left to ANTLR:
commas, brackets, a letter before ``(`` (function or product), ``a/bc``, ``\frac12``, a
number before ``\frac`` (mixed number), ``a^b^c``, any other command.
``tests/verifiers/math/test_fast_parser.py`` checks it against ``latex2sympy`` on real answers.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

__all__ = ["fast_parse"]

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<cmd>\\[a-zA-Z]+)|(?P<sym>[a-zA-Z](?:_(?:\d|[a-zA-Z]|\{[a-zA-Z0-9]+\}))?)"
    r"|(?P<op>[-+*/^(){}!\[\]]))"
)
_COMMANDS = frozenset({"\\frac", "\\sqrt", "\\pi", "\\cdot"})
_MAX_LEN = 200
_COMMAND_RE = re.compile(r"\\[a-zA-Z]+")
_DIFFERENTIAL_RE = re.compile(r"d[a-zA-Z]")
_MAX_POWER_EXP = 10**4


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
            terms.append(term if tok[1] == "+" else sympy.Mul(-1, term, evaluate=False))
        return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)

    def signed(self) -> Any:
        tok = self.peek()
        if tok is not None and tok == ("op", "-"):
            self.i += 1
            return sympy.Mul(-1, self.product(), evaluate=False)
        if tok is not None and tok == ("op", "+"):
            self.i += 1
        return self.product()

    def product(self) -> Any:
        factors = [self.power()]
        while (tok := self.peek()) is not None:
            if tok[1] in ("*", "\\cdot"):
                self.i += 1
                factors.append(self.power())
            elif tok[1] == "/":
                self.i += 1
                den = self.power()
                nxt = self.peek()
                if nxt is not None and not (nxt[0] == "op" and nxt[1] in "+-)}"):
                    raise _Bail  # `1/2x`: the grammar's reading of what follows is its own
                factors.append(sympy.Pow(den, -1, evaluate=False))
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
            if (isinstance(exp, sympy.Integer) and abs(int(exp)) > _MAX_POWER_EXP) or exp.has(sympy.Pow):
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
                raise _Bail  # `3\frac{3}{8}` is a mixed number for the grammar
            return sympy.Float(text) if "." in text else sympy.Integer(int(text))
        if kind == "sym":
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                raise _Bail  # `f(x)`: a function or a product, the grammar decides
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

    def command(self, text: str) -> Any:
        if text == "\\pi":
            return sympy.pi
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


def fast_parse(s: str) -> Any:
    r"""The sympy object for `s` when it is in the simple subset, else None (use the full grammar).

    Args:
        s: a normalised LaTeX answer (no `\left`, `\dfrac`, units or `$`).

    Returns:
        A sympy expression built like `latex2sympy` builds it, or None.
    """
    if not s or len(s) > _MAX_LEN or "," in s or "|" in s or "=" in s or "<" in s or ">" in s:
        return None
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
