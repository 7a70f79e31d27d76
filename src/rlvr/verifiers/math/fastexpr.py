r"""The recursive-descent reader of one LaTeX expression, the core of `fastparse` (see its docstring for the subset).

Builds what ``latex2sympy`` builds (unevaluated sums, products and powers; decimals as 53-bit
``Float``; ``e`` as Euler's number) and gives up (`_Bail`) on anything the grammar may read another way.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

__all__: list[str] = []

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
_CLOSERS = frozenset({"\\rfloor", "\\rceil"})
_COMMAND_RE = re.compile(r"\\[a-zA-Z]+")
# Greek letters the grammar reads as plain symbols of their name (`\gamma` and `\Gamma` it reads as Euler's
# constant: left to it).
_GREEK = frozenset({
    "alpha", "beta", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "rho", "varrho", "sigma", "varsigma", "tau", "upsilon", "phi", "varphi", "chi",
    "psi", "omega", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"
})
_DIFFERENTIAL_RE = re.compile(r"d[a-zA-Z]")
_MAX_POWER_EXP = 10**4


def negative(term: Any) -> Any:
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
        if kind == "cmd" and text[1:] in _GREEK:
            if s[m.end() :].lstrip()[:1] in ("_", "("):
                raise _Bail  # `\theta_1`, `\phi(x)`: the grammar's readings
            kind, text = "sym", text[1:]  # `\theta` is the grammar's Symbol('theta')
        elif kind == "cmd" and text not in _COMMANDS:
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
            terms.append(term if tok[1] == "+" else negative(term))
        return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)

    def signed(self) -> Any:
        tok = self.peek()
        if tok is not None and tok == ("op", "-"):
            self.i += 1
            return negative(self.product())
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
        """An atom and its factorial sign: `20!`, `n!`, `(n-2)!` (the grammar's `factorial`; not `n!!`, `n!^2`)."""
        x = self.atom()
        tok = self.peek()
        if tok is not None and tok[1] == "!":
            self.i += 1
            nxt = self.peek()
            if nxt is not None and nxt[1] in ("!", "^"):
                raise _Bail  # a double factorial, a power of a factorial: the grammar's own readings
            symbolic = isinstance(x, sympy.Expr) and bool(x.free_symbols) and not x.atoms(sympy.Float)
            if not symbolic and (not isinstance(x, sympy.Integer) or int(x) > 1000):
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
        if text.endswith("}") and len(text) == 5 and text[1:3] == "_{":
            text = text[:2] + text[3]  # `n_{2}` is the grammar's `n_2` (`x_{12}` it keeps braced)
        return sympy.Symbol(text)


def parse_expression(s: str) -> Any:
    r"""The sympy expression of `s` when it is one expression of the subset (`fastparse`), else None.

    Args:
        s: a normalised LaTeX expression: no list, relation, set, `\pm`, matrix or base subscript (`fast_parse`
            reads those whole forms first).

    Returns:
        An unevaluated sympy expression built like `latex2sympy` builds it, or None (then the grammar decides).
    """
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
