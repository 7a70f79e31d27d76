"""Forge's test-suite runner, run inside a sandbox (standard library plus the grader's pytest).

`rlvr.environments.forge.suite` copies this file into a sandbox and runs it with the sandbox's
Python as `python3 -s guest_suite.py JOB.json` (the hash seed set by `PYTHONHASHSEED`, so a run can
be repeated with another seed). The job names the pytest arguments, the import
path (the project's import root first after the standard library, then the grader's site, then
the system's packages: the same order the grader uses) and whether to record coverage. The
result goes to the sandbox's result channel (fd `$RLVR_RESULT_FD`) as one JSON object:

- `tests`: pytest node id -> `pass` | `fail` | `skip` (setup, call and teardown together: a
  failure or error in any phase fails the test; skipped, xfailed and xpassed are `skip`);
- `messages`: node id -> the first line of the failure (the exception and its message);
- `collected`: every collected node id, in order (all a `--collect-only` run reports);
- `collect_errors`: collected path -> the first line of why it could not be collected;
- `functions`, `coverage`: with coverage on, the functions of the project that ran (`[path,
  first line]`, path relative to the project root) and, per node id, the indexes of those its
  setup, call and teardown ran (`sys.settrace` call events only: no line tracing);
- `exit_code`, `elapsed_s`.

On the host this is an ordinary module (imported only for type checking and tests).
"""

from __future__ import annotations

import json
import os
import site
import sys
import threading
import time
from typing import Any

RANK = {"pass": 0, "skip": 1, "fail": 2}


def _first_line(report: Any) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None) or str(getattr(report, "longrepr", "") or "")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if crash is not None or not lines else lines[-1])[:400]


class Recorder:
    """A pytest plugin recording each test's outcome and, optionally, the project functions it ran."""

    def __init__(self, trace_root: str | None) -> None:
        self.trace_root = trace_root
        self.tests: dict[str, str] = {}
        self.messages: dict[str, str] = {}
        self.collect_errors: dict[str, str] = {}
        self.collected: list[str] = []
        self.functions: dict[tuple[str, int], int] = {}
        self.coverage: dict[str, list[int]] = {}
        self._current: set[int] = set()

    def _trace(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            name = code.co_filename
            if self.trace_root is not None and name.startswith(self.trace_root):
                key = (name[len(self.trace_root):], code.co_firstlineno)
                index = self.functions.setdefault(key, len(self.functions))
                self._current.add(index)

    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        """Trace the project functions one test's setup, call and teardown run (coverage on)."""
        if self.trace_root is None:
            return None
        from _pytest.runner import runtestprotocol

        hook = item.ihook
        self._current = set()
        sys.settrace(self._trace)
        threading.settrace(self._trace)
        try:
            hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
            runtestprotocol(item, nextitem=nextitem, log=True)
            hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        finally:
            sys.settrace(None)
            threading.settrace(None)
        self.coverage[item.nodeid] = sorted(self._current)
        return True

    def pytest_runtest_logreport(self, report: Any) -> None:
        """Fold the phases' reports into one outcome per test."""
        if report.when == "call":
            outcome = "pass" if report.passed and not hasattr(report, "wasxfail") else (
                "skip" if report.skipped or report.passed else "fail")
        elif report.failed:
            outcome = "fail"
        elif report.skipped:
            outcome = "skip"
        else:
            return
        old = self.tests.get(report.nodeid, "pass")
        self.tests[report.nodeid] = outcome if RANK[outcome] >= RANK[old] else old
        if outcome == "fail" and report.nodeid not in self.messages:
            self.messages[report.nodeid] = _first_line(report)

    def pytest_collection_finish(self, session: Any) -> None:
        """Remember every collected node id, in order."""
        self.collected = [item.nodeid for item in session.items]

    def pytest_collectreport(self, report: Any) -> None:
        """Remember the files that could not be collected (an import error, a syntax error)."""
        if report.failed:
            self.collect_errors[report.nodeid or "<session>"] = _first_line(report)


def main() -> int:
    """Run the job named on the command line; the result on `$RLVR_RESULT_FD`."""
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    sys.dont_write_bytecode = True
    system = set(site.getsitepackages()) | {p for p in sys.path if p.endswith(("/site-packages", "/dist-packages"))}
    ours = {os.path.dirname(os.path.abspath(__file__)), *os.environ.get("PYTHONPATH", "").split(os.pathsep)}
    stdlib = [p for p in sys.path if p and p not in system and p not in ours]
    sys.path[:] = stdlib + list(job["path"]) + list(job["site"]) + [p for p in sys.path if p in system]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.chdir(job["cwd"])
    start = time.monotonic()
    recorder = Recorder(job.get("trace_root"))
    try:
        import pytest

        code = int(pytest.main(list(job["args"]), plugins=[recorder]))
    except BaseException as exc:  # the runner reports; the host decides
        code = -1
        recorder.collect_errors["<session>"] = f"{type(exc).__name__}: {exc}"[:400]
    functions = sorted(recorder.functions, key=recorder.functions.__getitem__)
    result = {"tests": recorder.tests, "collected": recorder.collected, "messages": recorder.messages,
              "collect_errors": recorder.collect_errors,
              "functions": [list(f) for f in functions], "coverage": recorder.coverage, "exit_code": code,
              "elapsed_s": round(time.monotonic() - start, 3)}
    data = json.dumps(result).encode()
    fd = int(os.environ["RLVR_RESULT_FD"])
    while data:
        data = data[os.write(fd, data):]
    return 0


if __name__ == "__main__":
    sys.exit(main())
