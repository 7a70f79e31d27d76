"""pytest-format tests: run pytest in a one-shot sandbox; read its JUnit report in the parent.

Design (why a candidate cannot simply claim success):

- the candidate is saved as `/work/<module>.py`; the test files live in the read-only grader
  directory (`/grader/tests`), so they cannot be edited or deleted;
- every assert in the test files is rewritten to compare plain copies of its operands
  (`rewrite.harden_pytest`), so an always-equal object or a str/int subclass fails the test;
- pytest runs with plugin autoload disabled (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`), `-p
  no:cacheprovider`, `--noconftest` and `--rootdir /grader/tests`;
- the JUnit XML goes to `/dev/fd/N`, a pipe to the parent (the grader-owned channel): nothing
  is read back from the sandbox's filesystem, and a pipe can only be appended to, so a report
  written before or after pytest's own makes the document malformed (rejected);
- the suite name must equal a nonce issued by the parent for this run, the report must be one
  well-formed document with exactly one suite, and every expected test id must be present and
  passed (skipped, xfail, errors or zero tests fail).

Limit (documented in docs/verifiers/code.md): code running inside the pytest process could, with deliberate
effort, rebuild pytest's own report; use the assert or call formats (expected values never enter
the sandbox) where reward hacking by the policy is a concern.
"""

from __future__ import annotations

import secrets
import weakref
from typing import Any

from rlvr.verifiers import junit
from rlvr.verifiers.code.config import CodeConfig
from rlvr.verifiers.code.execution import CHILD_SOURCE, Clock, SandboxFailure, TestResult, why
from rlvr.verifiers.code.rewrite import HARDENED_MODULE, harden_pytest
from rlvr.verifiers.code.spec import PytestTests

__all__: list[str] = []


def pytest_python_path(python: str | None = None) -> tuple[str, ...]:
    """Directories holding pytest and its requirements, mounted read-only into the sandbox.

    These are this environment's site directories when the sandbox uid can read them; when it
    cannot (as root, with the virtual environment under a directory closed to other users, e.g.
    a checkout in /root) a read-only copy of exactly pytest and its requirements, staged in the
    temporary directory (`rlvr.sandbox.site_packages`).

    Args:
        python: the sandbox's interpreter setting (`SandboxConfig.python`; None: the default one).

    Raises:
        SandboxError: pytest is not installed here, the sandbox Python is another major.minor
            version, or no directory the sandbox uid can read is available for the copy.
    """
    from rlvr.sandbox.isolation import sandbox_python
    from rlvr.sandbox.site_packages import sandbox_site_path

    return sandbox_site_path(("pytest",), sandbox_python(python))


_PYTEST_WORKS: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()


def _pytest_problem(box: Any) -> str | None:
    """Why pytest cannot be imported inside `box` (None when it can); probed once per sandbox.

    A test run cannot tell "pytest missing" from a failing candidate without trusting the
    candidate's output, so this is checked with a trusted program before any candidate runs.
    """
    if box not in _PYTEST_WORKS:
        result = box.run([box.python, "-c", "import pytest"], timeout_s=60.0)
        why = result.error or result.stderr.decode(errors="replace").strip()[-300:] or f"exit {result.exit_code}"
        _PYTEST_WORKS[box] = None if result.ok else f"pytest cannot be imported in the sandbox ({box.python}): {why}"
    return _PYTEST_WORKS[box]


def expected_test_ids(spec: PytestTests) -> tuple[list[str], list[str]]:
    """Exact ids and parametrized prefixes that must pass, from `expected_tests` or the sources."""
    if spec.expected_tests is not None:
        return list(spec.expected_tests), []
    return junit.expected_tests(spec.files)


def run_pytest(spec: PytestTests, code: str, config: CodeConfig, box: Any, clock: Clock) -> list[TestResult]:
    """Run the pytest files against `code`; one TestResult per expected test id.

    Raises:
        SandboxFailure: pytest cannot be imported in the sandbox, or the sandbox failed.
        ValueError: a test file name is not a plain `*.py` name.
    """
    for name in spec.files:
        if "/" in name or not name.endswith(".py"):
            raise ValueError(f"pytest test file names must be plain '*.py' names, got {name!r}")
    exact, prefixes = expected_test_ids(spec)
    budget = clock.budget(spec.timeout_s or config.test_timeout_s * max(1, len(exact) + len(prefixes)))
    names = [*exact, *(p + "[*]" for p in prefixes)]
    if budget <= 0:
        return [TestResult(n, "timeout", "overall time limit reached") for n in names]
    problem = _pytest_problem(box)
    if problem is not None:
        raise SandboxFailure(problem)
    nonce = secrets.token_hex(16)
    argv = [box.python, "-m", "pytest", "-p", "no:cacheprovider", "--noconftest", "-q", "--rootdir",
            "{grader}/tests", "-o", f"junit_suite_name={nonce}", "-o", "junit_family=xunit2",
            "--junitxml=/dev/fd/{result_fd}", *(f"{{grader}}/tests/{n}" for n in spec.files)]
    grader_files = {f"tests/{n}": harden_pytest(s) for n, s in spec.files.items()}
    grader_files[f"tests/{HARDENED_MODULE}.py"] = CHILD_SOURCE
    result = box.run(argv, files={f"{spec.module}.py": code}, timeout_s=budget, grader_files=grader_files,
                     env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    if result.error is not None:
        raise SandboxFailure(result.error)
    if result.timed_out:
        return [TestResult(n, "timeout", "timed out") for n in names]
    outcomes = junit.parse_junit(result.result, spec.files, nonce=nonce)
    if isinstance(outcomes, str):
        return [TestResult(n, "fail", f"{outcomes}; {why(result)}") for n in names]
    matched = junit.match_expected(outcomes, exact, prefixes)
    out = [TestResult(n, "pass" if v == "pass" else "fail", "" if v == "pass" else v) for n, v in matched.items()]
    if not exact and not prefixes:
        out.append(TestResult("tests", "fail", "no test functions found (zero tests is a failure)"))
    return out
