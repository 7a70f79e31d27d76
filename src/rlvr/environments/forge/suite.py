"""A project's test suite run in the sandbox, fast: forge's baseline and candidate runs.

Each run is a fresh bubblewrap sandbox (`rlvr.sandbox.local.LocalSandbox`: no network, read-only
host, size-capped tmpfs, rlimits, a parent watchdog) holding the workspace at `/work/app` and the
tests at `/work/tests`, laid out as the grader lays them out (`/app`, `/tests`): pytest runs from
the workspace with `--rootdir` and `--confcutdir` at the tests' folder, the project's import root
first on the path after the standard library, the grader's pytest, plugin autoload off. The
runner in the sandbox is `guest_suite.py` (one pytest process for the whole run, with an optional
call tracer for coverage); what it reports is evidence the host decides on (`SuiteRun`).

This is the fast path for proposing and screening bugs. The grader (`rlvr.verifiers.terminal`,
one forked child per test) decides in the end: forge grades every task it writes with it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.environments.forge.project import Project
from rlvr.sandbox.config import SandboxConfig

__all__ = ["SuiteRunner"]

GUEST = Path(__file__).with_name("guest_suite.py")
"""The in-sandbox runner (standard library plus the grader's pytest)."""
WORK = "/work"
APP, TESTS = f"{WORK}/app", f"{WORK}/tests"


class SuiteRun(BaseModel):
    """What one run of (part of) the suite reported (see `guest_suite` for the fields' rules)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tests: dict[str, str] = Field(default_factory=dict, description="Node id -> 'pass' | 'fail' | 'skip'.")
    collected: list[str] = Field(default_factory=list, description="Every collected node id, in order.")
    messages: dict[str, str] = Field(default_factory=dict, description="Node id -> first line of its failure.")
    collect_errors: dict[str, str] = Field(default_factory=dict, description="Path -> why it was not collected.")
    functions: list[tuple[str, int]] = Field(default_factory=list, description="Project functions that ran: "
                                             "(path relative to the project root, first line).")
    coverage: dict[str, list[int]] = Field(default_factory=dict, description="Node id -> indexes into functions.")
    exit_code: int | None = None
    elapsed_s: float = 0.0
    timed_out: bool = False
    error: str | None = Field(default=None, description="Why the run produced no result (the sandbox or runner).")

    @property
    def ok(self) -> bool:
        """True when the run finished and reported."""
        return self.error is None and not self.timed_out

    def covering(self) -> dict[tuple[str, int], set[str]]:
        """(path, first line) of each function that ran -> the node ids that ran it."""
        out: dict[tuple[str, int], set[str]] = {}
        for test_id, indexes in self.coverage.items():
            for i in indexes:
                out.setdefault(tuple(self.functions[i]), set()).add(test_id)  # type: ignore[arg-type]
        return out


class SuiteRunner:
    """Runs `project`'s tests in fresh sandboxes (module docstring).

    Args:
        project: the project (its files are read once).
        python: the sandbox's interpreter (None: `rlvr.sandbox.isolation.sandbox_python`).
        memory_mb: RLIMIT_AS of the run, MiB.
        work_mb: size of the sandbox's work folder, MiB (the workspace and tests must fit).

    Raises:
        SandboxError: no usable sandbox, or the grader's pytest cannot be staged for it.
    """

    def __init__(self, project: Project, *, python: str | None = None, memory_mb: int = 2048,
                 work_mb: int = 512) -> None:
        from rlvr.sandbox.isolation import sandbox_python
        from rlvr.sandbox.local import LocalSandbox
        from rlvr.sandbox.site_packages import sandbox_site_path

        self.project = project
        self.python = sandbox_python(python)
        self.site = sandbox_site_path(("pytest",), self.python)
        self.box = LocalSandbox(SandboxConfig(python=self.python, python_path=self.site, pool_size=0,
                                              memory_mb=memory_mb, work_mb=work_mb, tmpfs_mb=256, processes=256,
                                              open_files=1024, max_output_bytes=32 << 20, preload=()))
        self.workspace = {path: project.read(path) for path in project.workspace_files}
        self.tests = {project.tests_name(p): project.read(p) for p in (*project.test_files, *project.test_support)}
        self.test_files = [project.tests_name(p) for p in project.test_files]
        self.import_path = f"{APP}/{project.import_root}" if project.import_root else APP

    def run(self, *, replace: Mapping[str, str] | None = None, select: Sequence[str] | None = None,
            coverage: bool = False, timeout_s: float = 600.0, hash_seed: int = 0,
            collect_only: bool = False) -> SuiteRun:
        """Run the tests once in a fresh sandbox.

        Args:
            replace: workspace files to run with new contents (path relative to the project root -> text).
            select: node ids to run (relative to the tests' folder); None: every test file.
            coverage: record the project functions each test ran.
            timeout_s: wall-clock limit of the whole run, seconds.
            hash_seed: `PYTHONHASHSEED` of the run (test ids or outcomes that depend on set or dict order
                differ between two seeds).
            collect_only: only collect the tests (`collected` holds their ids).

        Returns:
            The run's report; `timed_out` or `error` when it did not finish.
        """
        files: dict[str, str | bytes] = {f"app/{p}": data for p, data in self.workspace.items()}
        for path, text in (replace or {}).items():
            files[f"app/{path}"] = text
        files.update({f"tests/{name}": data for name, data in self.tests.items()})
        targets = [f"{TESTS}/{t}" for t in (select if select is not None else self.test_files)]
        args = [*targets, "-p", "no:cacheprovider", "--rootdir", TESTS, "--confcutdir", TESTS, "-q", "--tb=short",
                "--no-header", "--continue-on-collection-errors", "-o", "addopts=", *(["--collect-only"]
                                                                                      if collect_only else [])]
        files["job.json"] = json.dumps({"args": args, "path": [self.import_path], "site": list(self.site),
                                        "cwd": APP, "trace_root": f"{APP}/" if coverage else None})
        result = self.box.run([self.python, "-s", "{grader}/guest_suite.py", "{work}/job.json"], files=files,
                              grader_files={"guest_suite.py": _guest_source()}, timeout_s=timeout_s,
                              env={"PYTHONHASHSEED": str(hash_seed)})
        if result.error:
            return SuiteRun(error=f"the sandbox failed: {result.error}")
        if result.timed_out:
            return SuiteRun(timed_out=True, elapsed_s=result.elapsed_s)
        try:
            data: dict[str, Any] = json.loads(result.result)
        except ValueError:
            tail = (result.stderr or result.stdout).decode(errors="replace").strip()[-600:]
            return SuiteRun(error=f"the test run ended without a report (exit {result.exit_code}): {tail}",
                            elapsed_s=result.elapsed_s)
        return SuiteRun.model_validate({**data, "functions": [tuple(f) for f in data.get("functions", [])]})


@functools.cache
def _guest_source() -> str:
    return GUEST.read_text(encoding="utf-8")
