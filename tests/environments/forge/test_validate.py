"""Which tests a project keeps and which candidates become tasks (`suite`, `validate`), in the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_projects import CORE, needs_bwrap
from rlvr.environments.forge.mutators import Mutant, candidates, functions_of
from rlvr.environments.forge.project import ProjectError, read_project
from rlvr.environments.forge.suite import SuiteRunner
from rlvr.environments.forge.validate import Outcome, make_baseline, signable, task_tests, validate

pytestmark = needs_bwrap


def _mutant(source: str, function: str = "clamp", key: str = "k") -> Mutant:
    return Mutant(path="tinycalc/core.py", function=function, mutator="hand", line=1, note="", source=source,
                  key=key, site=0)


def _first_line(name: str) -> int:
    return next(f.first_line for f in functions_of("tinycalc/core.py", CORE) if f.qualname == name)


@pytest.fixture
def runner(tinycalc: Path) -> SuiteRunner:
    return SuiteRunner(read_project(tinycalc))


def test_the_baseline_keeps_deterministic_passes_the_grader_can_sign(runner: SuiteRunner) -> None:
    baseline = make_baseline(runner, budget_s=120)
    assert "test_core.py::test_clamp_low" in baseline.kept and "test_core.py::test_is_even[2-True]" in baseline.kept
    assert baseline.dropped["test_core.py::test_always_fails"].startswith("fail")
    assert "not defined in its test file" in baseline.dropped["test_core.py::TestSub::test_inherited"]
    assert len(baseline.kept) == 11
    clamp = baseline.tests_of("tinycalc/core.py", _first_line("clamp"))
    assert set(clamp) == {f"test_core.py::test_clamp_{s}" for s in ("low", "high", "inside", "edges")}
    assert baseline.tests_of("tinycalc/core.py", _first_line("never_tested")) == ()
    assert baseline.seconds > 0


def test_a_suite_with_nothing_passing_is_refused(tinycalc: Path) -> None:
    (tinycalc / "tests" / "test_core.py").write_text("def test_no():\n    assert False\n")
    with pytest.raises(ProjectError, match="failing suite: none of its 1 tests passes"):
        make_baseline(SuiteRunner(read_project(tinycalc)), budget_s=120)


def test_a_suite_slower_than_the_budget_is_refused(tinycalc: Path) -> None:
    (tinycalc / "tests" / "test_core.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
    with pytest.raises(ProjectError, match="too slow"):
        make_baseline(SuiteRunner(read_project(tinycalc)), budget_s=3)


def test_a_bug_the_tests_catch_becomes_a_task(runner: SuiteRunner) -> None:
    baseline = make_baseline(runner, budget_s=120)
    outcome = validate(_mutant(CORE.replace("if x < lo:", "if x > lo:")), baseline, runner, _first_line("clamp"), 120)
    assert outcome.status == "validated", outcome.reason
    assert set(outcome.fail_to_pass) == {f"test_core.py::test_clamp_{s}" for s in ("low", "high", "inside", "edges")}
    assert "test_core.py::test_mean" in outcome.pass_to_pass and not set(outcome.pass_to_pass) & set(
        outcome.fail_to_pass)
    assert "assert -5 == 0" in outcome.messages["test_core.py::test_clamp_low"]


@pytest.mark.parametrize("source,function,reason", [
    (CORE.replace("if x > hi:", "if x >= hi:"), "clamp", "no-test-fails"),  # equivalent: x == hi returns hi
    (CORE.replace("    return x\n", "    return x\nraise ImportError('gone')\n", 1), "clamp", "import-error"),
    (CORE.replace("    if x < lo:", "    while True:\n        pass\n    if x < lo:"), "clamp", "timeout"),
])
def test_candidates_that_make_no_task_are_dropped_with_the_reason(runner: SuiteRunner, source: str, function: str,
                                                                  reason: str) -> None:
    baseline = make_baseline(runner, budget_s=120)
    outcome = validate(_mutant(source, function), baseline, runner, _first_line(function), budget_s=15)
    assert (outcome.status, outcome.kind) == ("dropped", reason), outcome.reason


def test_generated_candidates_validate_or_drop_deterministically(runner: SuiteRunner) -> None:
    baseline = make_baseline(runner, budget_s=120)
    functions = [f for f in functions_of("tinycalc/core.py", CORE) if f.qualname == "is_even"]
    mutant = next(candidates("tinycalc/core.py", CORE, functions, ["comparison-flip"], 0))
    first = validate(mutant, baseline, runner, functions[0].first_line, 120)
    second = validate(mutant, baseline, runner, functions[0].first_line, 120)
    assert first.status == second.status == "validated" and first.fail_to_pass == second.fail_to_pass
    assert len(first.fail_to_pass) == 4  # every is_even case fails with `!=`


def test_signable_means_defined_in_its_own_test_file() -> None:
    sources = {"t.py": "class Base:\n    def test_a(self): pass\n\n\nclass TestX(Base):\n    def test_b(self): pass\n\n"
                       "\ndef test_c(x): pass\n"}
    assert signable("t.py::TestX::test_b", sources) and signable("t.py::test_c[1-2]", sources)
    assert not signable("t.py::TestX::test_a", sources) and not signable("other.py::test_c", sources)


def test_a_tasks_tests_are_capped_failing_ones_first() -> None:
    outcome = Outcome(status="validated", fail_to_pass=tuple(f"f{i}" for i in range(20)))
    f2p, p2p = task_tests(outcome, [f"p{i}" for i in range(20)], 10, seed=0)
    assert (len(f2p), len(p2p)) == (6, 4) and task_tests(outcome, [f"p{i}" for i in range(20)], 10, 0) == (f2p, p2p)
    assert task_tests(outcome, [], 10, 0)[0] == sorted(task_tests(outcome, [], 10, 0)[0]) and len(
        task_tests(outcome, [], 10, 0)[0]) == 10


def test_a_broken_job_is_an_error_verdict_not_a_drop() -> None:
    from rlvr.environments.forge.candidate import score_candidate

    verdict = score_candidate("not json", {"baseline": "/nonexistent"})
    assert verdict.status == "error" and verdict.reward is None
