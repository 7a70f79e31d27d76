"""Assert-style tests rewritten into probes whose verdict the parent decides.

Every `assert EXPR` becomes `__rlvr_probe__(SITE, (operand, ...))`: the child evaluates the
operands and reports their values (strictly encoded, see `rlvr_code_child.encode`); the parent
re-evaluates the assertion on the decoded plain values. Operands that are literals (`8`,
`[1, 2]`, `"abc"`, `-1.5`) never enter the sandbox: the child gets a hole in their place, so a
candidate that reads the test file or forges the result channel still has to *compute* the
expected values. Shapes:

- `a OP b [OP c ...]` (==, !=, <, <=, >, >=, in, not in, is, is not): each operand probed;
- anything else: its value probed; the parent takes its truth value;
- `not X`: as X, negated in the parent (so `assert not f(x) == 3` keeps 3 out of the sandbox).

Sites inside `if`/`while`/`try`/`with`/`match` blocks, or in functions other than `check`, are
optional; every other site must report at least once. The assert message is dropped.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import operator
import re
from dataclasses import dataclass, field
from typing import Any

from rlvr.verifiers import safe_ast
from rlvr.verifiers.code.arith import evaluate_template, split_operand

__all__ = ["prompt_helpers"]

HARDENED_MODULE = "_rlvr_strict"
"""Module (the `rlvr_code_child` source, mounted read-only next to the tests) that hardened pytest files import."""

_OPS: dict[type[ast.cmpop], Any] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: _same(a, b), ast.IsNot: lambda a, b: not _same(a, b),
}
_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """`is` on decoded values: identity for None/True/False, else same type and equal."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) is type(b) and bool(a == b)


@dataclass(frozen=True)
class Site:
    """One rewritten assert: how the parent re-evaluates it.

    Attributes:
        index: site number (order in the source).
        kind: 'compare' or 'truth'.
        negate: the assert is `not ...` (an odd number of `not`s).
        ops: comparison operator names (for 'compare').
        literals: operand index -> literal value kept in the parent.
        templates: operand index -> (template source, number of leaves) for operands whose
            arithmetic runs in the parent (`rlvr.verifiers.code.arith`).
        required: must be reached at least once.
        line: source line, for details.
        source: the assert's source text (shortened), for details.
    """

    index: int
    kind: str
    negate: bool
    ops: tuple[str, ...]
    literals: dict[int, Any]
    n_operands: int
    required: bool
    line: int
    source: str
    templates: dict[int, tuple[str, int]] = field(default_factory=dict)

    @property
    def n_slots(self) -> int:
        """Values the child reports for this site (one per operand, one per leaf of a template)."""
        return self.n_operands + sum(n - 1 for _template, n in self.templates.values())


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name):
        return _MISSING
    try:
        return safe_ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _split_lines(source: str) -> list[bytes]:
    """Source lines as UTF-8 bytes (AST column offsets count bytes), split at CR/LF only, as the parser does."""
    return [line.encode() for line in re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)]


class _Rewriter(ast.NodeTransformer):
    def __init__(self, source: str, builtins: frozenset[str] = frozenset(), math_module: bool = False) -> None:
        self.lines = _split_lines(source)  # split once: `ast.get_source_segment` re-splits per call
        self.builtins, self.math_module = builtins, math_module
        self.sites: list[Site] = []
        self._optional = 0

    def segment(self, node: ast.AST) -> str:
        """The source text of `node` (as `ast.get_source_segment`, from the lines split once)."""
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if start is None or end is None or col is None or end_col is None or end > len(self.lines):
            return ""
        if start == end:
            return str(self.lines[start - 1][col:end_col].decode(errors="replace"))
        parts = [self.lines[start - 1][col:], *self.lines[start:end - 1], self.lines[end - 1][:end_col]]
        return b"".join(parts).decode(errors="replace")

    def _block(self, node: ast.AST, optional: bool) -> ast.AST:
        self._optional += optional
        try:
            return self.generic_visit(node)
        finally:
            self._optional -= optional

    def visit_If(self, node: ast.If) -> ast.AST:
        return self._block(node, True)

    def visit_While(self, node: ast.While) -> ast.AST:
        return self._block(node, True)

    def visit_Try(self, node: ast.Try) -> ast.AST:
        return self._block(node, True)

    def visit_With(self, node: ast.With) -> ast.AST:
        return self._block(node, True)

    def visit_Match(self, node: ast.Match) -> ast.AST:
        return self._block(node, True)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._block(node, node.name != "check")

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._block(node, True)

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        test, negate = node.test, False
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negate = test.operand, not negate
        ops: tuple[str, ...] = ()
        if isinstance(test, ast.Compare):
            kind, operands = "compare", [test.left, *test.comparators]
            ops = tuple(type(op).__name__ for op in test.ops)
        else:
            kind, operands = "truth", [test]
        literals: dict[int, Any] = {}
        templates: dict[int, tuple[str, int]] = {}
        elts: list[ast.expr] = []
        for i, operand in enumerate(operands):
            value = _literal(operand)
            if value is not _MISSING:
                literals[i] = value
                elts.append(ast.Name(id="__rlvr_hole__", ctx=ast.Load()))
                continue
            template, leaves = split_operand(operand, self.builtins, self.math_module)
            if leaves != [operand]:  # arithmetic around the leaves runs in the parent
                templates[i] = (safe_ast.unparse(template), len(leaves))
            elts.extend(leaves)
        index = len(self.sites)
        text = self.segment(node)
        self.sites.append(Site(index, kind, negate, ops, literals, len(operands), self._optional == 0, node.lineno,
                               text if len(text) <= 200 else text[:197] + "...", templates))
        call = ast.Call(func=ast.Name(id="__rlvr_probe__", ctx=ast.Load()),
                        args=[ast.Constant(index), ast.Tuple(elts=elts, ctx=ast.Load())], keywords=[])
        return ast.copy_location(ast.Expr(value=call), node)


@dataclass(frozen=True)
class Instrumented:
    """Assert-style tests rewritten for the child, with what the parent needs to judge them.

    Attributes:
        code: the child's test code (asserts replaced by probes; expected literals replaced by holes).
        sites: one `Site` per rewritten assert, in source order.
        imports: absolute module names the tests import (the child imports and snapshots them
            before the candidate runs), sorted.
    """

    code: str
    sites: tuple[Site, ...]
    imports: tuple[str, ...]


def instrument(tests: str, shadowed: frozenset[str] = frozenset()) -> tuple[str, list[Site]]:
    """Rewrite the asserts of `tests`; return the child's code and the parent's sites.

    Raises:
        SyntaxError: the test code does not parse.
    """
    done = instrument_cached(tests, shadowed)
    return done.code, list(done.sites)


PARENT_NAMES = frozenset({"abs", "round", "math"})
"""Names whose use in an assert operand may be computed in the parent (`arith`), unless rebound."""


@dataclass(frozen=True)
class _Scan:
    """What one walk over a tree finds: names it binds, whether it does `import math`, modules it imports."""

    bound: frozenset[str]
    imports_math: bool
    modules: tuple[str, ...]


def _scan(tree: ast.AST) -> _Scan:
    """Names the code binds (assignments, defs, imports, parameters), `import math`, and absolute module imports."""
    bound: set[str] = set()
    modules: set[str] = set()
    imports_math = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif node.module and not node.level:
                modules.add(node.module)
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if isinstance(node, ast.Import) and alias.name == "math" and name == "math":
                    imports_math = True
                else:
                    bound.add(name)
    return _Scan(frozenset(bound), imports_math, tuple(sorted(modules)))


def imported_modules(source: str) -> tuple[str, ...]:
    """Absolute modules `source` imports, sorted (empty when it does not parse)."""
    try:
        return _scan(safe_ast.parse(source)).modules
    except (SyntaxError, ValueError):
        return ()


def shadowed_names(code: str) -> frozenset[str]:
    """The `PARENT_NAMES` that candidate `code` binds at any level (empty when it does not parse)."""
    if not any(name in code for name in PARENT_NAMES):
        return frozenset()
    try:
        bound = _scan(safe_ast.parse(code)).bound
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return frozenset()
    return bound & PARENT_NAMES


@functools.lru_cache(maxsize=2048)
def instrument_cached(tests: str, shadowed: frozenset[str] = frozenset()) -> Instrumented:
    """`instrument` plus the tests' imports, parsed once per distinct test source.

    Cached (2,048 sources): under GRPO every sample of a group is checked against the same tests,
    so the parse, rewrite and unparse (about 2-6 ms for a HumanEval test) run once per task.

    Args:
        tests: assert-style test code.
        shadowed: `PARENT_NAMES` the candidate rebinds and the tests are meant to call (a task
            whose function is named `round`): those stay in the child.

    Raises:
        SyntaxError: the test code does not parse (not cached: raised again on each call).
    """
    tree = safe_ast.parse(tests)
    scan = _scan(tree)
    free = PARENT_NAMES - scan.bound - shadowed
    rewriter = _Rewriter(tests, frozenset(free - {"math"}), scan.imports_math and "math" in free)
    tree = rewriter.visit(tree)  # no fix_missing_locations: the tree is unparsed, never compiled
    tree = _CallWrapper().visit(tree)
    return Instrumented(safe_ast.unparse(tree), tuple(rewriter.sites), scan.modules)


_UNWRAPPED = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec", "breakpoint", "__rlvr_probe__",
                        "__rlvr_call__"})
"""Callees kept as direct calls: they read the calling frame (zero-argument `super()`, `locals()`...)."""


class _CallWrapper(ast.NodeTransformer):
    """`f(a, k=b)` -> `__rlvr_call__(f, a, k=b)`: the child settles the interpreter state after each call."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _UNWRAPPED:
            return node
        call = ast.Call(func=ast.Name(id="__rlvr_call__", ctx=ast.Load()), args=[node.func, *node.args],
                        keywords=node.keywords)
        return ast.copy_location(call, node)


@functools.lru_cache(maxsize=2048)
def wrap_calls(source: str) -> str:
    """`source` with every call routed through `__rlvr_call__` (setup code run next to the tests; cached).

    Raises:
        SyntaxError: the code does not parse.
    """
    if not source.strip():
        return source
    return safe_ast.unparse(_CallWrapper().visit(safe_ast.parse(source)))


@functools.lru_cache(maxsize=2048)
def prompt_helpers(source: str, tests: str, entry_point: str) -> str:
    """The task's own helper definitions that its tests use, from trusted `source` (prompt or reference solution).

    HumanEval/38 and /50 compute the expected value with a helper the prompt defines
    (`encode_cyclic`, `encode_shift`); a candidate may redefine it. The child runs these
    definitions (with the source's top-level imports) in the tests' namespace after the candidate,
    so the tests always call the prompt's version. Empty when the tests use none or a source does not parse.
    """
    try:
        tree, used = safe_ast.parse(source), _loaded_names(safe_ast.parse(tests))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.name != entry_point and n.name in used]
    if not defs:
        return ""
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return safe_ast.unparse(ast.Module(body=[*imports, *defs], type_ignores=[]))


def _module_bindings(tree: ast.Module) -> frozenset[str]:
    """Names bound at module level (also inside module-level `if`/`for`/`with`/`try`), not in nested scopes."""
    bound: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(bound)


@functools.lru_cache(maxsize=2048)
def candidate_names(trusted: tuple[str, ...], solution: str | None, entry_point: str | None,
                    builtin_names: frozenset[str], functions: tuple[str, ...] = (),
                    ) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """Which top-level names of the candidate the assert tests get: `(names, builtins_taken, module_refs)`.

    The tests get the entry point, and the names their trusted code (`trusted`: tests, setup,
    helpers) loads that it does not bind at module level and that are not builtins: the task's
    functions and classes (MBPP's `Node`, `Pair`). A builtin name is taken from the candidate only
    when it is in `functions`, or there is no entry point and the reference `solution` binds it at
    module level (MBPP 126 tests a function named `sum`); otherwise `sum`, `sorted`, `abs`... in the tests are the real
    builtins whatever the candidate defines (a candidate `def sorted` cannot change the expected side).
    `module_refs`: names the trusted code uses as an attribute base (`math.isclose`, `sys.getsizeof`)
    that no solution or `functions` defines: the child binds them to the real module when one of
    that name is imported, whatever the candidate bound (a `def math` with an `isclose` attribute).

    Raises:
        SyntaxError: trusted code does not parse.
    """
    loaded: set[str] = set()
    bound: set[str] = set()
    bases: set[str] = set()
    for source in trusted:
        tree = safe_ast.parse(source)
        loaded |= _loaded_names(tree)
        bound |= _module_bindings(tree)
        bases.update(n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name))
    asked = set(functions)
    if solution and not entry_point:
        with contextlib.suppress(SyntaxError, ValueError, MemoryError, RecursionError):
            asked |= _module_bindings(safe_ast.parse(solution))
    taken_builtins = frozenset(loaded & builtin_names & asked - bound)
    names = {n for n in loaded - bound - builtin_names if not n.startswith("__")} | taken_builtins
    if entry_point:
        names.add(entry_point)
    return frozenset(names), taken_builtins, frozenset(bases - asked - bound - {entry_point})


def _loaded_names(tree: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def site_operands(site: Site, values: list[Any]) -> list[Any]:
    """The operands of one assert from the child's `site.n_slots` decoded values.

    Holes are filled from `site.literals`; template operands are computed here from their leaves.

    Raises:
        arith.TemplateRefused, ArithmeticError, TypeError, ValueError: a template could not be
            computed (the assert fails).
    """
    operands, at = [], 0
    for i in range(site.n_operands):
        if i in site.literals:
            operands.append(site.literals[i])
            at += 1
        elif i in site.templates:
            template, n = site.templates[i]
            operands.append(evaluate_template(template, values[at:at + n]))
            at += n
        else:
            operands.append(values[at])
            at += 1
    return operands


def evaluate_site(site: Site, values: list[Any]) -> bool:
    """Re-evaluate one assert from the child's decoded values (see `site_operands`)."""
    return judge_operands(site, site_operands(site, values))


def judge_operands(site: Site, operands: list[Any]) -> bool:
    """Whether the assert holds for these operand values (the comparison chain or truth value, negated if `not`)."""
    if site.kind == "truth":
        holds = bool(operands[0])
    else:
        holds = all(_OPS[getattr(ast, name)](operands[i], operands[i + 1]) for i, name in enumerate(site.ops))
    return holds != site.negate


class _Hardener(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        test, negate = node.test, False
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negate = test.operand, not negate
        helper = ast.Attribute(value=ast.Name(id="__rlvr_strict__", ctx=ast.Load()), ctx=ast.Load(),
                               attr="strict_compare" if isinstance(test, ast.Compare) else "strict_truth")
        if isinstance(test, ast.Compare):
            ops = ast.Tuple(elts=[ast.Constant(type(op).__name__) for op in test.ops], ctx=ast.Load())
            args: list[ast.expr] = [ops, ast.Tuple(elts=[test.left, *test.comparators], ctx=ast.Load())]
        else:
            args = [test]
        check: ast.expr = ast.Call(func=helper, args=args, keywords=[])
        if negate:
            check = ast.UnaryOp(op=ast.Not(), operand=check)
        return ast.copy_location(ast.Assert(test=check, msg=node.msg), node)


def harden_pytest(source: str) -> str:
    """Rewrite a pytest file's asserts to compare plain copies of their operands (`rlvr_code_child.strict_compare`).

    An operand that is not a plain built-in value (an always-equal object, a str subclass...)
    makes the assert raise, so the test fails. The helper module is imported first thing (after
    `from __future__` imports and the docstring).

    Raises:
        SyntaxError: the file does not parse.
    """
    tree = safe_ast.parse(source)
    tree = _Hardener().visit(tree)
    at = 0
    for i, stmt in enumerate(tree.body):
        is_doc = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if is_doc or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            at = i + 1
    tree.body.insert(at, ast.Import(names=[ast.alias(name=HARDENED_MODULE, asname="__rlvr_strict__")]))
    ast.fix_missing_locations(tree)
    return safe_ast.unparse(tree)
