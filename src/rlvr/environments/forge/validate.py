"""Which tests a project keeps, and whether a candidate bug makes a task (`rlvr forge` steps 1 and 3).

- `make_baseline`: the suite runs twice on the unchanged project, with two hash seeds (the first
  run records which project functions each test runs), and is collected once more with a third.
  Kept: the tests whose id is the same in the three (not built from set or dict order, which the
  grader's own hash seed would change), that pass both times, and that the grader can pass at all
  (`signable`: the grader signs a test only when its function is defined in its test file, so a
  test method inherited from a mixin never passes there). A suite with no kept test, or slower
  than the budget, is refused with the reason (`ProjectError`).
- `validate`: a candidate runs first against the kept tests that run the changed function (a
  screen: one of them must fail), then against every kept test, twice (two hash seeds). It becomes a task when at
  least one kept test fails both times (FAIL_TO_PASS), every other kept test passes both times
  (PASS_TO_PASS), and nothing timed out or failed to import; otherwise the reason is recorded
  (`Outcome.reason`, one of `DROP_REASONS`).
- `task_tests`: the tests a task's grading runs, at most `max_tests`: FAIL_TO_PASS tests and the
  PASS_TO_PASS tests that run the changed function (seeded samples when there are more). The
  grader forks one child per test, so the set is kept small; the validation above already
  checked every kept test.
"""

from __future__ import annotations

import ast
import random
import time
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.environments.forge.mutators import Mutant
from rlvr.environments.forge.project import Project, ProjectError
from rlvr.environments.forge.suite import SuiteRun, SuiteRunner
from rlvr.verifiers.safe_ast import AST_LOCK

__all__ = ["Baseline", "make_baseline"]

DROP_REASONS = ("no-test-fails", "timeout", "import-error", "flaky", "breaks-other-tests", "run-error",
                "duplicate", "leaks-original", "grader-disagrees")
"""Why a candidate does not become a task."""
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError")


class Baseline(BaseModel):
    """The unchanged project's suite in the sandbox: the kept tests and what they run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    project: Project
    kept: tuple[str, ...] = Field(description="Node ids that pass deterministically and that the grader can pass.")
    dropped: dict[str, str] = Field(default_factory=dict, description="Node id -> why it is not kept.")
    collect_errors: dict[str, str] = Field(default_factory=dict, description="Test paths that could not be "
                                           "collected, and why (a missing dependency, ...).")
    covering: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="'path:first line' of a project "
                                                 "function -> the kept tests that run it.")
    seconds: float = Field(description="Wall-clock time of one plain run of the suite, seconds.")

    def tests_of(self, path: str, first_line: int) -> tuple[str, ...]:
        """The kept tests that run the function starting at `first_line` of `path`."""
        return self.covering.get(f"{path}:{first_line}", ())


def signable(test_id: str, sources: dict[str, str]) -> bool:
    """True when the grader can record `test_id` as passed: its function is defined in its own test file.

    The grader signs a test from the code object it compiled for that test's function in that
    file (`rlvr.sandbox.guest.rlvr_session_pytest`): `Class.method` must be a `def` in the class's
    body, `function` a module-level `def` (an inherited or generated test never passes there).
    """
    path, _, rest = test_id.partition("::")
    source = sources.get(path)
    if source is None or not rest:
        return False
    parts = rest.partition("[")[0].split("::")
    try:
        with AST_LOCK:
            body: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError):
        return False
    for i, name in enumerate(parts):
        found = [n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == name]
        if not found:
            return False
        if i < len(parts) - 1:
            if not isinstance(found[-1], ast.ClassDef):
                return False
            body = found[-1].body
        elif not isinstance(found[-1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
    return True


def make_baseline(runner: SuiteRunner, budget_s: float) -> Baseline:
    """Run the unchanged suite twice and keep what passes deterministically (module docstring).

    Args:
        runner: the project's suite runner.
        budget_s: the longest one run may take, seconds.

    Raises:
        ProjectError: the suite does not finish within the budget, the sandbox cannot run it, or no
            test passes deterministically.
    """
    project = runner.project
    first = runner.run(coverage=True, timeout_s=budget_s * 2, hash_seed=1)  # tracing slows the run down
    _refuse_broken(project, first, budget_s * 2)
    plain_start = time.monotonic()
    second = runner.run(timeout_s=budget_s, hash_seed=2)
    seconds = time.monotonic() - plain_start
    _refuse_broken(project, second, budget_s)
    third = runner.run(timeout_s=budget_s, hash_seed=3, collect_only=True)
    _refuse_broken(project, third, budget_s)
    sources = {name: data.decode("utf-8", errors="replace") for name, data in runner.tests.items()
               if name.endswith(".py")}
    kept, dropped = [], {}
    stable = set(third.collected)
    for test_id in sorted(set(first.tests) | set(second.tests)):
        a, b = first.tests.get(test_id), second.tests.get(test_id)
        if a is None or b is None or test_id not in stable:
            dropped[test_id] = "its id is not the same in every run (it depends on the hash seed: set or dict order)"
        elif a == b == "pass":
            if signable(test_id, sources):
                kept.append(test_id)
            else:
                dropped[test_id] = "its function is not defined in its test file (inherited or generated)"
        elif "pass" in (a, b):
            dropped[test_id] = "flaky: passed in one run only"
        else:
            dropped[test_id] = f"{a or b}: {first.messages.get(test_id) or second.messages.get(test_id) or ''}"[:300]
    if not kept:
        why = "; ".join(f"{k}: {v}" for k, v in [*first.collect_errors.items(), *dropped.items()][:3])
        raise ProjectError(project.label, f"failing suite: none of its {len(dropped)} tests passes deterministically "
                           f"in the sandbox ({why or 'no test collected'})")
    kept_set = set(kept)
    covering = {f"{path}:{line}": tuple(sorted(ids & kept_set)) for (path, line), ids in first.covering().items()
                if ids & kept_set}
    return Baseline(project=project, kept=tuple(kept), dropped=dropped, collect_errors=dict(first.collect_errors),
                    covering=covering, seconds=round(seconds, 3))


def _refuse_broken(project: Project, run: SuiteRun, budget_s: float) -> None:
    if run.timed_out:
        raise ProjectError(project.label, f"too slow: its tests took longer than the budget ({budget_s:.0f} s)")
    if run.error is not None:
        raise ProjectError(project.label, f"its tests could not run in the sandbox: {run.error}")


class Outcome(BaseModel):
    """What validating one candidate decided."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["validated", "dropped"]
    reason: str = Field(default="", description="Why it was dropped (one of DROP_REASONS, then details).")
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = Field(default=(), description="Every other kept test (all passed twice).")
    messages: dict[str, str] = Field(default_factory=dict, description="FAIL_TO_PASS id -> its failure's first line.")
    seconds: float = 0.0

    @classmethod
    def drop(cls, reason: str, detail: str = "", seconds: float = 0.0) -> Outcome:
        """A dropped candidate: `reason` from `DROP_REASONS`, `detail` free text."""
        return cls(status="dropped", reason=f"{reason}: {detail}" if detail else reason, seconds=seconds)

    @property
    def kind(self) -> str:
        """The reason's name alone ('' when validated)."""
        return self.reason.split(":", 1)[0]


def _import_failure(run: SuiteRun, failed: Sequence[str]) -> str | None:
    if run.collect_errors:
        path, why = next(iter(run.collect_errors.items()))
        return f"{path}: {why}"
    broken = [t for t in failed if run.messages.get(t, "").startswith(IMPORT_ERRORS)]
    return f"{broken[0]}: {run.messages[broken[0]]}" if broken and len(broken) == len(failed) else None


def _problem(run: SuiteRun) -> Outcome | None:
    if run.timed_out:
        return Outcome.drop("timeout", "the tests ran past the time budget")
    if run.error is not None:
        return Outcome.drop("run-error", run.error[:300])
    return None


def validate(mutant: Mutant, baseline: Baseline, runner: SuiteRunner, first_line: int, budget_s: float) -> Outcome:
    """Decide whether `mutant` makes a task (module docstring for the rules).

    Args:
        mutant: the candidate.
        baseline: the project's kept tests.
        runner: the project's suite runner.
        first_line: the first line of the changed function (its coverage key).
        budget_s: the longest one run of the kept tests may take, seconds.

    Returns:
        `validated` with FAIL_TO_PASS / PASS_TO_PASS, or `dropped` with the reason.
    """
    start = time.monotonic()
    replace = {mutant.path: mutant.source}
    related = list(baseline.tests_of(mutant.path, first_line))
    if not related:
        return Outcome.drop("no-test-fails", "no kept test runs the changed function")
    screen = runner.run(replace=replace, select=related, timeout_s=budget_s, hash_seed=11)
    problem = _problem(screen)
    if problem is not None:
        return problem.model_copy(update={"seconds": time.monotonic() - start})
    failed = [t for t in related if screen.tests.get(t) != "pass"]
    if not failed:
        return Outcome.drop("no-test-fails", "every test that runs the changed function still passes",
                            seconds=time.monotonic() - start)
    why = _import_failure(screen, failed)
    if why:
        return Outcome.drop("import-error", why[:300], seconds=time.monotonic() - start)
    runs = []
    for seed in (12, 13):  # two hash seeds: an outcome that depends on set or dict order shows as flaky
        run = runner.run(replace=replace, select=list(baseline.kept), timeout_s=budget_s, hash_seed=seed)
        problem = _problem(run)
        if problem is not None:
            return problem.model_copy(update={"seconds": time.monotonic() - start})
        if run.collect_errors:
            return Outcome.drop("import-error", _import_failure(run, [])[:300],  # type: ignore[index]
                                seconds=time.monotonic() - start)
        runs.append(run)
    fail = [{t for t in baseline.kept if r.tests.get(t) != "pass"} for r in runs]
    if fail[0] != fail[1]:
        return Outcome.drop("flaky", f"{len(fail[0] ^ fail[1])} tests changed outcome between two runs",
                            seconds=time.monotonic() - start)
    f2p = sorted(fail[0])
    if not f2p:
        return Outcome.drop("no-test-fails", "no kept test fails in the full runs", seconds=time.monotonic() - start)
    why = _import_failure(runs[0], f2p)
    if why:
        return Outcome.drop("import-error", why[:300], seconds=time.monotonic() - start)
    return Outcome(status="validated", fail_to_pass=tuple(f2p),
                   pass_to_pass=tuple(t for t in baseline.kept if t not in fail[0]),
                   messages={t: runs[0].messages.get(t, "") for t in f2p}, seconds=round(time.monotonic() - start, 3))


def task_tests(outcome: Outcome, related: Sequence[str], max_tests: int, seed: int) -> tuple[list[str], list[str]]:
    """(FAIL_TO_PASS, PASS_TO_PASS) a task's grading runs (module docstring).

    At most `max_tests` in all: FAIL_TO_PASS tests take up to 60 % of them (at least one), the
    related PASS_TO_PASS tests the rest, and whichever side has fewer leaves its room to the
    other; where a side has more than its room, a seeded sample is taken.

    Args:
        outcome: a validated outcome.
        related: the kept tests that run the changed function.
        max_tests: most tests in all.
        seed: the samples' seed.
    """
    rng = random.Random(seed)
    failing = list(outcome.fail_to_pass)
    pool = [t for t in related if t not in set(failing)]
    f2p_room = max(1, min(len(failing), max_tests - min(len(pool), max_tests - max(1, (max_tests * 3 + 4) // 5))))
    f2p = sorted(rng.sample(failing, f2p_room)) if len(failing) > f2p_room else sorted(failing)
    room = max(0, max_tests - len(f2p))
    p2p = sorted(rng.sample(pool, room)) if len(pool) > room else sorted(pool)
    return f2p, p2p
