"""Code extraction: the program inside a response (markdown fences or raw text)."""

from __future__ import annotations

import ast
import re

from rlvr.verifiers import safe_ast

__all__: list[str] = []

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
_PY = {"python", "py", "python3", "py3", ""}


def extract_code(response: str, language: str = "python") -> str | None:
    """The code of a response: the last fenced block in `language` (or untagged), else the raw text.

    Fences are ``` or ~~~ (CommonMark); the info string's first word is the language. Several
    blocks: the last one tagged `language` wins, then the last untagged one (models usually end
    with the final version). A response without fences is taken as code when it parses and
    does something (Python: a statement or a call; "sorry" or "42" is not a program), or
    is non-empty (other languages). An unclosed fence takes the rest of the text.

    Returns:
        The code, or None when there is none (empty response, or prose that does not parse).
    """
    blocks = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(response)]
    wanted = _PY if language == "python" else {language.lower()}
    for tags in (wanted - {""}, {""}):
        chosen = [code for tag, code in blocks if tag in tags]
        if chosen:
            return chosen[-1]
    if blocks:
        return None
    opened = re.search(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n", response, re.M)
    if opened and opened.group(2).lower() in wanted:
        return response[opened.end():]
    text = response.strip("\n")
    if not text.strip():
        return None
    if language != "python":
        return text
    try:
        tree = safe_ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if all(isinstance(stmt, ast.Expr) for stmt in tree.body) and \
            not any(isinstance(node, ast.Call) for node in ast.walk(tree)):
        return None  # bare names or values only ("sorry", "42"): prose or an answer, not a program
    return text
