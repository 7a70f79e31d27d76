"""Reading pytest's JUnit XML reports and the test functions a suite is expected to run.

Shared by the unit-test verifier (`rlvr.verifiers.code`, pytest format) and the terminal
verifier. A report is accepted only as one well-formed document; every test case maps back to a
test id `path::[Class::]name[params]` (pytest's node id, relative to the suite's root), so the
caller can check that *every* expected test ran and passed: a test that is missing, skipped or
xfailed is not a pass, and zero tests is a failure.
"""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping

__all__: list[str] = []

MAX_REPORT_BYTES = 8 << 20
"""Largest JUnit report parsed, bytes; a bigger one is refused (no legitimate suite writes that much)."""


def test_functions(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """(function, owning class or '') of the tests pytest collects by default from a module.

    pytest's default rules (`python_functions = test*`, `python_classes = Test*`): module-level
    functions named `test*`, and `test*` methods of classes named `Test*`.
    """
    found: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.append((node, ""))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found += [(m, node.name) for m in node.body
                      if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
    return found


def expected_tests(files: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Exact test ids and parametrized id prefixes found in the test sources.

    Args:
        files: relative path (e.g. `test_outputs.py`, `sub/test_x.py`) -> Python source.

    Returns:
        (exact ids, prefixes): a parametrized test `f` gives the prefix `path::f`, whose cases
        are reported as `path::f[...]`.

    Raises:
        SyntaxError: a test file does not parse.
    """
    from rlvr.verifiers.safe_ast import AST_LOCK  # CPython 3.11's AST state is interpreter-wide

    exact: list[str] = []
    prefixes: list[str] = []
    with AST_LOCK:
        for name, source in files.items():
            for node, owner in test_functions(ast.parse(source, filename=name)):
                node_id = f"{name}::{owner + '::' if owner else ''}{node.name}"
                parametrized = any("parametrize" in ast.unparse(d) for d in node.decorator_list)
                (prefixes if parametrized else exact).append(node_id)
    return exact, prefixes


def _module_map(files: Iterable[str]) -> dict[str, str]:
    """Dotted module name as JUnit's classname writes it -> relative file path."""
    out = {}
    for name in files:
        stem = name[:-3] if name.endswith(".py") else name
        out[stem.replace("/", ".")] = name
    return out


def _case_id(case: ET.Element, modules: dict[str, str]) -> str:
    classname = case.get("classname", "")
    if not classname:  # a collection error: `name` is the module that failed to import (`tests.test_x`)
        name = case.get("name", "")
        return modules.get(name) or next((f for m, f in modules.items() if name.endswith("." + m)), name)
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that names a known test file
        module = ".".join(parts[:cut])
        if module in modules:
            owner = "::".join(parts[cut:])
            return f"{modules[module]}::{owner + '::' if owner else ''}{case.get('name', '')}"
    module, owner = parts[0], "::".join(parts[1:])
    return f"{module}.py::{owner + '::' if owner else ''}{case.get('name', '')}"


def parse_junit(data: bytes, files: Iterable[str], nonce: str | None = None) -> dict[str, str] | str:
    """Test id -> 'pass' / 'fail' / 'skipped' from a JUnit report, or why the report is not acceptable.

    Args:
        data: the report bytes.
        files: the test files' relative paths (to map JUnit class names back to test ids).
        nonce: when given, the report must hold exactly one test suite named `nonce`.

    Returns:
        The outcomes, or a reason string: empty, too large, not one well-formed document, no nonce.
        A test id reported twice counts as 'fail' (a duplicated id is suspicious).
    """
    if not data.strip():
        return "pytest wrote no JUnit report"
    if len(data) > MAX_REPORT_BYTES:
        return f"the JUnit report is larger than {MAX_REPORT_BYTES} bytes"
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return f"the JUnit report is not one well-formed document ({exc})"
    suites = [root] if root.tag == "testsuite" else list(root)
    if any(s.tag != "testsuite" for s in suites):
        return "the JUnit report holds something other than test suites"
    if nonce is not None and (len(suites) != 1 or suites[0].get("name") != nonce):
        return "the JUnit report does not carry this run's nonce"
    modules = _module_map(files)
    outcomes: dict[str, str] = {}
    for suite in suites:
        for case in suite.iter("testcase"):
            kinds = {child.tag for child in case}
            status = "skipped" if "skipped" in kinds else ("fail" if kinds & {"failure", "error"} else "pass")
            key = _case_id(case, modules)
            outcomes[key] = status if key not in outcomes else "fail"
    return outcomes


def failure_messages(data: bytes, files: Iterable[str], limit: int = 300) -> dict[str, str]:
    """Test id -> the first `limit` characters of its failure or error message, from a JUnit report."""
    try:
        root = ET.fromstring(data) if data.strip() and len(data) <= MAX_REPORT_BYTES else None
    except ET.ParseError:
        root = None
    if root is None:
        return {}
    modules = _module_map(files)
    out = {}
    for case in root.iter("testcase"):
        for child in case:
            if child.tag in ("failure", "error"):
                text = (child.get("message") or child.text or "").strip().replace("\n", " ")
                out[_case_id(case, modules)] = text[:limit]
                break
    return out


def match_expected(outcomes: Mapping[str, str], exact: Iterable[str], prefixes: Iterable[str]) -> dict[str, str]:
    """Outcome of every expected test.

    Exact ids as reported ('not run' when absent); each prefix 'pass' only when at least one of
    its cases ran and all passed.
    """
    out = {name: outcomes.get(name, "not run") for name in exact}
    for prefix in prefixes:
        cases = [v for k, v in outcomes.items() if k.startswith(prefix + "[")]
        out[prefix + "[*]"] = "pass" if cases and all(v == "pass" for v in cases) else (
            f"{sum(v == 'pass' for v in cases)} of {len(cases)} cases passed" if cases else "not run")
    return out
