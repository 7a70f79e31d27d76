"""Thread-safe `ast` helpers for the trusted parent.

CPython 3.11 keeps the recursion depth of its C<->Python AST conversion in interpreter-wide
state (`struct ast_state`, Python/Python-ast.c), so `ast.parse`/`ast.unparse`/`literal_eval` run
from several threads at once can fail with `SystemError: AST constructor recursion depth
mismatch` (CPython gh-106905, fixed in later releases). `UnitTestVerifier` scores in
threads, so every AST call of the code verifier goes through one process-wide lock.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

__all__ = ["AST_LOCK"]

AST_LOCK = threading.RLock()


def parse(source: str) -> ast.Module:
    """`ast.parse` under `AST_LOCK` (raises SyntaxError like `ast.parse`)."""
    with AST_LOCK:
        return ast.parse(source)


def parse_expression(source: str) -> ast.expr:
    """The expression node of `ast.parse(source, mode="eval")`, under `AST_LOCK`."""
    with AST_LOCK:
        return ast.parse(source, mode="eval").body


def unparse(node: ast.AST) -> str:
    """`ast.unparse` under `AST_LOCK`."""
    with AST_LOCK:
        return ast.unparse(node)


def literal_eval(node_or_string: ast.AST | str) -> Any:
    """`ast.literal_eval` under `AST_LOCK` (raises ValueError/SyntaxError like `ast.literal_eval`)."""
    with AST_LOCK:
        return ast.literal_eval(node_or_string)
