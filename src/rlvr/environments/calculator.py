"""A calculator tool: Python-style arithmetic evaluated with sympy numbers, never with `eval`.

`evaluate(expression)` reads the expression with Python's `ast.parse(mode="eval")` -- a parser
only, nothing is executed -- accepts a small whitelist of node types, and computes the value node
by node with sympy: exact rationals for `+ - * / // %` and integer powers, 30-digit sympy
`Float`s (mpmath) for functions and fractional powers. sympy's own `parse_expr` is not used: it
runs its input through `eval()`, and its automatic simplification can factor huge integers
(`sqrt(10**9999 + 1)` runs for minutes).

Safety rules (each violation is a `ToolError` whose message tells the model what to change):

- only numbers, `+ - * / // % **` (`^` is read as a power, as in sympy's `convert_xor`),
  unary `+ -`, parentheses, the constants `pi` and `e`, and the functions in `FUNCTIONS` called
  with positional arguments. Names outside the whitelist, attribute access (`x.y`), subscripts,
  strings, lambdas, comprehensions, keywords, comparisons, and dunder names are rejected.
- expressions longer than `MAX_LENGTH` characters are rejected before parsing;
- every exact intermediate result is kept under `MAX_DIGITS` decimal digits, and every decimal
  (floating-point) one within `10**-MAX_DIGITS .. 10**MAX_DIGITS` in magnitude: a power or `exp`
  is refused *before* it is computed when its estimated size (`|exp| * log10|base|` digits) is
  over the limit, so `9**9**9**9` or `exp(10**3999)` answer at once instead of hanging the
  process (a sync tool computing it inside one C call could not be interrupted by a timeout);
  `factorial` is limited to `MAX_FACTORIAL`.
- number literals are read exactly as written (`0.1` is 1/10, `1e-400` is refused, not 0).

`MAX_DIGITS` is 4000, under CPython's 4300-digit limit on int/str conversion (PEP 651's
`sys.int_info.default_max_str_digits`, CPython 3.11).
"""

from __future__ import annotations

import ast
import decimal
import math
import re
from collections.abc import Callable
from typing import Any

import sympy

from rlvr.environments.tools import Tool, ToolError

__all__ = ["calculator_tool"]

MAX_LENGTH = 500
"""Longest expression accepted, characters."""

MAX_DIGITS = 4000
"""Largest exact intermediate value, decimal digits (numerator and denominator each)."""

MAX_FACTORIAL = 1000
"""Largest n accepted by `factorial(n)` (1000! has 2568 digits)."""

PRECISION = 30
"""Decimal digits of the floating-point values (functions, fractional powers)."""

SHOWN_DIGITS = 15
"""Significant digits shown for inexact results."""

Number = Any  # sympy.Rational or sympy.Float (sympy is untyped)


def _digits(value: Number) -> int:
    """Decimal digits of the larger of numerator and denominator of an exact value (0 for Floats)."""
    if isinstance(value, sympy.Rational):
        return max(abs(int(value.p)).bit_length(), int(value.q).bit_length()) * 30103 // 100000 + 1
    return 0


def _log10_abs(value: Number) -> float:
    """log10(|value|) of a non-zero value, without converting it to a Python float (no overflow)."""
    if isinstance(value, sympy.Rational):
        return math.log10(abs(int(value.p))) - math.log10(int(value.q))
    _sign, mantissa, exponent, _bits = value._mpf_  # mpmath: value = (-1)**sign * mantissa * 2**exponent
    return float(math.log10(mantissa) + exponent * math.log10(2))


def _checked(value: Number) -> Number:
    if value in (sympy.zoo, sympy.oo, -sympy.oo) or value is sympy.nan:
        raise ToolError("the result is undefined or infinite (e.g. a division by zero)")
    if isinstance(value, sympy.Float) and not value.is_finite:
        raise ToolError("the result is not a finite number")
    if not isinstance(value, (sympy.Rational, sympy.Float)):
        raise ToolError("the result is not a real number")
    if _digits(value) > MAX_DIGITS:
        raise ToolError(f"an intermediate result has more than {MAX_DIGITS} digits; use smaller numbers")
    if isinstance(value, sympy.Float) and value != 0 and abs(_log10_abs(value)) > MAX_DIGITS:
        raise ToolError(f"an intermediate result is outside 1e-{MAX_DIGITS} .. 1e{MAX_DIGITS} in magnitude; "
                        "use smaller numbers")
    return value


def _float(value: Number, extra_digits: bool = False) -> Number:
    """`value` as a 30-digit Float; with `extra_digits`, exact values keep all their digits (plus 30)."""
    return sympy.Float(value, PRECISION + (_digits(value) if extra_digits else 0))


def _is_integer(value: Number) -> bool:
    return isinstance(value, sympy.Integer)


def _integer_arg(value: Number, fname: str) -> int:
    if not _is_integer(value):
        raise ToolError(f"{fname}() needs integer arguments, got {_format(value)}")
    return int(value)


def _real_fn(fn: Callable[[Number], Number], name: str) -> Callable[..., Number]:
    def apply(x: Number) -> Number:
        # an exact argument keeps every digit: sin(10**100) needs its 100 digits to reduce mod 2*pi
        return _checked(fn(_float(x, extra_digits=True)).evalf(PRECISION))

    apply.__name__ = name
    return apply


def _log(x: Number, base: Number | None = None) -> Number:
    if x <= 0 or (base is not None and (base <= 0 or base == 1)):
        raise ToolError("log() needs a positive argument (and a positive base other than 1)")
    value = sympy.log(_float(x, True)) if base is None else sympy.log(_float(x, True)) / sympy.log(_float(base, True))
    return _checked(value.evalf(PRECISION))


def _exp(x: Number) -> Number:
    if abs(x) > MAX_DIGITS * math.log(10):
        raise ToolError(f"exp() argument {_format(x)[:20]} is too large: the result is outside "
                        f"1e-{MAX_DIGITS} .. 1e{MAX_DIGITS}")
    return _checked(sympy.exp(_float(x, extra_digits=True)).evalf(PRECISION))


def _sqrt(x: Number) -> Number:
    return _power(x, sympy.Rational(1, 2))


def _factorial(n: Number) -> Number:
    k = _integer_arg(n, "factorial")
    if not 0 <= k <= MAX_FACTORIAL:
        raise ToolError(f"factorial() takes an integer from 0 to {MAX_FACTORIAL}, got {k}")
    return sympy.Integer(math.factorial(k))


def _comb(n: Number, k: Number) -> Number:
    a, b = _integer_arg(n, "comb"), _integer_arg(k, "comb")
    if not (0 <= a <= MAX_FACTORIAL and a >= 0 and b >= 0):
        raise ToolError(f"comb(n, k) takes integers 0 <= k, 0 <= n <= {MAX_FACTORIAL}")
    return sympy.Integer(math.comb(a, b))


def _round(x: Number, ndigits: Number | None = None) -> Number:
    """Python's `round`: half to even, on the exact value."""
    places = 0 if ndigits is None else _integer_arg(ndigits, "round")
    if abs(places) > 50:
        raise ToolError("round(x, ndigits) takes ndigits between -50 and 50")
    _check_magnitude(x, "round")
    scale = sympy.Integer(10) ** places
    scaled = (sympy.Rational(x) if isinstance(x, sympy.Float) else x) * scale
    floor = int(sympy.floor(scaled))
    rest = scaled - floor
    half = sympy.Rational(1, 2)
    rounded = floor + 1 if rest > half or (rest == half and floor % 2 == 1) else floor
    return _checked(sympy.Integer(rounded) / scale)


def _check_magnitude(x: Number, fname: str) -> None:
    if abs(x) >= sympy.Integer(10) ** MAX_DIGITS:
        raise ToolError(f"{fname}() argument is too large (over {MAX_DIGITS} digits)")


def _floor(x: Number) -> Number:
    _check_magnitude(x, "floor")
    return sympy.Integer(sympy.floor(x))


def _ceil(x: Number) -> Number:
    _check_magnitude(x, "ceil")
    return sympy.Integer(sympy.ceiling(x))


def _gcd(*args: Number) -> Number:
    return sympy.Integer(math.gcd(*(_integer_arg(a, "gcd") for a in args)))


def _lcm(*args: Number) -> Number:
    return _checked(sympy.Integer(math.lcm(*(_integer_arg(a, "lcm") for a in args))))


FUNCTIONS: dict[str, tuple[Callable[..., Number], int, int]] = {
    "abs": (lambda x: abs(x), 1, 1),
    "sqrt": (_sqrt, 1, 1),
    "exp": (_exp, 1, 1),
    "log": (_log, 1, 2),
    "ln": (_log, 1, 1),
    "log10": (lambda x: _log(x, sympy.Integer(10)), 1, 1),
    "log2": (lambda x: _log(x, sympy.Integer(2)), 1, 1),
    "sin": (_real_fn(sympy.sin, "sin"), 1, 1),
    "cos": (_real_fn(sympy.cos, "cos"), 1, 1),
    "tan": (_real_fn(sympy.tan, "tan"), 1, 1),
    "atan": (_real_fn(sympy.atan, "atan"), 1, 1),
    "floor": (_floor, 1, 1),
    "ceil": (_ceil, 1, 1),
    "round": (_round, 1, 2),
    "factorial": (_factorial, 1, 1),
    "comb": (_comb, 2, 2),
    "gcd": (_gcd, 1, 16),
    "lcm": (_lcm, 1, 16),
    "min": (lambda *xs: min(xs), 1, 64),
    "max": (lambda *xs: max(xs), 1, 64),
}
"""Functions the calculator accepts: name -> (implementation, min arity, max arity)."""

CONSTANTS: dict[str, Number] = {"pi": sympy.pi.evalf(PRECISION), "e": sympy.E.evalf(PRECISION)}


def _check_power_size(base: Number, exponent: Number) -> None:
    """Refuse `base ** exponent` before computing it when the result would have over `MAX_DIGITS` digits.

    The estimate is `|exponent| * log10(size)` digits, where size is the larger of numerator and
    denominator of an exact base, or |base| of a decimal one; it is computed in log space, so an
    exponent with thousands of digits does not overflow a float.
    """
    if base == 0 or exponent == 0 or abs(base) == 1:
        return
    exact = isinstance(base, sympy.Rational)
    size = math.log10(max(abs(int(base.p)), int(base.q))) if exact else abs(_log10_abs(base))
    if size == 0:
        return
    log_estimate = _log10_abs(exponent) + math.log10(size)  # log10 of the result's digit count
    if log_estimate > math.log10(MAX_DIGITS):
        shown = f"{10**log_estimate:.0f}" if log_estimate < 15 else f"10^{log_estimate:.1f}"
        raise ToolError(f"the power would have about {shown} digits (limit {MAX_DIGITS}); use smaller numbers")


def _power(base: Number, exponent: Number) -> Number:
    """`base ** exponent`, refused before computing when the result would be too large."""
    if _is_integer(exponent):
        if base == 0 and exponent < 0:
            raise ToolError("division by zero (0 to a negative power)")
        _check_power_size(base, exponent)
        if isinstance(base, sympy.Rational):
            return _checked(base ** int(exponent))
        return _checked(sympy.Pow(base, exponent))
    if base < 0:
        raise ToolError("a negative number to a fractional power is not a real number")
    if isinstance(base, sympy.Rational) and isinstance(exponent, sympy.Rational) and exponent.q <= 64:
        exact = _exact_root(base, int(exponent.q))
        if exact is not None:
            return _power(exact, sympy.Integer(exponent.p))
    _check_power_size(base, exponent)
    return _checked(sympy.Pow(_float(base), _float(exponent)).evalf(PRECISION))


def _exact_root(value: Number, n: int) -> Number | None:
    """The exact n-th root of a non-negative rational, or None when it is irrational."""
    num, num_exact = sympy.integer_nthroot(int(value.p), n)
    den, den_exact = sympy.integer_nthroot(int(value.q), n)
    return sympy.Rational(num, den) if num_exact and den_exact else None


def _floordiv(a: Number, b: Number) -> Number:
    if b == 0:
        raise ToolError("division by zero")
    return _floor(a / b)


def _mod(a: Number, b: Number) -> Number:
    if b == 0:
        raise ToolError("modulo by zero")
    return _checked(a - b * _floordiv(a, b))


def _div(a: Number, b: Number) -> Number:
    if b == 0:
        raise ToolError("division by zero")
    return _checked(a / b)


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: lambda a, b: _checked(a + b),
    ast.Sub: lambda a, b: _checked(a - b),
    ast.Mult: lambda a, b: _checked(a * b),
    ast.Div: _div,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
    ast.Pow: _power,
    ast.BitXor: _power,  # '^' means a power in calculator notation
}


def _constant(node: ast.Constant, source: str) -> Number:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError(f"only numbers are allowed, got {type(value).__name__} {value!r:.40}")
    if isinstance(value, float):
        return _decimal_literal(ast.get_source_segment(source, node) or repr(value))
    return _checked(sympy.Integer(value))


def _decimal_literal(text: str) -> Number:
    """The exact value of a decimal literal as written ('0.1' is 1/10; '1e-400' is refused, not 0)."""
    try:
        number = decimal.Decimal(text)
    except decimal.InvalidOperation as exc:  # pragma: no cover - ast only yields valid float literals
        raise ToolError(f"cannot read the number {text[:40]!r}") from exc
    if not number.is_finite():
        raise ToolError("number literal is too large")
    if number and abs(number.adjusted()) + len(number.as_tuple().digits) > MAX_DIGITS:
        raise ToolError(f"number literal {text[:40]!r} is too large or too small (limit {MAX_DIGITS} digits)")
    numerator, denominator = number.as_integer_ratio()
    return _checked(sympy.Rational(numerator, denominator))


def _call(node: ast.Call, source: str) -> Number:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        raise ToolError(f"unknown function {ast.unparse(node.func)[:40]!r}; available: {', '.join(FUNCTIONS)}")
    if node.keywords:
        raise ToolError(f"{node.func.id}() takes positional arguments only")
    fn, low, high = FUNCTIONS[node.func.id]
    if not low <= len(node.args) <= high:
        raise ToolError(f"{node.func.id}() takes {low}" + (f" to {high}" if high != low else "") +
                        f" argument(s), got {len(node.args)}")
    return _checked(fn(*(_eval(arg, source) for arg in node.args)))


def _eval(node: ast.AST, source: str) -> Number:
    if isinstance(node, ast.Constant):
        return _constant(node, source)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, source), _eval(node.right, source))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, source)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id.startswith("__"):
            raise ToolError(f"name {node.id!r} is not allowed")
        raise ToolError(f"unknown name {node.id!r}; use numbers, pi, e and the functions: {', '.join(FUNCTIONS)}")
    if isinstance(node, ast.Call):
        return _call(node, source)
    if isinstance(node, ast.Tuple):
        raise ToolError("a comma is not allowed: write numbers without thousands separators (1000, not 1,000), "
                        "one expression per call")
    raise ToolError(f"{_describe(node)} is not allowed; use numbers, + - * / // % ** and parentheses")


def _describe(node: ast.AST) -> str:
    names = {ast.Attribute: "attribute access", ast.Subscript: "indexing", ast.Lambda: "lambda",
             ast.Compare: "a comparison", ast.BoolOp: "and/or", ast.IfExp: "if/else"}
    return names.get(type(node), type(node).__name__)


_NORMALISE = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-"})


def _format_float(value: Number) -> str:
    text = str(sympy.Float(value, SHOWN_DIGITS))
    mantissa, sep, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + sep + exponent


def _terminating_places(q: int) -> int | None:
    """Decimal places of p/q when it terminates (q = 2^a 5^b), else None."""
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    return max(twos, fives) if q == 1 else None


def _format(value: Number) -> str:
    """Integers exactly; short terminating fractions as exact decimals; others as 'p/q ≈ decimal'."""
    if isinstance(value, sympy.Integer):
        return str(int(value))
    if isinstance(value, sympy.Rational):
        places = _terminating_places(int(value.q))
        if places is not None and places <= 30:
            scaled = abs(int(value.p)) * (10**places // int(value.q))
            digits = str(scaled).rjust(places + 1, "0")
            sign = "-" if value < 0 else ""
            return f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
        return f"{value.p}/{value.q} ≈ {_format_float(value)}"
    return _format_float(value)


def evaluate(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result as text.

    Args:
        expression: Python-style arithmetic, e.g. '(48 / 2) * 3 + 2**10' or 'sqrt(2) * pi'.

    Returns:
        The value: an exact integer ('1048'), an exact terminating decimal ('0.3'), an exact
        fraction with its decimal value ('1/3 ≈ 0.333333333333333'), or a 15-digit decimal.

    Raises:
        ToolError: the expression is too long, does not parse, uses anything outside the
            whitelist, divides by zero, or would produce a number over `MAX_DIGITS` digits.
    """
    text = expression.translate(_NORMALISE).strip().rstrip("=").strip()
    if not text:
        raise ToolError("empty expression; write an arithmetic expression such as '12 * (3 + 4)'")
    if len(text) > MAX_LENGTH:
        raise ToolError(f"expression too long ({len(text)} characters, limit {MAX_LENGTH}); split it into steps")
    if re.search(r"__|\bimport\b|\blambda\b", text):
        raise ToolError("only arithmetic is allowed: no imports, lambdas or dunder names")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise ToolError(f"cannot parse {text[:80]!r}: {getattr(exc, 'msg', exc)}; use Python arithmetic such as "
                        "'(3 + 4) * 2'") from exc
    except (RecursionError, MemoryError) as exc:
        raise ToolError("expression is nested too deeply; split it into steps") from exc
    try:
        return _format(_eval(tree.body, text))
    except RecursionError as exc:
        raise ToolError("expression is nested too deeply; split it into steps") from exc
    except ZeroDivisionError as exc:
        raise ToolError("division by zero") from exc


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly (Python syntax).

    Supports + - * / // % ** (or ^), parentheses, pi, e and the functions sqrt, abs, round, floor,
    ceil, exp, log, ln, log10, log2, sin, cos, tan, atan, factorial, comb, gcd, lcm, min, max.

    Args:
        expression: the expression to evaluate, e.g. '16 - 3 - 4' or '(48 / 2) * 1.5'.
    """
    return evaluate(expression)


def calculator_tool(timeout_s: float = 5.0, description: str | None = None) -> Tool:
    """The `calculator` tool (`evaluate` under `timeout_s` seconds).

    Args:
        timeout_s: per-call limit, seconds.
        description: the tool description the model reads in its schema; None: `calculator`'s
            docstring (which lists every function).
    """
    return Tool(calculator, name="calculator", description=description, timeout_s=timeout_s,
                max_output_chars=MAX_DIGITS + 200)
