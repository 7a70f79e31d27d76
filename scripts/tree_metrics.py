"""Size and shape of the source tree: files, lines, long files and functions, `__all__` names, import circles.

    python scripts/tree_metrics.py [SRC]      (default src/rlvr; task data under environments/data excluded)

Import circles are strongly connected components of the module graph built from `import`/`from` statements at
any depth (function-level imports included, as they still tie modules together), over modules of the tree; a
package's `__init__` importing its own submodules (re-exports) is not counted as an edge.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def main(src: Path) -> None:
    """Print the figures of the tree under `src` (see the module docstring)."""
    files = sorted(p for p in src.rglob("*.py") if "environments/data" not in p.as_posix())
    lines = long_files = all_names = 0
    long_functions: dict[int, int] = {60: 0, 100: 0}
    graph: dict[str, set[str]] = {}
    modules = {_module_name(p, src): p for p in files}
    for path in files:
        text = path.read_text(encoding="utf-8")
        n = text.count("\n")
        lines += n
        long_files += n > 500
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                for limit in long_functions:
                    long_functions[limit] += length > limit
            names_all = isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                             for t in node.targets)
            if names_all and isinstance(node.value, (ast.List, ast.Tuple)):
                all_names += len(node.value.elts)
        name = _module_name(path, src)
        # an import of a package's attribute resolves to the submodule when one exists, else to the package
        graph[name] = {target for target in _imports(tree, name, path.name == "__init__.py") if target in modules}
        graph[name].discard(name)
        if path.name == "__init__.py":  # a package re-exporting its own submodules is not a circle
            graph[name] = {target for target in graph[name] if not target.startswith(name + ".")}
    circles = _circles(graph)
    print(f"files: {len(files)}")
    print(f"lines: {lines}")
    print(f"files over 500 lines: {long_files}")
    print(f"functions over 60 lines: {long_functions[60]}")
    print(f"functions over 100 lines: {long_functions[100]}")
    print(f"__all__ names: {all_names}")
    print(f"import circles: {len(circles)}")
    for circle in circles:
        print("  " + " <-> ".join(circle))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("src/rlvr"))
