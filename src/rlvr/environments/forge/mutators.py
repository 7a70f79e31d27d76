"""Seeded AST mutators: the bug families `rlvr forge` plants in functions the kept tests exercise.

After SWE-smith's procedural bug generation (`swesmith/bug_gen/procedural`, arXiv 2504.21798:
13 libcst modifiers such as `OperationChangeModifier`, `ControlIfElseInvertModifier`,
`RemoveAssignModifier`), with two differences: every candidate changes exactly one *site* (one
operator, one statement, one branch), so its diff is small and its reverse patch is the fix; and
the rest of the file keeps its text byte for byte (the change is spliced into the original source
at the node's position, never re-rendered from the tree), so comments and formatting survive.

A family finds its sites in a function's body (`sites(function, source)`), nested functions and
classes excluded (they are functions of their own); `candidates(...)` applies one site at a time,
keeps those whose result parses and differs from the original tree, and orders them by a seeded
shuffle, so the same seed proposes the same bugs. The families (`MUTATORS`, by name):

| name | change | SWE-smith counterpart |
|---|---|---|
| `comparison-flip` | `==`/`!=`, `<`/`>`, `<=`/`>=`, `in`/`not in`, `is`/`is not` | `OperationFlipOperator...` |
| `off-by-one` | `<`/`<=`, `>`/`>=`; an integer index, slice bound or `range` bound +/- 1 | -- |
| `arithmetic-swap` | `+`/`-`, `*`/`//`, `/`/`*`, `%`/`//`, `**`/`*`, `<<`/`>>`, `&`/`|`/`^` | `OperationChange...` |
| `boolean-swap` | `and`/`or` | `OperationFlipOperator...` |
| `negated-condition` | the test of an `if`/`elif`/`while`/conditional expression negated; a `not` removed | -- |
| `removed-statement` | one assignment, call or `del` statement removed | `RemoveAssignModifier` |
| `removed-branch` | an `if` without `else` removed, or the `else` branch of one | `RemoveConditionalModifier` |
| `swapped-arguments` | two adjacent positional arguments of a call swapped | -- |
| `changed-constant` | a number +/- 1, `True`/`False` | `OperationChangeConstants...` |
| `wrong-return` | a boolean return negated, any other returned value replaced by `None` | -- |
| `dropped-raise` | a `raise` statement removed | -- |
| `swapped-operands` | the operands of a non-commutative operator or a comparison swapped | `OperationSwapOperands...` |
| `if-else-invert` | the bodies of an `if`/`else` swapped | `ControlIfElseInvertModifier` |
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from rlvr.core.errors import ConfigError
from rlvr.verifiers.safe_ast import AST_LOCK

__all__ = ["MUTATORS", "candidates", "functions_of", "project_candidates", "resolve_mutators"]


@dataclass(frozen=True)
class Edit:
    """Replace `source[start:end]` (character offsets) with `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Site:
    """One change a family can make: its edits (non-overlapping) and a one-line note of what changed."""

    edits: tuple[Edit, ...]
    line: int
    note: str


@dataclass(frozen=True)
class Function:
    """A function or method of a module: where it is and its node.

    Attributes:
        path: the file, relative to the import root's project (e.g. `src/pkg/core.py`).
        qualname: `Class.method` or `function` (nested functions: `outer.<locals>.inner`).
        first_line: the first line of its definition (its first decorator's, as `co_firstlineno`).
        node: the `def` node.
    """

    path: str
    qualname: str
    first_line: int
    node: ast.FunctionDef | ast.AsyncFunctionDef = field(compare=False, hash=False)


@dataclass(frozen=True)
class Mutant:
    """One candidate bug: the file's new text and what changed.

    Attributes:
        path: the file changed (relative path).
        function: the qualified name of the function changed.
        mutator: the family's name.
        line: the line changed (1-based, in the original file).
        note: what changed, e.g. "`<` -> `<=`" (metadata only: never shown to an agent).
        source: the whole file after the change.
        key: hash of the changed function's new syntax tree (positions left out): equal keys are the same bug.
        site: index of the site among the family's sites in the function (stable for a source).
    """

    path: str
    function: str
    mutator: str
    line: int
    note: str
    source: str
    key: str
    site: int


class _Text:
    """A source text with line/column (UTF-8 byte) positions turned into character offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def seg(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line_start(self, lineno: int) -> int:
        return self.starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        return self.starts[lineno]

    def own_lines(self, node: ast.stmt) -> bool:
        """True when the statement alone fills its lines (nothing before it, only a comment after it)."""
        start, end = self.span(node)
        before = self.source[self.line_start(node.lineno):start]
        after = self.source[end:self.line_end(node.end_lineno or node.lineno)]
        return not before.strip() and (not after.strip() or after.strip().startswith("#"))

    def indent(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[:len(line) - len(line.lstrip())]


def _body_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Every node of the function's body, not descending into nested functions, classes or lambdas."""
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.JoinedStr)):
            continue  # nested definitions are functions of their own; f-string parts have no reliable positions
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _docstring(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST | None:
    first = function.body[0] if function.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def _blocks(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[list[ast.stmt]]:
    """Every statement list of the body (the body itself, if/else/for/while/with/try blocks), nested defs excluded."""
    yield function.body
    for node in _body_nodes(function):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt) and not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield block
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                yield handler.body


class Mutator:
    """A bug family: finds the sites it can change in a function (subclasses implement `sites`)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        """The sites of this family in `function`'s body, in source order."""
        raise NotImplementedError

    @staticmethod
    def _nodes(function: ast.FunctionDef | ast.AsyncFunctionDef, kind: type | tuple[type, ...]) -> list[ast.AST]:
        doc = _docstring(function)
        return [n for n in _body_nodes(function) if isinstance(n, kind) and n is not doc]


_OP_TEXT: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@",
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.And: "and", ast.Or: "or",
}


def _find_op(text: _Text, left: ast.AST, right: ast.AST, op: str) -> tuple[int, int] | None:
    """Where the operator `op` between the operands `left` and `right` is (character offsets).

    The gap between two operands holds the operator, whitespace, parentheses and maybe a comment
    or a line continuation; a word operator (`and`, `not in`) is matched as words, a symbol one
    (`*`) not as part of a longer symbol (`**`, `*=`).
    """
    gap_start, gap_end = text.span(left)[1], text.span(right)[0]
    gap = re.sub(r"#[^\n]*", lambda m: " " * len(m.group(0)), text.source[gap_start:gap_end])
    if op[0].isalpha():
        pattern = r"\b" + r"\s+".join(op.split()) + r"\b"
    else:
        pattern = rf"(?<![*/<>=!&|^%@+\-~]){re.escape(op)}(?![*/<>=!&|^%@+\-~])"
    found = [m for m in re.finditer(pattern, gap)]
    if len(found) != 1:
        return None
    return gap_start + found[0].start(), gap_start + found[0].end()


def _op_site(text: _Text, left: ast.AST, right: ast.AST, old: str, new: str, line: int) -> Site | None:
    where = _find_op(text, left, right, old)
    if where is None:
        return None
    return Site((Edit(where[0], where[1], new),), line, f"`{old}` -> `{new}`")


class _CompareOps(Mutator):
    """Replace one operator of a comparison (`TABLE` maps an operator type to its replacement)."""

    TABLE: ClassVar[dict[type, type]] = {}

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, ast.Compare):
            assert isinstance(node, ast.Compare)
            parts = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                new = self.TABLE.get(type(op))
                site = None if new is None else _op_site(text, parts[i], parts[i + 1], _OP_TEXT[type(op)],
                                                         _OP_TEXT[new], node.lineno)
                if site is not None:
                    out.append(site)
        return out


class ComparisonFlip(_CompareOps):
    """`==`/`!=`, `<`/`>`, `<=`/`>=`, `in`/`not in`, `is`/`is not` (SWE-smith `OperationFlipOperatorModifier`)."""

    name = "comparison-flip"
    summary = "a comparison operator replaced by its opposite"
    TABLE: ClassVar[dict[type, type]] = {
        ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE,
        ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


class OffByOne(_CompareOps):
    """A boundary moved by one: `<`/`<=`, `>`/`>=`, or an integer index, slice bound or `range` bound +/- 1."""

    name = "off-by-one"
    summary = "a boundary moved by one"
    TABLE: ClassVar[dict[type, type]] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = super().sites(function, text)
        bounds: list[ast.expr] = []
        for node in self._nodes(function, (ast.Subscript, ast.Call)):
            if isinstance(node, ast.Subscript):
                sl = node.slice
                bounds += [b for b in ((sl.lower, sl.upper) if isinstance(sl, ast.Slice) else (sl,)) if b is not None]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
                bounds += node.args[:2]
        for bound in bounds:
            target = bound.operand if isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub) else bound
            if isinstance(target, ast.Constant) and type(target.value) is int:
                value = -target.value if target is not bound else target.value
                start, end = text.span(bound)
                for delta in (1, -1):
                    out.append(Site((Edit(start, end, str(value + delta)),), bound.lineno,
                                    f"bound {value} -> {value + delta}"))
            elif isinstance(bound, (ast.Name, ast.Attribute, ast.Call, ast.BinOp)):
                start, end = text.span(bound)
                seg = text.seg(bound)
                wrapped = f"({seg})" if isinstance(bound, ast.BinOp) else seg
                out.append(Site((Edit(start, end, f"{wrapped} + 1"),), bound.lineno, f"bound `{seg}` -> +1"))
        return out


_ARITH: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
                            ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.LShift: ast.RShift,
                            ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
                            ast.BitXor: ast.BitOr}


class ArithmeticSwap(Mutator):
    """An arithmetic or bitwise operator swapped, in augmented assignments too (SWE-smith `OperationChangeModifier`)."""

    name = "arithmetic-swap"
    summary = "an arithmetic or bitwise operator replaced"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, (ast.BinOp, ast.AugAssign)):
            new = _ARITH.get(type(node.op))  # type: ignore[attr-defined]
            if new is None:
                continue
            old = _OP_TEXT[type(node.op)]  # type: ignore[attr-defined]
            if isinstance(node, ast.BinOp):
                if isinstance(node.op, ast.Add) and _is_str(node):
                    continue  # string concatenation: `-` would only raise TypeError
                site = _op_site(text, node.left, node.right, old, _OP_TEXT[new], node.lineno)
            else:
                assert isinstance(node, ast.AugAssign)
                site = _op_site(text, node.target, node.value, old + "=", _OP_TEXT[new] + "=", node.lineno)
            if site is not None:
                out.append(site)
        return out


def _is_str(node: ast.BinOp) -> bool:
    return any(isinstance(side, ast.JoinedStr) or (isinstance(side, ast.Constant) and isinstance(side.value, str))
               for side in (node.left, node.right))


class BooleanSwap(Mutator):
    """`and`/`or` (SWE-smith `OperationFlipOperatorModifier` on boolean operations)."""

    name = "boolean-swap"
    summary = "`and` and `or` swapped"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, ast.BoolOp):
            assert isinstance(node, ast.BoolOp)
            new = "or" if isinstance(node.op, ast.And) else "and"
            old = _OP_TEXT[type(node.op)]
            edits = [_find_op(text, a, b, old) for a, b in zip(node.values, node.values[1:], strict=False)]
            if all(e is not None for e in edits):
                out.append(Site(tuple(Edit(e[0], e[1], new) for e in edits if e is not None), node.lineno,
                                f"`{old}` -> `{new}`"))
        return out


def _negate(text: _Text, test: ast.expr) -> str:
    seg = text.seg(test)
    simple = isinstance(test, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
    return f"not {seg}" if simple else f"not ({seg})"


class NegatedCondition(Mutator):
    """The test of an `if`/`elif`/`while`/conditional expression negated, or a `not` removed."""

    name = "negated-condition"
    summary = "a condition negated"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, (ast.If, ast.While, ast.IfExp, ast.UnaryOp)):
            if isinstance(node, ast.UnaryOp):
                if isinstance(node.op, ast.Not):
                    start, end = text.span(node)
                    seg = text.seg(node.operand)
                    inner = seg if isinstance(node.operand, (ast.Name, ast.Attribute, ast.Call, ast.Subscript,
                                                             ast.Constant)) else f"({seg})"
                    out.append(Site((Edit(start, end, inner),), node.lineno, "`not` removed"))
                continue
            test = node.test  # type: ignore[attr-defined]
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                continue  # the `not` removal above covers it
            start, end = text.span(test)
            out.append(Site((Edit(start, end, _negate(text, test)),), test.lineno, "condition negated"))
        return out


_SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Delete)


def _remove(text: _Text, block: list[ast.stmt], index: int) -> tuple[Edit, ...] | None:
    """Edits removing `block[index]` (whole lines; `pass` when it is the block's only statement)."""
    node = block[index]
    if not text.own_lines(node):
        return None
    start, end = text.line_start(node.lineno), text.line_end(node.end_lineno or node.lineno)
    if len(block) == 1:
        return (Edit(start, end, f"{text.indent(node.lineno)}pass\n"),)
    return (Edit(start, end, ""),)


class RemovedStatement(Mutator):
    """One assignment, call or `del` statement removed (SWE-smith `RemoveAssignModifier`)."""

    name = "removed-statement"
    summary = "a statement removed"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        doc = _docstring(function)
        for block in _blocks(function):
            for i, node in enumerate(block):
                if node is doc or not isinstance(node, _SIMPLE_STATEMENTS):
                    continue
                if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await, ast.Yield,
                                                                              ast.YieldFrom)):
                    continue
                edits = _remove(text, block, i)
                if edits:
                    out.append(Site(edits, node.lineno, f"`{text.seg(node).splitlines()[0][:60]}` removed"))
        return out


def _else_line(text: _Text, node: ast.If) -> int | None:
    """The line of an `if` statement's `else:` (None when its orelse is an `elif`)."""
    last = node.body[-1].end_lineno or node.body[-1].lineno
    for lineno in range(last + 1, node.orelse[0].lineno + 1):
        stripped = text.lines[lineno - 1].strip()
        if stripped.startswith("elif"):
            return None
        if stripped.startswith("else"):
            return lineno
    return None


class RemovedBranch(Mutator):
    """An `if` statement without `else` removed, or the `else` branch of one (SWE-smith `RemoveConditionalModifier`)."""

    name = "removed-branch"
    summary = "a conditional branch removed"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for block in _blocks(function):
            for i, node in enumerate(block):
                if not isinstance(node, ast.If):
                    continue
                if not node.orelse:
                    edits = _remove(text, block, i)
                    if edits:
                        out.append(Site(edits, node.lineno, "`if` block removed"))
                    continue
                else_line = _else_line(text, node)
                if else_line is not None:
                    end = text.line_end(node.orelse[-1].end_lineno or node.orelse[-1].lineno)
                    out.append(Site((Edit(text.line_start(else_line), end, ""),), else_line, "`else` branch removed"))
        return out


class SwappedArguments(Mutator):
    """Two adjacent positional arguments of a call swapped."""

    name = "swapped-arguments"
    summary = "two arguments of a call swapped"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, ast.Call):
            assert isinstance(node, ast.Call)
            args = node.args
            for i in range(len(args) - 1):
                a, b = args[i], args[i + 1]
                if isinstance(a, ast.Starred) or isinstance(b, ast.Starred) or text.seg(a) == text.seg(b):
                    continue
                (sa, ea), (sb, eb) = text.span(a), text.span(b)
                out.append(Site((Edit(sa, ea, text.seg(b)), Edit(sb, eb, text.seg(a))), node.lineno,
                                f"arguments {i + 1} and {i + 2} of `{text.seg(node.func)[:40]}` swapped"))
        return out


class ChangedConstant(Mutator):
    """A number +/- 1 (0 -> 1), `True`/`False` (SWE-smith `OperationChangeConstantsModifier`)."""

    name = "changed-constant"
    summary = "a constant changed"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, ast.Constant):
            assert isinstance(node, ast.Constant)
            value = node.value
            start, end = text.span(node)
            if isinstance(value, bool):
                out.append(Site((Edit(start, end, str(not value)),), node.lineno, f"`{value}` -> `{not value}`"))
            elif type(value) is int:
                new = value + 1 if value in (0, 1) else value - 1
                out.append(Site((Edit(start, end, str(new)),), node.lineno, f"`{value}` -> `{new}`"))
            elif type(value) is float:
                new_f = value + 1.0
                out.append(Site((Edit(start, end, repr(new_f)),), node.lineno, f"`{value}` -> `{new_f}`"))
        return out


_BOOLEAN = (ast.Compare, ast.BoolOp)


class WrongReturn(Mutator):
    """A boolean return value negated; any other returned value replaced by `None`."""

    name = "wrong-return"
    summary = "a wrong value returned"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, ast.Return):
            assert isinstance(node, ast.Return)
            value = node.value
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                continue  # `changed-constant` flips it
            start, end = text.span(value)
            if isinstance(value, _BOOLEAN) or (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)):
                out.append(Site((Edit(start, end, _negate(text, value)),), node.lineno, "boolean return negated"))
            else:
                out.append(Site((Edit(start, end, "None"),), node.lineno, f"`return {text.seg(value)[:40]}` -> None"))
        return out


class DroppedRaise(Mutator):
    """A `raise` statement removed (the error it signalled goes unnoticed)."""

    name = "dropped-raise"
    summary = "a raise statement removed"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for block in _blocks(function):
            for i, node in enumerate(block):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    edits = _remove(text, block, i)
                    if edits:
                        out.append(Site(edits, node.lineno, f"`{text.seg(node).splitlines()[0][:60]}` removed"))
        return out


_NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)


class SwappedOperands(Mutator):
    """The operands of a non-commutative operator or of one comparison swapped (SWE-smith `OperationSwapOperands`)."""

    name = "swapped-operands"
    summary = "operands swapped"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, (ast.BinOp, ast.Compare)):
            if isinstance(node, ast.BinOp):
                if not isinstance(node.op, _NON_COMMUTATIVE) or text.seg(node.left) == text.seg(node.right):
                    continue
                left, right, op = node.left, node.right, _OP_TEXT[type(node.op)]
            else:
                assert isinstance(node, ast.Compare)
                if len(node.ops) != 1 or isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In,
                                                                  ast.NotIn)):
                    continue
                left, right, op = node.left, node.comparators[0], _OP_TEXT[type(node.ops[0])]
            where = _find_op(text, left, right, op)
            if where is None:
                continue
            start, end = text.span(node)  # the operands with their own parentheses: up to the operator
            before, after = text.source[start:where[0]], text.source[where[1]:end]
            swapped = f"{after.strip()} {op} {before.strip()}"
            out.append(Site((Edit(start, end, swapped),), node.lineno, f"operands of `{op}` swapped"))
        return out


class IfElseInvert(Mutator):
    """The bodies of an `if`/`else` swapped (SWE-smith `ControlIfElseInvertModifier`)."""

    name = "if-else-invert"
    summary = "the branches of an if/else swapped"

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, text: _Text) -> list[Site]:
        out = []
        for node in self._nodes(function, ast.If):
            assert isinstance(node, ast.If)
            if not node.orelse:
                continue
            else_line = _else_line(text, node)
            if else_line is None or not all(text.own_lines(s) for s in (*node.body, *node.orelse)):
                continue
            body = (text.line_start(node.body[0].lineno), text.line_end(node.body[-1].end_lineno or 0))
            other = (text.line_start(node.orelse[0].lineno), text.line_end(node.orelse[-1].end_lineno or 0))
            if text.indent(node.body[0].lineno) != text.indent(node.orelse[0].lineno):
                continue
            body_text, other_text = text.source[body[0]:body[1]], text.source[other[0]:other[1]]
            if body_text == other_text:
                continue
            out.append(Site((Edit(*body, other_text), Edit(*other, body_text)), node.lineno, "if/else bodies swapped"))
        return out


MUTATORS: dict[str, Mutator] = {m.name: m for m in (
    ComparisonFlip(), OffByOne(), ArithmeticSwap(), BooleanSwap(), NegatedCondition(), RemovedStatement(),
    RemovedBranch(), SwappedArguments(), ChangedConstant(), WrongReturn(), DroppedRaise(), SwappedOperands(),
    IfElseInvert())}
"""Every bug family, by name (module docstring)."""


def mutator_names() -> list[str]:
    """The family names, in the table's order."""
    return list(MUTATORS)


def resolve_mutators(names: Sequence[str] | str | None) -> list[str]:
    """The chosen family names (None or empty: all); a comma-separated string is split.

    Raises:
        ConfigError: an unknown name (the message lists the known ones).
    """
    if names is None:
        return mutator_names()
    chosen = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    unknown = [n for n in chosen if n not in MUTATORS]
    if unknown:
        raise ConfigError(f"unknown mutator(s) {', '.join(unknown)}; the families are: {', '.join(MUTATORS)}")
    return list(dict.fromkeys(chosen)) or mutator_names()


def functions_of(path: str, source: str) -> list[Function]:
    """Every function and method defined in `source` (nested ones too), with its qualified name.

    Raises:
        SyntaxError: the source does not parse.
    """
    with AST_LOCK:
        tree = ast.parse(source, filename=path)
    found: list[Function] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found.append(Function(path, prefix + child.name, first, child))
                walk(child, f"{prefix}{child.name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif not isinstance(child, ast.Lambda):
                walk(child, prefix)

    walk(tree, "")
    return found


def _apply(source: str, edits: Sequence[Edit]) -> str:
    out, last = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        if edit.start < last:
            raise ValueError("overlapping edits")
        out += [source[last:edit.start], edit.text]
        last = edit.end
    return "".join(out) + source[last:]


def _function_key(path: str, function: Function, source: str, new: str) -> str | None:
    """Hash of the changed function's syntax tree in `new` (None when it does not parse).

    Only the function's own lines are parsed (dedented; the module when that fails): an edit never
    leaves the function, and parsing a large module once per candidate would dominate the cost.
    """
    node = function.node
    first, last = function.first_line, node.end_lineno or node.lineno
    lines = new.splitlines(keepends=True)
    last += len(lines) - len(source.splitlines(keepends=True))
    segment = textwrap.dedent("".join(lines[first - 1:last]))
    try:
        with AST_LOCK:
            tree = ast.parse(segment)
            dumped = ast.dump(tree.body[0]) if len(tree.body) == 1 else None
    except (SyntaxError, ValueError, RecursionError):
        dumped = None
    if dumped is None:
        try:
            with AST_LOCK:
                ast.parse(new, filename=path)
        except (SyntaxError, ValueError, RecursionError):
            return None
        dumped = segment
    return hashlib.sha256(f"{path}\0{function.qualname}\0{dumped}".encode()).hexdigest()[:16]


def candidates(path: str, source: str, functions: Sequence[Function], families: Sequence[str],
               seed: int) -> Iterator[Mutant]:
    """Every single-site mutant of `functions` (all in the file `path` with text `source`), seeded order.

    The order interleaves the families (one of each in turn, each family's own sites shuffled by
    `seed`), so a run that stops early has tried every family about equally. A site whose result
    does not parse, or parses to the original tree, is skipped.

    Args:
        path: the file's relative path.
        source: its text.
        functions: functions of this file to mutate (`functions_of`).
        families: mutator names (`resolve_mutators`).
        seed: the shuffle's seed.

    Yields:
        `Mutant`s, each with a different `key` from the original's.
    """
    text = _Text(source)
    originals = {f.qualname: _function_key(path, f, source, source) for f in functions}
    queues: list[list[tuple[Function, int, Site, str]]] = []
    for name in families:
        mutator = MUTATORS[name]
        sites = [(f, i, s, name) for f in functions for i, s in enumerate(mutator.sites(f.node, text))]
        random.Random(f"{seed}:{path}:{name}").shuffle(sites)
        queues.append(sites)
    while any(queues):
        for queue in queues:
            if not queue:
                continue
            function, index, site, name = queue.pop(0)
            try:
                new = _apply(source, site.edits)
            except ValueError:
                continue
            key = _function_key(path, function, source, new)
            if key is None or key == originals[function.qualname]:
                continue
            yield Mutant(path=path, function=function.qualname, mutator=name, line=site.line, note=site.note,
                         source=new, key=key, site=index)


def project_candidates(files: Sequence[tuple[str, str, Sequence[Function]]], families: Sequence[str],
                       seed: int) -> Iterator[Mutant]:
    """Every mutant of a project's files, interleaved: one candidate of each file in turn.

    File `i` starts its family rotation at family `i` (mod the number of families), so the first
    candidates of a project cover the families evenly even when each file yields only a few before
    the run stops (with one rotation for every file, a run that stops after one round has tried
    only the first family).

    Args:
        files: `(path, source, functions)` of each file (`candidates`' arguments), in the project's order.
        families: mutator names (`resolve_mutators`).
        seed: the shuffle's seed (`candidates`).

    Yields:
        `Mutant`s of every file, one file after the other in turn until all are exhausted.
    """
    streams = []
    for i, (path, source, functions) in enumerate(files):
        start = i % len(families) if families else 0
        streams.append(candidates(path, source, functions, [*families[start:], *families[:start]], seed))
    while streams:
        for stream in list(streams):
            mutant = next(stream, None)
            if mutant is None:
                streams.remove(stream)
            else:
                yield mutant
