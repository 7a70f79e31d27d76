"""Grading a finished terminal episode in a fresh sandbox the agent never ran in.

By the time `grade` runs, every process of the agent's sandbox is dead (the sandbox's init
killed them, then the sandbox itself was torn down) and its working directory is a tar on the
host. Grading then:

1. copies the task's tests fresh from the trusted task source into a new host directory,
   mounted read-only at `/tests` (whatever the agent did to a copy it could see is irrelevant);
2. starts a new sandbox (new pid namespace: nothing left running by the agent exists there) and
   unpacks the working directory into its own tmpfs; reward and report files are never taken
   from the agent's files (`/logs/verifier` is a new, empty tmpfs);
3. runs the tests in clean processes: pytest mode runs the grader's own pytest (read-only
   mount) through `rlvr.sandbox.guest.rlvr_session_pytest` in a non-dumpable child of the sandbox's init,
   with the environment built from scratch (no rc files, no inherited variables, no
   agent-controlled PATH), plugin autoload off, no cache, `--rootdir`/`--confcutdir` at /tests (a
   conftest.py or pytest.ini the agent planted in the working directory is not read), pytest
   imported before the task's PYTHONPATH is appended after the standard library, and every test
   in a forked child of its own, its pass decided by a parent that never runs the agent's code
   (from a record signed only when the trusted test function ran to its end); script mode runs
   the (install-free) script with `bash --noprofile --norc` under the same clean environment,
   its `pytest` through the same runner and its `python3` isolated from the working directory
   (`_wrappers`), and reads its reports afterwards;
4. decides on the host: every expected test (all test functions of the trusted test files)
   must be reported and pass; skipped, xfailed, missing or zero tests fail.

Status: `correct` / `incorrect`; `timeout` when the tests ran past their limit (reward 0);
`error` (reward None) only when the grader itself broke: pytest cannot be imported, the test
files do not parse, the sandbox does not start, a Harbor script wrote no reward.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

from rlvr.core.errors import RlvrError, SandboxError
from rlvr.core.types import Verdict
from rlvr.sandbox.isolation import make_readable, remove_tree, sandbox_python, stage_dir
from rlvr.sandbox.session import Mount, PytestRun, SandboxSession, SessionConfig, UnpackError
from rlvr.verifiers import junit
from rlvr.verifiers.terminal.grader_bin import GRADER_DIR, PYTEST_SOCKET, wrap_absolute_python, write_grader_bin
from rlvr.verifiers.terminal.spec import TerminalTask, TestPlan
from rlvr.verifiers.terminal.testscript import PYTEST_VALUE_OPTIONS, TESTS_MOUNT, runs_only_trusted_tests
from rlvr.verifiers.terminal.workspace import expand_env, link_roots, sandbox_for

__all__: list[str] = []

LOGS = "/logs/verifier"
_WORKSPACE = "/run/rlvr/grader/workspace.tar"


def _clean_env(task: TerminalTask, plan: TestPlan | None) -> dict[str, str]:
    """The tests' whole environment: built here, nothing inherited from the agent or the caller."""
    env = {"PATH": f"{GRADER_DIR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": task.home, "LANG": "C.UTF-8", "TERM": "dumb", "USER": "root", "TEST_DIR": TESTS_MOUNT,
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}
    for extra in (task.env, plan.env if plan is not None else {}):  # `ENV PATH=/app/bin:$PATH` as Docker expands it
        for key, value in extra.items():
            env[key] = expand_env(value, env)
    for key in ("BASH_ENV", "ENV", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        env.pop(key, None)
    env["PATH"] = env["PATH"] if env["PATH"].startswith(f"{GRADER_DIR}/bin:") else f"{GRADER_DIR}/bin:{env['PATH']}"
    return env


def _expected(plan: TestPlan, tests: Path) -> tuple[list[str], list[str]]:
    files = {}
    for name in plan.test_files:
        path = tests / name
        if path.suffix == ".py" and path.is_file():
            files[name] = path.read_text(encoding="utf-8", errors="replace")
    return junit.expected_tests(files)


def _named_ids(plan: TestPlan) -> list[str]:
    """The test ids a selective plan's command line names (`/tests/f.py::Class::test`), relative to /tests."""
    prefix = TESTS_MOUNT + "/"
    return [a[len(prefix):] for a in plan.pytest_args if a.startswith(prefix) and "::" in a]


def _mark_unreported(outcomes: dict[str, str], named: list[str]) -> dict[str, str]:
    """`outcomes` plus 'not run' for every named test id no outcome reports (itself, its cases or its methods).

    A test the command line names must run: one whose file the code under test kept from being
    collected (an import error, a `collect_ignore`) would otherwise vanish from a selective run.
    """
    out = dict(outcomes)
    for test_id in named:
        if not any(k == test_id or k.startswith((test_id + "[", test_id + "::")) for k in outcomes):
            out[test_id] = "not run"
    return out


def verdict_from_tests(outcomes: dict[str, str] | str, exact: list[str], prefixes: list[str], selective: bool,
                       *, reward: str, notes: list[str], elapsed_s: float,
                       messages: dict[str, str] | None = None) -> Verdict:
    """The verdict from JUnit outcomes: correct only when every expected test passed (and at least one ran)."""
    if isinstance(outcomes, str):
        return Verdict(status="incorrect", reward=0.0, detail="\n".join([f"no usable test report: {outcomes}",
                                                                          *notes]), elapsed_s=elapsed_s)
    results = dict(outcomes) if selective else {**junit.match_expected(outcomes, exact, prefixes), **{
        k: v for k, v in outcomes.items() if k not in exact and not any(k.startswith(p + "[") for p in prefixes)}}
    total = len(results)
    passed = sum(v == "pass" for v in results.values())
    ok = total > 0 and passed == total
    why = messages or {}
    lines = [f"{'PASS' if v == 'pass' else 'FAIL'} {k}" + ("" if v in ("pass", "fail") else f" ({v})")
             + (f": {why[k]}" if v != "pass" and k in why else "") for k, v in results.items()]
    if total == 0:
        lines.append("no tests ran (zero tests is a failure)")
    score = (passed / total if total else 0.0) if reward == "fraction" else float(ok)
    return Verdict(status="correct" if ok else "incorrect", reward=score,
                   components={"tests_passed": float(passed), "tests_total": float(total)},
                   detail="\n".join([f"{passed}/{total} tests passed", *lines, *notes]), elapsed_s=elapsed_s)


def _pytest_verdict(run: PytestRun, plan: TestPlan, tests: Path, nonce: str, reward: str, notes: list[str],
                    start: float) -> Verdict:
    elapsed = time.monotonic() - start
    if run.import_error:
        return Verdict.error(f"the grader's pytest cannot be imported in the sandbox: {run.import_error}",
                             elapsed_s=elapsed)
    if run.timed_out:
        return Verdict.timeout(f"the tests ran past their limit ({plan.test_files})", elapsed_s=elapsed)
    if not run.started and not run.report.strip():
        return Verdict.error(f"the grader's pytest did not start (exit {run.exit_code}): {run.stderr[-600:]}",
                             elapsed_s=elapsed)
    if not run.report.strip():  # pytest started, then ended without its report: stopped by the code under test
        why = f"killed by signal {run.signal}" if run.signal else f"exit {run.exit_code}"
        return Verdict(status="incorrect", reward=0.0, elapsed_s=elapsed,
                       detail=f"pytest ended without a report ({why}): the programs under test stopped it\n"
                              f"{run.stdout[-800:]}")
    try:
        exact, prefixes = _expected(plan, tests)
    except SyntaxError as exc:
        return Verdict.error(f"a test file of the task does not parse: {exc}", elapsed_s=elapsed)
    outcomes = junit.parse_junit(run.report, plan.test_files, nonce=nonce)
    if plan.selective and not isinstance(outcomes, str):
        outcomes = _mark_unreported(outcomes, _named_ids(plan))
    return verdict_from_tests(outcomes, exact, prefixes, plan.selective, reward=reward, notes=notes,
                              elapsed_s=elapsed, messages=junit.failure_messages(run.report, plan.test_files))


def _run_pytest(session: SandboxSession, task: TerminalTask, plan: TestPlan, tests: Path, env: dict[str, str],
                site: tuple[str, ...], reward: str, notes: list[str], start: float) -> Verdict:
    nonce = secrets.token_hex(16)
    named = {a.split("::", 1)[0] for a in plan.pytest_args if "::" in a}  # a file whose tests are named: those only
    args = [f"{TESTS_MOUNT}/{f}" for f in plan.test_files if f"{TESTS_MOUNT}/{f}" not in named] + list(
        plan.pytest_args) + [
        "-p", "no:cacheprovider", "--rootdir", TESTS_MOUNT, "--confcutdir", TESTS_MOUNT, "-o",
        f"junit_suite_name={nonce}", "-o", "junit_family=xunit2", "-q", "-rfEs"]
    if not plan.test_files:
        return Verdict(status="incorrect", reward=0.0, detail="the task's tests/ holds no test files (zero tests "
                       "is a failure)")
    run = session.pytest(args, site=site, cwd=plan.cwd, env=env, timeout_s=task.test_timeout_s)
    return _pytest_verdict(run, plan, tests, nonce, reward, notes, start)


REWARD_FDS = {8: "reward.txt", 9: "reward.json"}
"""Script mode: the script's redirections to /logs/verifier/reward.txt and reward.json go to these fds instead."""


def _redirect_rewards(script: str) -> str:
    """`> /logs/verifier/reward.txt` (and `>>`, `1>`) in the script become `>&8` (reward.json: `>&9`)."""
    for fd, name in REWARD_FDS.items():
        script = re.sub(rf"(?<![<>&\d])[1]?>>?\s*[\"']?{re.escape(LOGS)}/{re.escape(name)}[\"']?(?![\w./-])",
                        f">&{fd}", script)
    return script


def _txt_values(data: bytes) -> list[float] | str:
    try:
        values = [float(token) for token in data.decode().split()]
    except (ValueError, UnicodeDecodeError):
        return f"reward.txt is not a number: {data[:80]!r}"
    return values if all(math.isfinite(v) for v in values) else "reward.txt is not finite"


def _json_values(data: bytes) -> list[float] | str:
    decoder, text, values = json.JSONDecoder(), data.decode(errors="replace"), []
    at = 0
    while True:  # every JSON document written, one after the other
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        try:
            parsed, at = decoder.raw_decode(text, at)
        except ValueError:
            return "reward.json is not JSON"
        doc: Any = parsed if isinstance(parsed, dict) else {"reward": parsed}
        if not doc or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                              for v in doc.values()):
            return "reward.json holds a non-numeric or non-finite value"
        values.append(float(doc.get("reward", sum(doc.values()) / len(doc))))
    return values


def _reward(session: SandboxSession, reports: dict[int, list[bytes]]) -> float | str | None:
    """Harbor's reward: the lowest value written to reward.txt or reward.json (numbers; 'reward' or their mean).

    Writes through the script's reward channels are all kept, each message on its own, so a
    program the script ran cannot replace (or glue onto) the script's own value; a value left in
    the files (written some other way than a shell redirection) is read too.
    """
    values: list[float] = []
    for fd, name in REWARD_FDS.items():
        chunks = [*(reports.get(fd) or []), session.read_file(f"{LOGS}/{name}") or b""]
        for data in chunks:
            if data.strip():
                got = _txt_values(data) if name == "reward.txt" else _json_values(data)
                if isinstance(got, str):
                    return got
                values += got
    return min(values) if values else None


def _script_outcomes(runs: list[PytestRun], files: list[str]) -> dict[str, str] | str:
    """Every test outcome of a script's pytest runs, or why the runs cannot be trusted.

    A test passes only when every run that ran it passed it; a run that ended without its report
    (stopped by a program it ran) makes the whole script's result untrusted.
    """
    outcomes: dict[str, str] = {}
    for run in runs:
        if run.import_error:
            raise SandboxError(f"the grader's pytest cannot be imported: {run.import_error}")
        if not run.report.strip():
            why = "timed out" if run.timed_out else (f"signal {run.signal}" if run.signal else f"exit {run.exit_code}")
            return f"a pytest run of the test script ended without its report ({why})"
        if not runs_only_trusted_tests(list(run.args), run.cwd):
            continue  # tests from outside /tests (files the agent could write) prove nothing
        parsed = junit.parse_junit(run.report, files)
        if isinstance(parsed, str):
            return parsed
        for key, value in parsed.items():
            outcomes[key] = value if outcomes.get(key, "pass") == "pass" else outcomes[key]
    return outcomes


def _run_script(session: SandboxSession, task: TerminalTask, plan: TestPlan, env: dict[str, str], reward: str,
                notes: list[str], start: float, site: tuple[str, ...], tests: Path) -> Verdict:
    assert plan.script is not None
    session.exec(f"mkdir -p {LOGS}", env=env, timeout_s=30.0)
    result, runs, reports = session.exec_script(
        f"bash --noprofile --norc {GRADER_DIR}/test-script.sh", cwd=plan.cwd, env=env, timeout_s=task.test_timeout_s,
        socket_path=PYTEST_SOCKET, site=site, test_timeout_s=task.test_timeout_s,
        report_fds=tuple(REWARD_FDS) if plan.reward_file else (), trusted_root=TESTS_MOUNT,
        value_options=PYTEST_VALUE_OPTIONS)
    elapsed = time.monotonic() - start
    if result.error:
        return Verdict.error(f"the grading sandbox failed: {result.error}", elapsed_s=elapsed)
    if result.timed_out:
        return Verdict.timeout("the test script ran past its limit", elapsed_s=elapsed)
    files = [p.relative_to(tests).as_posix() for p in tests.rglob("*.py")]
    outcomes = _script_outcomes(runs, files)
    tail = (f"test script exit {result.exit_code}{', ' + result.notes[0] if result.notes else ''}; "
            f"output: {result.stdout[-400:]} {result.stderr[-400:]}").rstrip()
    if isinstance(outcomes, str):
        return Verdict(status="incorrect", reward=0.0, elapsed_s=elapsed, detail=f"{outcomes}\n{tail}")
    exact, prefixes = _expected(plan, tests)
    if runs:  # every test the script's pytest commands name must have run (and passed)
        missing = [k for k, v in junit.match_expected(outcomes, exact, prefixes).items() if v != "pass"]
        outcomes.update({k: "fail" for k in missing if k not in outcomes})
    notes = [*notes, "script mode: the script ran as written (installs removed); its pytest runs were the "
                     "grader's own processes, and every process it left was stopped before its reports were read"]
    if plan.reward_file:
        value = _reward(session, reports)
        if value is None:
            # it names its reward file, or it failed (a program of the agent's it ran broke it): not the grader
            if result.exit_code != 0 or any(f"{LOGS}/{name}" in plan.script for name in REWARD_FDS.values()):
                return Verdict(status="incorrect", reward=0.0, elapsed_s=elapsed,
                               detail=f"the test script ended without writing a reward ({tail})")
            return Verdict.error(f"the test script wrote no {LOGS}/reward.txt or reward.json ({tail})",
                                 elapsed_s=elapsed)
        if isinstance(value, str):  # the script's own writes parse: junk comes from a program it ran
            return Verdict(status="incorrect", reward=0.0, elapsed_s=elapsed, detail=f"unusable reward: {value}")
        tests_ok = all(v == "pass" for v in outcomes.values())
        ok = value >= 1.0 and tests_ok
        return Verdict(status="correct" if ok else "incorrect", reward=value if reward == "fraction" else float(ok),
                       components={"reward_file": value}, elapsed_s=elapsed,
                       detail="\n".join([f"reward file: {value:g}", *(f"{v.upper()} {k}" for k, v in outcomes.items()),
                                         *notes, tail]))
    if not [r for r in runs if runs_only_trusted_tests(list(r.args), r.cwd)]:
        if plan.test_files:  # its pytest command names the tests: the script stopped before it (a failing step)
            return Verdict(status="incorrect", reward=0.0, elapsed_s=elapsed,
                           detail=f"the test script ended before running its tests: {tail}")
        return Verdict.error(f"the test script ran no pytest on the task's tests in {TESTS_MOUNT} (no report to "
                             f"grade): {tail}", elapsed_s=elapsed)
    if result.notes:  # the script itself was killed (by a program it ran): its run is not a pass
        return Verdict(status="incorrect", reward=0.0, elapsed_s=elapsed, detail=f"the test script was stopped: {tail}")
    return verdict_from_tests(outcomes, [], [], True, reward=reward, notes=[*notes, tail], elapsed_s=elapsed)


def grade_workspace(task: TerminalTask, workspace_tar: Path, *, config: SessionConfig | None = None,
                    site: tuple[str, ...] = (), reward: str = "binary") -> Verdict:
    """Grade the exported working directory `workspace_tar` of `task` (module docstring).

    Args:
        task: the task (its tests are copied again from `task.tests.tests_dir`).
        workspace_tar: the tar `TaskSession.finish` wrote.
        config: sandbox limits of the grading sandbox.
        site: host directories holding the grader's pytest (mounted read-only at the same paths).
        reward: 'binary' (1.0 only when correct) or 'fraction' (share of tests passed; Harbor:
            the reward file's value).

    Returns:
        The verdict (never raises for what the agent did).
    """
    start = time.monotonic()
    plan = task.tests
    if plan is None:
        return Verdict.error(f"task {task.task_id} has no tests to grade with")
    stage = Path(stage_dir("rlvr-grade-"))
    try:
        tests = stage / "tests"
        shutil.copytree(plan.tests_dir, tests, symlinks=False) if Path(plan.tests_dir).is_dir() else tests.mkdir()
        grader = stage / "grader"
        grader.mkdir()
        shutil.copyfile(workspace_tar, grader / "workspace.tar")
        write_grader_bin(grader, "python3" if task.placement == "container" else _python(config), site)
        if plan.script is not None:
            script = plan.script
            if plan.reward_file:  # the script's reward writes go to channels the supervisor reads (`_reward`)
                script = _redirect_rewards(script)
            script = wrap_absolute_python(script)
            (grader / "test-script.sh").write_text(script)
        make_readable(str(stage))
        cfg = (config or SessionConfig()).model_copy(update={"workdir": task.workdir, "home": task.home})
        mounts = [Mount(TESTS_MOUNT, str(tests)), Mount(GRADER_DIR, str(grader)), Mount(LOGS, kind="tmpfs", size_mb=64),
                  *(Mount(p, p) for p in site)]
        env = _clean_env(task, plan)
        with sandbox_for(task, cfg, mounts, env) as session:
            if task.placement == "container":  # the image's own copy of the working directory goes first
                session.exec(f"find {shlex.quote(task.workdir)} -mindepth 1 -delete", env=env, timeout_s=120.0)
            dropped = session.extract(_WORKSPACE, task.workdir, link_roots=link_roots(task))
            notes = list(plan.notes)
            if dropped:
                notes.append(f"{len(dropped)} symbolic link(s) pointing outside the working directory were not "
                             f"restored for grading: {', '.join(dropped[:5])}")
            if plan.mode == "pytest":
                return _run_pytest(session, task, plan, tests, env, site, reward, notes, start)
            return _run_script(session, task, plan, env, reward, notes, start, site, tests)
    except UnpackError as exc:  # what the agent left does not fit the grading sandbox: its doing, not the grader's
        return Verdict(status="incorrect", reward=0.0, detail=f"the working directory could not be restored for "
                       f"grading: {exc}", elapsed_s=time.monotonic() - start)
    except (SandboxError, OSError, RlvrError) as exc:
        return Verdict.error(f"the grader failed: {type(exc).__name__}: {exc}", elapsed_s=time.monotonic() - start)
    finally:
        remove_tree(str(stage))


def _python(config: SessionConfig | None) -> str:
    return sandbox_python(config.python if config else None)
