"""`rlvr forge`: repository bug-fix tasks with hidden tests, from real Python projects (the library entry point).

For each project (`--source PATH` or `--package NAME==VERSION`, several allowed):

1. read and set it up (`rlvr.environments.forge.project`), refuse it with the reason when it
   cannot be used (no tests, compiled code, an installed copy visible to the sandbox, a Python the
   sandbox lacks ...), then run its suite twice and keep what passes deterministically
   (`validate.make_baseline`, saved as `OUT/.forge/PROJECT/baseline.json`);
2. propose bugs (`mutators.candidates`, seeded, in the functions the kept tests run), drop
   duplicates (the same syntax tree), and
3. validate them on an engine (`rlvr.runners.engine`: `local` threads, or Ray actors across a
   cluster: `candidate.CandidateVerifier`) until `n` tasks are made or the candidates run out;
4. publish each task as a Harbor task directory `OUT/TASK_ID/` and a row of `OUT/tasks.jsonl`.

Resumable: every decided candidate is one row of `OUT/.forge/PROJECT/candidates.jsonl` (appended
and flushed at once; a rerun with the same options skips them, so an interrupted run loses nothing
and a larger `n` adds only new tasks); `tasks.jsonl` is keyed by task id. A bad project prints
the reason and the run goes on with the next one; what was written stays.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import ConfigError, DataError
from rlvr.environments.forge.project import Project, ProjectError

__all__ = ["forge"]

_LOG = logging.getLogger(__name__)
SANDBOX_VISIBLE = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
"""Host folders every sandbox mounts read-only: the output (which holds the original sources) must not be there."""


class ProjectReport(BaseModel):
    """What forge did with one project."""

    model_config = ConfigDict(extra="forbid")

    project: str = Field(description="`name==version`, or the source as given when it could not be read.")
    error: str = Field(default="", description="Why the project was refused ('' when it was used).")
    kept_tests: int = 0
    dropped_tests: int = 0
    baseline_s: float = Field(default=0.0, description="One plain run of the kept suite, seconds.")
    tried: int = Field(default=0, description="Candidates validated in this run (resumed ones not counted).")
    validated: int = Field(default=0, description="Tasks made in this run.")
    resumed: int = Field(default=0, description="Candidates already decided by an earlier run.")
    duplicates: int = Field(default=0, description="Candidates dropped for repeating a bug already proposed.")
    dropped: dict[str, int] = Field(default_factory=dict, description="Dropped candidates by reason.")
    per_mutator: dict[str, dict[str, int]] = Field(default_factory=dict, description="Mutator -> {'tried', "
                                                   "'validated'}.")
    tasks_total: int = Field(default=0, description="Tasks of this project in the output (this run and earlier).")
    wall_s: float = 0.0


class ForgeReport(BaseModel):
    """The outcome of one `forge` call."""

    model_config = ConfigDict(extra="forbid")

    out: str
    projects: list[ProjectReport]

    @property
    def validated(self) -> int:
        """Tasks made in this run, every project together."""
        return sum(p.validated for p in self.projects)


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "project"


def _check_out(out: Path) -> None:
    resolved = out.resolve()
    for top in SANDBOX_VISIBLE:
        if resolved == Path(top) or Path(top) in resolved.parents:
            raise ConfigError(f"-o {out}: the output lies under {top}, which every sandbox can read; the original "
                              "sources forge keeps there would be reachable by the agent. Write it elsewhere")


def _sandbox_versions() -> tuple[str, str, str, tuple[str, ...]]:
    """(sandbox python, its `3.X`, the grader's pytest version, the grader's site)."""
    import subprocess
    from importlib import metadata

    from rlvr.sandbox.isolation import sandbox_python
    from rlvr.sandbox.site_packages import sandbox_site_path

    python = sandbox_python(None)
    reply = subprocess.run([python, "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, timeout=60)
    return python, reply.stdout.strip(), metadata.version("pytest"), sandbox_site_path(("pytest",), python)


def _check_python(project: Project, version: str) -> None:
    if not project.requires_python:
        return
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        ok = SpecifierSet(project.requires_python).contains(f"{version}.0", prereleases=True)
    except InvalidSpecifier:
        return
    if not ok:
        raise ProjectError(project.label, f"it needs Python {project.requires_python}; the sandbox's Python is "
                           f"{version}")


def _baseline(project: Project, state: Path, budget_s: float, overwrite: bool) -> Any:
    from rlvr.environments.forge.suite import SuiteRunner
    from rlvr.environments.forge.validate import Baseline, make_baseline

    path = state / "baseline.json"
    if path.is_file() and not overwrite:
        try:
            old = Baseline.model_validate_json(path.read_text(encoding="utf-8"))
            if old.project == project:
                return old
        except ValueError:
            pass
    baseline = make_baseline(SuiteRunner(project), budget_s)
    from rlvr.core.files import atomic_write

    atomic_write(path, baseline.model_dump_json(indent=1))
    return baseline


def _mutants(baseline: Any, families: list[str], seed: int) -> Iterator[Any]:
    """Every candidate of the project's covered functions (`mutators.project_candidates`: files in turn, seeded)."""
    from rlvr.environments.forge.mutators import functions_of, project_candidates

    project: Project = baseline.project
    files = []
    for path in project.source_files():
        try:
            source = project.read(path).decode("utf-8")
            functions = [f for f in functions_of(path, source) if baseline.tests_of(path, f.first_line)]
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        if functions:
            files.append((path, source, functions))
    return project_candidates(files, families, seed)


def _key_of(field: str, what: str) -> Callable[[int, bytes], str | None]:
    """A `ResumableOutput.resume` reader of the row's `field`.

    Rows without it, or whose machinery broke (`status` 'error': a sandbox that did not start, say), run again.
    """

    def read(_lineno: int, raw: bytes) -> str | None:
        try:
            row = json.loads(raw)
        except ValueError as exc:
            raise DataError(f"not a forge {what} row: {exc}") from exc
        if not isinstance(row, dict) or row.get("status") == "error":
            return None
        return row.get(field)

    return read


class _Run:
    """The state of one project's run: its logs, counters, the engine's input stream."""

    def __init__(self, report: ProjectReport, log: Any, index: Any, out: Path, staging: Path,
                 on_candidate: Callable[[dict[str, Any]], None] | None) -> None:
        self.report, self.log, self.index, self.out, self.staging = report, log, index, out, staging
        self.on_candidate = on_candidate
        self.tried: Counter[str] = Counter()
        self.made: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self.pending: dict[str, Any] = {}

    def feed(self, mutants: Iterator[Any], done: set[str], job: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        seen: set[str] = set()
        for mutant in mutants:
            if mutant.key in done:
                self.report.resumed += 1
                continue
            if mutant.key in seen:
                self.report.duplicates += 1
                continue
            seen.add(mutant.key)
            self.pending[mutant.key] = mutant
            yield json.dumps(mutant.__dict__), job

    def record(self, mutant: Any, verdict: Any) -> None:
        from rlvr.environments.forge.harbor import TaskRecord

        self.tried[mutant.mutator] += 1
        row: dict[str, Any] = {"key": mutant.key, "mutator": mutant.mutator, "file": mutant.path,
                               "function": mutant.function, "line": mutant.line, "status": verdict.status,
                               "reason": verdict.detail if verdict.status != "correct" else "",
                               "seconds": round(verdict.elapsed_s, 3)}
        if verdict.status == "correct" and verdict.extracted:
            record = TaskRecord.model_validate_json(verdict.extracted)
            target = self.out / record.task_id
            if target.exists():
                shutil.rmtree(target)
            (self.staging / record.task_id).replace(target)
            self.index.write(record.model_dump_json() + "\n")
            row["task_id"] = record.task_id
            self.made[mutant.mutator] += 1
        elif verdict.status == "error":
            self.dropped["run-error"] += 1
        else:
            self.dropped[verdict.detail.split(":", 1)[0]] += 1
        self.log.write(json.dumps(row) + "\n")
        if self.on_candidate:
            self.on_candidate(row)


def _forge_one(project: Project, out: Path, n: int, families: list[str], seed: int, engine_name: str,
               workers: int, ray_address: str | None, budget_s: float, max_tests: int, check: bool,
               overwrite: bool, versions: tuple[str, str, str, tuple[str, ...]], index: Any,
               on_candidate: Callable[[dict[str, Any]], None] | None, statement: dict[str, Any]) -> ProjectReport:
    from rlvr.environments.forge.candidate import CandidateVerifier, ForgeJob
    from rlvr.environments.forge.project import host_copies, host_file_copies
    from rlvr.runners.engine import make_engine
    from rlvr.runners.resumable import ResumableOutput

    start = time.monotonic()
    python, version, pytest_version, site = versions
    report = ProjectReport(project=project.label)
    _check_python(project, version)
    installed = host_copies(project, python, site)
    if installed:
        raise ProjectError(project.label, f"an installed copy is visible to the sandbox ({installed[0]}): the "
                           "original source would be reachable by the agent and could shadow the workspace; "
                           "uninstall it or use another project")
    copies = host_file_copies(project, site)
    if copies and set(copies) >= set(project.source_files()):
        path, where = next(iter(copies.items()))
        raise ProjectError(project.label, f"its source is readable in the sandbox (e.g. {path} at {where[0]}): the "
                           "original would be reachable by the agent; use a project this machine does not vendor")
    state = out / ".forge" / _slug(project.label)
    state.mkdir(parents=True, exist_ok=True)
    baseline = _baseline(project, state, budget_s, overwrite)
    report.kept_tests, report.dropped_tests, report.baseline_s = len(baseline.kept), len(baseline.dropped), \
        baseline.seconds
    log = ResumableOutput[str](state / "candidates.jsonl", {
        "project": project.label, "seed": seed, "mutators": families, "max_tests": max_tests, "check": check,
        "issue_writer": statement["issue_writer"], "issue_model": statement["issue_model"]})
    log.prepare(overwrite)
    done = log.resume(_key_of("key", "candidate"), duplicates="drop")
    log.check_and_record()
    made_before = _made(state / "candidates.jsonl")
    staging = out / ".forge" / "staging"
    shutil.rmtree(staging, ignore_errors=True)  # what an interrupted run left half-written
    staging.mkdir(parents=True, exist_ok=True)
    job = ForgeJob(baseline=str(state / "baseline.json"), staging=str(staging),
                   budget_s=max(60.0, 5 * baseline.seconds + 30.0), max_tests=max_tests, seed=seed,
                   python_version=version, pytest_version=pytest_version, check=check, **statement).model_dump()
    wanted = n - made_before
    with log.append() as writer:
        run = _Run(report, writer, index, out, staging, on_candidate)
        if wanted > 0:
            verifier = CandidateVerifier(max_parallel=workers)
            with make_engine(engine_name, verifier, workers, ray_address) as engine:
                pairs = run.feed(_mutants(baseline, families, seed), done, job)
                verdicts = engine.verify_pairs(pairs, batch_size=max(1, workers))
                for mutant_key, verdict in _keyed(run, verdicts):
                    run.record(run.pending.pop(mutant_key), verdict)
                    if sum(run.made.values()) >= wanted:
                        break
    report.tried = sum(run.tried.values())
    report.validated = sum(run.made.values())
    report.dropped = dict(run.dropped)
    report.per_mutator = {m: {"tried": run.tried[m], "validated": run.made[m]} for m in families if run.tried[m]}
    report.tasks_total = made_before + report.validated
    report.wall_s = round(time.monotonic() - start, 3)
    return report


def _keyed(run: _Run, verdicts: Iterator[Any]) -> Iterator[tuple[str, Any]]:
    """Pair each verdict with its candidate's key (verdicts come in input order)."""
    for verdict in verdicts:
        yield next(iter(run.pending)), verdict


def _made(path: Path) -> int:
    if not path.is_file():
        return 0
    count = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            count += bool(json.loads(line).get("task_id"))
        except (ValueError, AttributeError):
            continue
    return count


def forge(sources: Sequence[str] = (), packages: Sequence[str] = (), *, out: str | Path, n: int = 10,
          mutators: Sequence[str] | str | None = None, seed: int = 0, engine: str = "local", workers: int = 1,
          ray_address: str | None = None, budget_s: float = 300.0, max_tests: int = 10, check: bool = True,
          issue_writer: str | None = None, issue_model: str = "default", overwrite: bool = False,
          on_project: Callable[[ProjectReport], None] | None = None,
          on_candidate: Callable[[dict[str, Any]], None] | None = None) -> ForgeReport:
    """Make up to `n` validated repair tasks per project into `out` (module docstring).

    Args:
        sources: source folders or sdist files.
        packages: `NAME==VERSION` requirements, fetched from the package index.
        out: the tasks folder (Harbor task directories, `tasks.jsonl`, `.forge/` state).
        n: tasks wanted per project (counting those an earlier run made).
        mutators: bug families (`rlvr.environments.forge.mutators.MUTATORS`; None: all).
        seed: the candidates' order and the test samples.
        engine: `local` (threads on this machine) or `ray`.
        workers: candidates validated at once (threads, or Ray actors).
        ray_address: with `engine="ray"`: `auto`, `HOST:PORT`, or None.
        budget_s: the longest one run of a project's suite may take, seconds (slower projects are refused).
        max_tests: most tests a task's grading runs (all FAIL_TO_PASS, then related PASS_TO_PASS).
        check: grade each task's oracle and a no-op with the terminal grader before publishing it.
        issue_writer: base URL of an OpenAI-compatible model that rewrites each CI-failure report as an issue
            (`rlvr.environments.forge.statement`; failures fall back to the report). None: no model.
        issue_model: the issue writer's model name.
        overwrite: start each project over (its candidate log and baseline).
        on_project: called with each project's report as it finishes (refused ones too).
        on_candidate: called with each decided candidate's log row (`task_id` set when it made a task).

    Returns:
        A `ForgeReport`, one `ProjectReport` per project (refused projects carry `error`).

    Raises:
        ConfigError: no project, bad options, or an output the sandbox can read.
    """
    from rlvr.environments.forge.mutators import resolve_mutators
    from rlvr.environments.forge.project import open_project
    from rlvr.runners.resumable import ResumableOutput

    if not sources and not packages:
        raise ConfigError("give at least one --source PATH or --package NAME==VERSION")
    if n < 1 or workers < 1 or max_tests < 1 or budget_s <= 0:
        raise ConfigError("n, workers and max_tests must be >= 1 and budget_s > 0")
    families = resolve_mutators(mutators)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    _check_out(root)
    versions = _sandbox_versions()
    index = ResumableOutput[str](root / "tasks.jsonl", {"format": "rlvr-forge-tasks-v1"})
    index.prepare(False)
    index.resume(_key_of("task_id", "tasks.jsonl"), duplicates="drop")
    index.check_and_record()
    reports: list[ProjectReport] = []
    with index.append() as index_writer:
        for kind, item in [*(("source", s) for s in sources), *(("package", p) for p in packages)]:
            try:
                project = open_project(item, None, cache_dir=root / ".forge" / "cache") if kind == "source" else \
                    open_project(None, item, cache_dir=root / ".forge" / "cache")
                report = _forge_one(project, root, n, families, seed, engine, workers, ray_address, budget_s,
                                    max_tests, check, overwrite, versions, index_writer, on_candidate,
                                    {"issue_writer": issue_writer, "issue_model": issue_model})
            except DataError as exc:  # a bad project: say why, go on with the next
                label = exc.project if isinstance(exc, ProjectError) else str(item)
                reason = exc.reason if isinstance(exc, ProjectError) else str(exc)
                _LOG.warning("forge: %s refused: %s", label, reason)
                report = ProjectReport(project=label, error=reason)
            reports.append(report)
            if on_project:
                on_project(report)
    return ForgeReport(out=str(root), projects=reports)

