"""One candidate bug, start to end: leak check, validation, the Harbor task, the grader's own check.

`CandidateVerifier` is how `rlvr forge` hands candidates to an engine (`rlvr.runners.engine`:
`local` worker threads or Ray actors): a row's response is a candidate (`Mutant` as JSON), its
reference a `ForgeJob` (where the project's baseline and the staging folder are; a shared file
system for Ray clusters of several machines). `score_candidate`:

1. drops a candidate whose original code the agent could reach: a copy of the changed file on the
   host paths the sandbox mounts (a vendored copy inside another program, a system package, its
   bytecode) defining the changed function, or another workspace file holding its original text;
2. validates it (`validate.validate`: FAIL_TO_PASS / PASS_TO_PASS, twice, in the budget);
3. writes the Harbor task into the staging folder (`harbor.write_task`);
4. grades it with rlvr's terminal grader, as `terminal/harbor-v1` and `swe/forge-v1` will: the
   oracle (the reverse patch) must be `correct`, a no-op `incorrect`; otherwise the task is
   dropped (`grader-disagrees`).

The verdict: `correct` for a task (its `tasks.jsonl` row in `extracted`), `incorrect` with the
drop reason in `detail`, `error` when the machinery itself failed.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.core.types import Verdict
from rlvr.environments.forge.harbor import TaskRecord, instruction_text, safe_ids, task_id, tests_path, write_task
from rlvr.environments.forge.mutators import Mutant, functions_of
from rlvr.environments.forge.project import host_file_copies
from rlvr.environments.forge.suite import SuiteRunner
from rlvr.environments.forge.validate import Baseline, Outcome, task_tests, validate
from rlvr.verifiers.base import ThreadedVerifier, VerifierConfig
from rlvr.verifiers.safe_ast import AST_LOCK

__all__ = ["CandidateVerifier", "ForgeJob"]


class ForgeJob(BaseModel):
    """What every candidate of one project shares (a row's reference)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    baseline: str = Field(description="Path of the project's baseline JSON (`validate.Baseline`).")
    staging: str = Field(description="Folder the task directories are written to before they are published.")
    budget_s: float = Field(gt=0, description="Longest one run of the kept tests may take, seconds.")
    max_tests: int = Field(default=10, ge=1, description="Most tests a task's grading runs.")
    seed: int = 0
    python_version: str = Field(description="`3.X` of the sandbox's Python (the image's).")
    pytest_version: str = Field(description="The grader's pytest version (test.sh installs it in an image).")
    check: bool = Field(default=True, description="Grade the oracle and a no-op with the terminal grader.")
    test_timeout_s: float = Field(default=600.0, gt=0, description="The task's grading budget, seconds.")
    agent_timeout_s: float = Field(default=1800.0, gt=0, description="The task's agent budget, seconds.")
    issue_writer: str | None = Field(default=None, description="OpenAI-compatible base URL of a model that rewrites "
                                     "the CI-failure report as an issue (`statement.write_issue`); None: no model.")
    issue_model: str = Field(default="default", description="The issue writer's model name.")


_LOCK = threading.Lock()


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> tuple[Baseline, SuiteRunner, dict[str, list[str]]]:
    del mtime  # part of the cache key: a rewritten baseline is read again
    baseline = Baseline.model_validate_json(Path(path).read_text(encoding="utf-8"))
    runner = SuiteRunner(baseline.project)
    return baseline, runner, host_file_copies(baseline.project, runner.site)


def _state(job: ForgeJob) -> tuple[Baseline, SuiteRunner, dict[str, list[str]]]:
    with _LOCK:
        return _load(job.baseline, os.stat(job.baseline).st_mtime)


def _function_source(source: str, path: str, qualname: str) -> tuple[int, str] | None:
    """(first line, original text) of the function `qualname` in `source`."""
    for function in functions_of(path, source):
        if function.qualname == qualname:
            with AST_LOCK:
                text = ast.get_source_segment(source, function.node) or ""
            return function.first_line, text
    return None


def _leaks(runner: SuiteRunner, copies: dict[str, list[str]], mutant: Mutant, original: str) -> str | None:
    """Where the changed function's original code is reachable by the agent (None when nowhere).

    A copy of the changed file on the host paths the sandbox mounts (`project.host_file_copies`)
    that defines the same function, or its bytecode; another workspace file holding the
    function's original text.
    """
    for copy in copies.get(mutant.path, ()):
        if copy.endswith(".pyc"):
            return f"{copy} (bytecode of {mutant.path}, readable in the sandbox)"
        try:
            text = Path(copy).read_text(encoding="utf-8", errors="replace")
            names = {f.qualname for f in functions_of(copy, text)}
        except (OSError, SyntaxError, ValueError):
            continue
        if mutant.function in names:
            return f"{copy} (a copy of {mutant.path} holding {mutant.function}, readable in the sandbox)"
    if len(original.strip()) >= 40:
        needle = original.encode("utf-8")
        for path, data in runner.workspace.items():
            if path != mutant.path and needle in data:
                return f"{path} in the workspace holds the original text of {mutant.function}"
    return None


@functools.lru_cache(maxsize=1)
def _grader() -> Any:
    from rlvr.verifiers.terminal import TerminalVerifier

    return TerminalVerifier()


def _check(root: Path) -> tuple[str | None, dict[str, float]]:
    """Why the grader disagrees with the task at `root` (None when the oracle passes and a no-op fails)."""
    grader = _grader()
    reference = {"format": "harbor", "task_dir": str(root)}
    oracle = grader.verify(grader.reference_response(reference), reference)
    noop = grader.verify("", reference)
    times = {"oracle": round(oracle.elapsed_s, 3), "noop": round(noop.elapsed_s, 3)}
    if oracle.status != "correct":
        return f"the oracle scored {oracle.status}: {oracle.detail[:300]}", times
    if noop.status != "incorrect":
        return f"a no-op scored {noop.status}: {noop.detail[:300]}", times
    return None, times


def score_candidate(response: str, reference: Any) -> Verdict:
    """Decide one candidate (module docstring): `correct` with its task record, or `incorrect` with why."""
    start = time.monotonic()
    try:
        job = ForgeJob.model_validate(reference if isinstance(reference, dict) else json.loads(reference))
        mutant = Mutant(**json.loads(response))
        baseline, runner, copies = _state(job)
    except (ValueError, TypeError, OSError) as exc:
        return Verdict.error(f"forge: unreadable candidate or job: {exc}")
    project = baseline.project
    original_source = project.read(mutant.path).decode("utf-8")
    found = _function_source(original_source, mutant.path, mutant.function)
    if found is None:
        return _dropped(Outcome.drop("run-error", f"{mutant.function} is not in {mutant.path}"), start)
    first_line, original = found
    leak = _leaks(runner, copies, mutant, original)
    if leak is not None:
        return _dropped(Outcome.drop("leaks-original", leak), start)
    outcome = validate(mutant, baseline, runner, first_line, job.budget_s)
    if outcome.status != "validated":
        return _dropped(outcome, start)
    related = safe_ids(baseline.tests_of(mutant.path, first_line))
    f2p, p2p = task_tests(outcome.model_copy(update={"fail_to_pass": tuple(safe_ids(outcome.fail_to_pass))}),
                          related, job.max_tests, job.seed)
    if not f2p:
        return _dropped(Outcome.drop("no-test-fails", "every failing test's id has characters a command line "
                                     "cannot carry safely"), start)
    name = task_id(project, mutant)
    root = Path(job.staging) / name
    instruction, note = _statement(job, project, f2p, outcome.messages)
    try:
        write_task(root, project, mutant, f2p, p2p, outcome.messages, python_version=job.python_version,
                   pytest_version=job.pytest_version, test_timeout_s=job.test_timeout_s,
                   agent_timeout_s=job.agent_timeout_s, instruction=instruction,
                   statement="issue" if instruction else "ci-report")
        times: dict[str, float] = {}
        if job.check:
            why, times = _check(root)
            if why is not None:
                shutil.rmtree(root, ignore_errors=True)
                return _dropped(Outcome.drop("grader-disagrees", why), start)
    except (OSError, RlvrError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        return Verdict.error(f"forge: writing or grading task {name} failed: {type(exc).__name__}: {exc}",
                             elapsed_s=time.monotonic() - start)
    record = TaskRecord(task_id=name, project=project.name, version=project.version, mutator=mutant.mutator,
                        file=mutant.path, function=mutant.function, line=mutant.line, note=mutant.note,
                        fail_to_pass=f2p, pass_to_pass=p2p, diff_hash=mutant.key, validate_s=outcome.seconds,
                        grade_s=times, statement="issue" if instruction else "ci-report", statement_note=note)
    return Verdict(status="correct", reward=1.0, extracted=record.model_dump_json(), detail=f"task {name}",
                   components={"fail_to_pass": float(len(f2p)), "pass_to_pass": float(len(p2p))},
                   elapsed_s=time.monotonic() - start)


def _statement(job: ForgeJob, project: Any, f2p: list[str], messages: dict[str, str]) -> tuple[str | None, str]:
    """(the issue writer's statement or None for the CI report, why it fell back)."""
    if job.issue_writer is None:
        return None, ""
    from rlvr.environments.forge.statement import write_issue

    report = instruction_text(project, f2p, messages)
    try:
        return write_issue(report, [tests_path(project, t) for t in f2p], base_url=job.issue_writer,
                           model=job.issue_model)
    except (ValueError, RlvrError) as exc:  # a bad configuration: the report stands, the reason is recorded
        return None, f"the issue writer could not be used: {exc}"


def _dropped(outcome: Outcome, start: float) -> Verdict:
    return Verdict(status="incorrect", reward=0.0, detail=outcome.reason, elapsed_s=time.monotonic() - start)


class CandidateVerifier(ThreadedVerifier):
    """`score_candidate` as a verifier, for the engines (module docstring); scores in threads.

    Args:
        max_parallel: candidates validated at once in this process (a batch's default `workers`).
    """

    name: ClassVar[str] = "forge-candidate"

    def __init__(self, max_parallel: int = 1) -> None:
        super().__init__(VerifierConfig(timeout_s=3600.0, workers=1))
        if max_parallel < 1:
            raise ConfigError(f"max_parallel must be >= 1, got {max_parallel}")
        self.max_parallel = max_parallel

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """`score_candidate` (picklable)."""
        return score_candidate

    def concurrency(self, workers: int | None = None) -> int:
        """Candidates validated at once: `workers`, else `max_parallel`."""
        return workers or self.max_parallel
