"""Arithmetic around a tested value, moved out of the sandbox and computed in the trusted parent.

Asserts such as `abs(f(x) - 2.5) < 1e-6` or `math.isclose(f(x), 7.0)` compute their operand
with builtins the candidate shares a process with: a candidate that reaches the interpreter's
state (frame introspection, `gc`, `ctypes`) can make `abs` return 0 and pass. So the rewriter
splits such an operand into a *template* evaluated here (`abs(__rlvr_leaf0 - 2.5)`) and *leaves*
evaluated in the child (`f(x)`): the child reports only the leaves' values (strictly encoded,
plain built-in types), the constants (2.5) never enter the sandbox, and the arithmetic runs on
the real builtins. Leaves keep everything else (calls to the candidate, conversions such as
`list(...)`, comprehensions), whose values the candidate controls anyway.

Templates contain only: constants, leaves, `+ - * / // % **`, unary `- +`, tuple/list displays,
and calls of `abs`, `round`, `math.isclose`, `math.fabs`. Sizes are bounded before computing
(a leaf is candidate data): an int result over `MAX_INT_BITS` bits or a sequence over
`MAX_ITEMS` items raises `TemplateRefused`, which fails the assert.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
from typing import Any

from rlvr.verifiers import safe_ast

__all__: list[str] = []

LEAF = "__rlvr_leaf"
"""Name prefix of a leaf in a template (`__rlvr_leaf0`, `__rlvr_leaf1`, ...)."""
MAX_INT_BITS = 100_000
MAX_ITEMS = 1_000_000

_BINOPS: dict[type[ast.operator], Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Any] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_CALLS: dict[str, Any] = {"abs": abs, "round": round}
_MATH: dict[str, Any] = {"isclose": math.isclose, "fabs": math.fabs}
_MATH_KEYWORDS = {"rel_tol", "abs_tol"}


class TemplateRefused(ValueError):
    """A template computation refused: an operand too large or of the wrong kind (the assert fails)."""


def _callee(node: ast.Call, builtins: frozenset[str], math_module: bool) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        ok = func.id in _CALLS and func.id in builtins and not node.keywords
    else:
        ok = (math_module and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
              and func.value.id == "math" and func.attr in _MATH
              and all(k.arg in _MATH_KEYWORDS for k in node.keywords))
    return ok and not any(isinstance(a, ast.Starred) for a in node.args)


def _evaluable(node: ast.expr, builtins: frozenset[str], math_module: bool) -> bool:
    """Whether `node` itself is a template operation (its children may still be leaves)."""
    if isinstance(node, ast.BinOp):
        return type(node.op) in _BINOPS
    if isinstance(node, ast.UnaryOp):
        return type(node.op) in _UNARY
    if isinstance(node, ast.Call):
        return _callee(node, builtins, math_module)
    return False


def split_operand(node: ast.expr, builtins: frozenset[str], math_module: bool) -> tuple[ast.expr, list[ast.expr]]:
    """Split an assert operand into (template, leaves); a template that is one bare leaf means "no split".

    Args:
        node: the operand expression.
        builtins: the names among `abs`, `round` that mean the builtins here (not rebound by the
            tests or the candidate).
        math_module: `math` is the standard module in the tests (imported as `math`, not rebound).
    """
    leaves: list[ast.expr] = []

    def walk(n: ast.expr) -> ast.expr:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, complex, bool, str)):
            return n
        if isinstance(n, (ast.Tuple, ast.List)) and isinstance(n.ctx, ast.Load):
            return type(n)(elts=[walk(e) for e in n.elts], ctx=ast.Load())
        if _evaluable(n, builtins, math_module):
            if isinstance(n, ast.BinOp):
                return ast.BinOp(left=walk(n.left), op=n.op, right=walk(n.right))
            if isinstance(n, ast.UnaryOp):
                return ast.UnaryOp(op=n.op, operand=walk(n.operand))
            assert isinstance(n, ast.Call)
            return ast.Call(func=n.func, args=[walk(a) for a in n.args],
                            keywords=[ast.keyword(arg=k.arg, value=walk(k.value)) for k in n.keywords])
        leaves.append(n)
        return ast.Name(id=f"{LEAF}{len(leaves) - 1}", ctx=ast.Load())

    if not _evaluable(node, builtins, math_module):
        return node, [node]
    return walk(node), leaves


@functools.lru_cache(maxsize=4096)
def _compiled(template: str) -> ast.expr:
    return safe_ast.parse_expression(template)


def evaluate_template(template: str, leaves: list[Any]) -> Any:
    """Evaluate a template (source from `split_operand`, unparsed) on the decoded leaf values.

    Raises:
        TemplateRefused: an operation on values over the size bounds, or on unsupported nodes.
        ArithmeticError, TypeError, ValueError: as Python raises them for these values (the
            assert fails, as it would have failed in the child).
    """
    return _eval(_compiled(template), leaves)


def _eval(node: ast.expr, leaves: list[Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id.startswith(LEAF):
        return leaves[int(node.id[len(LEAF):])]
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_eval(e, leaves) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, leaves))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, leaves), _eval(node.right, leaves)
        if isinstance(node.op, ast.Mod) and isinstance(left, (str, bytes)) and not isinstance(node.left, ast.Constant):
            raise TemplateRefused("%-formatting with a format string from the sandbox")
        _guard(node.op, left, right)
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        args = [_eval(a, leaves) for a in node.args]
        kwargs = {str(k.arg): _eval(k.value, leaves) for k in node.keywords}
        if isinstance(node.func, ast.Name) and node.func.id in _CALLS:
            if node.func.id == "round" and len(args) > 1 and isinstance(args[1], int) and abs(args[1]) > 10_000:
                raise TemplateRefused("round() with more than 10,000 digits")
            return _CALLS[node.func.id](*args, **kwargs)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _MATH:
            return _MATH[node.func.attr](*args, **kwargs)
    raise TemplateRefused(f"unsupported template node {type(node).__name__}")


def _bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) else 64


def _guard(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse operations whose result would be huge (leaf values come from the candidate)."""
    if isinstance(op, ast.Pow):
        if isinstance(right, int) and isinstance(left, int) and _bits(left) * max(right, 0) > MAX_INT_BITS:
            raise TemplateRefused("integer power too large")
        return
    if isinstance(op, ast.Mult):
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, list, tuple)) and isinstance(times, int) and \
                    len(seq) * max(times, 0) > MAX_ITEMS:
                raise TemplateRefused("sequence repetition too large")
        if isinstance(left, int) and isinstance(right, int) and _bits(left) + _bits(right) > MAX_INT_BITS:
            raise TemplateRefused("integer product too large")
    if isinstance(op, ast.Add) and isinstance(left, (str, bytes, list, tuple)) and \
            isinstance(right, (str, bytes, list, tuple)) and len(left) + len(right) > MAX_ITEMS:
        raise TemplateRefused("concatenation too large")
