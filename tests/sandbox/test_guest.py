"""Guest scripts (`rlvr.sandbox.guest`) import only the standard library and each other.

Inside a sandbox rlvr is not importable: a guest module that imported anything else would work in
the host's tests and fail in the sandbox. Each file is parsed (not imported) and every import
checked: a standard-library module (`sys.stdlib_module_names`), a sibling guest module, or the
sibling's host path (`rlvr.sandbox.guest.X`) inside a `try` that falls back on `ImportError`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from rlvr.sandbox.guest import GUEST_DIR

GUEST_FILES = sorted(p for p in GUEST_DIR.glob("*.py") if p.name != "__init__.py")
SIBLINGS = {p.stem for p in GUEST_FILES}
EXTRA = {"rlvr_session_pytest": {"pytest", "_pytest"}}
"""Non-standard imports a guest may make: the grader's pytest, from the grader's own site."""


def _imports(tree: ast.AST) -> list[tuple[str, bool]]:
    """(imported module, inside a `try` that handles ImportError) for every absolute import of `tree`."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers):
            guarded.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in guarded) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a guest runs as a top-level module: no relative imports"
            found.append((node.module or "", id(node) in guarded))
    return found


def test_the_guest_folder_holds_the_scripts_the_host_copies() -> None:
    from rlvr.sandbox.guest import SUPERVISOR
    from rlvr.sandbox.session import SUPERVISOR_FILES
    from rlvr.verifiers.code.execution import CHILD_SOURCE

    copied = {SUPERVISOR, *SUPERVISOR_FILES}
    assert all(p.parent == GUEST_DIR and p.is_file() for p in copied)
    assert (GUEST_DIR / "rlvr_code_child.py").read_text(encoding="utf-8") == CHILD_SOURCE
    assert {p.stem for p in copied} | {"rlvr_code_child"} == SIBLINGS


@pytest.mark.parametrize("path", GUEST_FILES, ids=lambda p: p.name)
def test_a_guest_imports_only_the_standard_library_and_its_siblings(path: Path) -> None:
    bad = []
    for module, guarded in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        top = module.split(".")[0]
        host_path = module.startswith("rlvr.sandbox.guest") and (
            module == "rlvr.sandbox.guest" or module.split(".")[3] in SIBLINGS)
        if top in sys.stdlib_module_names or top in SIBLINGS or top in EXTRA.get(path.stem, set()):
            continue
        if host_path and guarded:
            continue
        bad.append(module)
    assert not bad, f"{path.name} imports {bad}: a guest may import only the standard library and its siblings"
