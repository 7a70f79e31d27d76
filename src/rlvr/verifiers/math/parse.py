"""Parse a normalised answer into a number or a sympy object.

LaTeX goes through ``latex2sympy2_extended`` (the maintained ANTLR LaTeX grammar used by
Math-Verify); plain text with explicit operators (``3*x-1*y+13=0``, ``x**2``) goes through sympy's
``parse_expr`` with a restricted namespace. Parsers are pure, so their results are cached per
worker process with ``functools.lru_cache``. Nothing here raises for bad input: an unparseable
answer is ``None``.
"""

from __future__ import annotations

import functools
import re
import warnings
from fractions import Fraction
from typing import Any

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from latex2sympy2_extended.math_normalization import NormalizationConfig

from rlvr.verifiers.math.fastparse import fast_parse

__all__: list[str] = []

_INT_DEC_RE = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")
_SLASH_RE = re.compile(r"([-+]?\d+)\s*/\s*(\d+)")
_LATEX_FRAC_RE = re.compile(r"([-+]?)\\frac\{\s*([-+]?\d+)\s*\}\{\s*(\d+)\s*\}")
_SCI_RE = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*(?:e|E|\\cdot\s*10\^|\\times\s*10\^)\{?\s*([-+]?\d{1,3})\s*\}?")
_PLAIN_RE = re.compile(r"[0-9a-zA-Z+\-*/^().= <>!]+")
_HEAVY_PLAIN_RE = re.compile(r"\*\*\s*\(?\s*\d{4,}|\^\s*\(?\s*\d{4,}|\d{6,}\s*!")

_L2S_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none", equations=False
)
_L2S_CONVERSION = ConversionConfig(lowercase_symbols=False)


class ParsedNumber:
    """An exact rational read from a literal, and how many decimals it was written with (None: exact)."""

    __slots__ = ("decimals", "value")

    def __init__(self, value: Fraction, decimals: int | None) -> None:
        self.value = value
        self.decimals = decimals

    def __repr__(self) -> str:
        return f"ParsedNumber({self.value}, decimals={self.decimals})"


@functools.lru_cache(maxsize=8192)
def parse_number(s: str) -> ParsedNumber | None:
    r"""Read a plain numeric literal: integer, decimal, `a/b`, `\frac{a}{b}`, `1.5e3`; else None."""
    s = s.strip().replace(" ", "")
    if not s or len(s) > 60:
        return None
    if _INT_DEC_RE.fullmatch(s):
        decimals = len(s.split(".", 1)[1]) if "." in s else None
        return ParsedNumber(Fraction(s.rstrip(".") if s.endswith(".") else s), decimals)
    m = _SLASH_RE.fullmatch(s)
    if m and int(m.group(2)) != 0:
        return ParsedNumber(Fraction(int(m.group(1)), int(m.group(2))), None)
    m = _LATEX_FRAC_RE.fullmatch(s)
    if m and int(m.group(3)) != 0:
        sign = -1 if m.group(1) == "-" else 1
        return ParsedNumber(sign * Fraction(int(m.group(2)), int(m.group(3))), None)
    m = _SCI_RE.fullmatch(s)
    if m:
        return ParsedNumber(Fraction(m.group(1)) * Fraction(10) ** int(m.group(2)), None)
    return None


_PLAIN_FUNC_RE = re.compile(r"(?<![a-zA-Z])(?:(?:sqrt|exp|log|ln|sin|cos|tan)\s*\(|pi(?![a-zA-Z]))")


def _is_plain(s: str) -> bool:
    """True for plain-text math as models write it, not LaTeX.

    Explicit operators (`3*x-1*y+13=0`, `x**2`) or function names (`sqrt(2)/2`, `exp(3) - 1`, `pi/4`).
    """
    if "\\" in s or _PLAIN_RE.fullmatch(s) is None:
        return False
    return "*" in s or _PLAIN_FUNC_RE.search(s) is not None


_PLAIN_NAMESPACE: dict[str, Any] = {
    "sqrt": sympy.sqrt, "pi": sympy.pi, "E": sympy.E, "e": sympy.E, "I": sympy.I, "oo": sympy.oo,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "log": sympy.log, "ln": sympy.log, "exp": sympy.exp,
    "__builtins__": {}, "Integer": sympy.Integer, "Float": sympy.Float, "Rational": sympy.Rational,
    "Symbol": sympy.Symbol,
}


def _parse_plain(s: str) -> Any:
    """Plain text via sympy `parse_expr` (restricted names, no evaluation of huge powers)."""
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    transformations = (*standard_transformations, implicit_multiplication_application, convert_xor)
    s = s.replace("!=", "≠")
    for op in ("<=", ">=", "≠", "=", "<", ">"):
        if op in s:
            left, _, right = s.partition(op)
            lhs = parse_expr(left, global_dict=dict(_PLAIN_NAMESPACE), transformations=transformations)
            rhs = parse_expr(right, global_dict=dict(_PLAIN_NAMESPACE), transformations=transformations)
            rel = {"<=": sympy.Le, ">=": sympy.Ge, "≠": sympy.Ne, "=": sympy.Eq, "<": sympy.Lt, ">": sympy.Gt}[op]
            return rel(lhs, rhs, evaluate=False)
    return parse_expr(s, global_dict=dict(_PLAIN_NAMESPACE), transformations=transformations)


_I = sympy.Symbol("i")
_WORD_RE = re.compile(r"[a-zA-Z]{4,}")
_TEXT_OR_COMMAND_RE = re.compile(
    r"\\(?:begin|end)\{[a-zA-Z*]+\}|\\[a-zA-Z]+|(?<![a-zA-Z])(?:arc)?(?:sqrt|exp|log|sinh?|cosh?|tanh?|cot|sec|csc)(?![a-zA-Z])"
)


def _imaginary(x: Any) -> Any:
    r"""A free symbol `i` is the imaginary unit (`2+3i`, `e^{i\pi}`); a bound index `i` of a sum stays."""
    try:
        if isinstance(x, sympy.Basic) and _I in x.free_symbols:
            return x.subs(_I, sympy.I)
    except Exception:  # substitution into odd objects (sets of relations): keep the parse
        return x
    return x


def _undefined(x: Any) -> bool:
    r"""True when `x` divides by zero or meets a pole (`5 + \frac{0}{0}`, `\frac{1}{0} - \frac{1}{0}`, `\cot 0`).

    The parsers keep such terms unevaluated, and simplification then cancels them (`5 + 0/0 - 5`
    is 0): an answer with an undefined term has no value and equals nothing (red team).
    """
    if not isinstance(x, sympy.Basic):
        return False
    for node in sympy.preorder_traversal(x):
        if node is sympy.nan or node is sympy.zoo:
            return True
        if isinstance(node, sympy.Pow) and node.exp.is_negative and node.base.is_zero:
            return True
        if isinstance(node, sympy.log) and node.args and node.args[0].is_zero:
            return True
        if isinstance(node, _POLES) and not node.free_symbols and node.func(*node.args) is sympy.zoo:
            return True  # `\tan\frac{\pi}{2}`, `\cot 0`
        if isinstance(node, (sympy.factorial, sympy.gamma)) and node.args[0].is_integer and (
                node.args[0].is_negative or (isinstance(node, sympy.gamma) and node.args[0].is_zero)):
            return True  # `(-1)!`, `\Gamma(0)`
    return False


_POLES = (sympy.tan, sympy.cot, sympy.sec, sympy.csc)


@functools.lru_cache(maxsize=8192)
def to_sympy(s: str) -> Any:
    """Parse a normalised answer into a sympy object (expression, relation, set, matrix); None if unparseable.

    Plain text with explicit `*` goes through sympy's `parse_expr`; everything else through
    `latex2sympy2_extended.latex2sympy`. Parser warnings are silenced here, where they are raised.
    """
    if not s or _WORD_RE.search(_TEXT_OR_COMMAND_RE.sub(" ", s)):
        return None  # prose ("Friday", "No solutions"): compared as text, never as a product of letters
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = None
            if _is_plain(s) and not _HEAVY_PLAIN_RE.search(s):
                try:
                    parsed = _parse_plain(s)
                except Exception:  # fall back to the LaTeX grammar
                    parsed = None
            if parsed is None:
                parsed = fast_parse(s)  # the common simple forms without the ANTLR grammar (same objects)
            if parsed is None:
                parsed = latex2sympy(s, normalization_config=_L2S_NORMALIZATION, conversion_config=_L2S_CONVERSION)
            return None if _undefined(parsed) else _imaginary(parsed)
    except Exception:  # the parsers raise many unrelated types on bad input: unparseable, not a crash
        return None
