"""A task's test script (`run-tests.sh`, `tests/test.sh`) as a grading plan (`TestPlan`).

Terminal-Bench's `run-tests.sh` and Harbor's `tests/test.sh` mostly install pytest at grading
time (apt-get, the uv installer, `uv add pytest`) and then run one pytest command; Harbor's also
turns pytest's exit status into `/logs/verifier/reward.txt`. rlvr never installs anything at
grading time (the grader brings its own Python and pytest, mounted read-only), so:

- a script made only of installs, `cd`/`export`/`set`/`echo`, Terminal-Bench's working-directory
  guard, Harbor's reward bookkeeping and exactly one pytest command becomes `mode="pytest"`:
  the grader runs that pytest command's test files itself (its selection options `-k`, `-m`,
  `--deselect`, `--ignore` kept; report and plugin options such as `--ctrf`, `-rA` dropped);
- any other script becomes `mode="script"`: it runs as written, installs replaced by `:`.

`$TEST_DIR` and `${TEST_DIR}` are `/tests`, as in Terminal-Bench's docker-compose template.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from rlvr.core.errors import DataError
from rlvr.verifiers.terminal.shell import Command, ShellParseError, split_commands
from rlvr.verifiers.terminal.spec import TestPlan

__all__: list[str] = []

TESTS_MOUNT = "/tests"
"""Where the fresh copy of a task's tests is mounted for grading (Terminal-Bench's and Harbor's path)."""

_SELECT_WITH_VALUE = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob")
_OPTIONS_WITH_VALUE = ("-p", "-c", "-o", "-W", "-n", "--ctrf", "--junitxml", "--junit-xml", "--rootdir", "--tb",
                       "--durations", "--maxfail", "--basetemp", "--confcutdir", "--import-mode", "--log-level",
                       "--log-cli-level", "--cov", "--cov-report", "--timeout", "--json-report-file", "--html",
                       "--color", "--capture", "--override-ini", "--config-file", "--dist", "--reruns", "-r")


def _expand(word: str, env: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return env.get(name, m.group(0))
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, word).strip("\"'")


PYTEST_VALUE_OPTIONS = (*_SELECT_WITH_VALUE, *_OPTIONS_WITH_VALUE)
"""pytest options that take a value as the next argument (so it is not read as a test path)."""


def runs_only_trusted_tests(args: list[str], cwd: str) -> bool:
    """True when a pytest command line `args` (run in `cwd`) collects only from /tests, the fresh copy of the tests.

    Test paths elsewhere (or none, from a working directory outside /tests) would collect files
    the agent could write.
    """
    paths: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if arg.startswith("-"):
            takes = name in _SELECT_WITH_VALUE or (name in _OPTIONS_WITH_VALUE and not re.match(r"^-r\w+$", arg))
            i += 2 if takes and "=" not in arg else 1
            continue
        paths.append(arg.partition("::")[0])
        i += 1
    inside = [posixpath.normpath(posixpath.join(cwd, p)) for p in paths or ["."]]
    return all(p == TESTS_MOUNT or p.startswith(TESTS_MOUNT + "/") for p in inside)


def test_files_in(tests_dir: Path, sub: str = "") -> list[str]:
    """Test files pytest collects by default (`test_*.py`, `*_test.py`) under `tests_dir/sub`, relative paths."""
    root = tests_dir / sub if sub else tests_dir
    if root.is_file():
        return [str(root.relative_to(tests_dir))]
    found = [p for p in root.rglob("*.py") if p.name.startswith("test_") or p.name.endswith("_test.py")]
    return sorted(str(p.relative_to(tests_dir)) for p in found)


def _pytest_plan(cmd: Command, cwd: str, env: dict[str, str], tests_dir: Path) -> tuple[list[str], list[str], bool,
                                                                                         list[str]]:
    """(test files, kept selection args, selective, dropped options) of one pytest command."""
    files: list[str] = []
    kept: list[str] = []
    dropped: list[str] = []
    selective = False
    args = [_expand(a, env) for a in cmd.pytest_args]
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name in _SELECT_WITH_VALUE:
            value = arg.split("=", 1)[1] if "=" in arg else (args[i + 1] if i + 1 < len(args) else "")
            kept += [name, value]
            selective = True
            i += 1 if "=" in arg else 2
            continue
        if arg.startswith("-"):
            dropped.append(arg)
            i += 2 if name in _OPTIONS_WITH_VALUE and "=" not in arg and not re.match(r"^-r\w+$", arg) else 1
            continue
        path, _, node = arg.partition("::")
        full = posixpath.normpath(posixpath.join(cwd, path))
        if not (full == TESTS_MOUNT or full.startswith(TESTS_MOUNT + "/")):
            raise DataError(f"the test script runs tests from {full}, outside {TESTS_MOUNT}: only the task's own "
                            "tests (copied fresh for grading) can be trusted")
        rel = posixpath.relpath(full, TESTS_MOUNT)
        found = test_files_in(tests_dir, "" if rel == "." else rel)
        if not found and not (tests_dir / rel).is_file():
            raise DataError(f"the test script runs {arg}, but the task's tests/ holds no such test file")
        files += found or [rel]
        if node:
            kept.append(posixpath.join(TESTS_MOUNT, rel) + "::" + node)
            selective = True
        i += 1
    if not files:
        files = test_files_in(tests_dir)
    return list(dict.fromkeys(files)), kept, selective, dropped


def plan_tests(script: str, tests_dir: Path, *, cwd: str, env: dict[str, str], reward_file: bool = False,
               name: str = "run-tests.sh") -> TestPlan:
    """Read a test script into a `TestPlan` (module docstring for the rules).

    Args:
        script: the script's text.
        tests_dir: host directory of the task's tests (mounted at /tests when grading).
        cwd: the working directory the script starts in (the task's WORKDIR).
        env: the task's environment (Dockerfile ENV); `TEST_DIR` is added.
        reward_file: the format reads its reward from `/logs/verifier/reward.txt|json` (Harbor).
        name: the script's file name, for messages.

    Raises:
        DataError: the script runs tests from outside /tests, or a test file it names is missing.
    """
    env = {**env, "TEST_DIR": TESTS_MOUNT}
    try:
        commands = split_commands(script)
    except ShellParseError as exc:
        return TestPlan(mode="script", tests_dir=str(tests_dir), script=script, cwd=cwd, env=env,
                        reward_file=reward_file, notes=(f"{name}: {exc}; run as written",))
    notes = [f"{name}: not run at grading time ({c.kind}): {c.text.splitlines()[0][:120]}"
             for c in commands if c.kind in ("install", "reward")]
    pytests = [c for c in commands if c.kind == "pytest"]
    others = [c for c in commands if c.kind == "other"]
    if len(pytests) == 1 and not others:
        run_cwd = cwd
        for c in commands:
            if c is pytests[0]:
                break
            if c.kind == "cd" and len(c.words) == 2:
                run_cwd = posixpath.normpath(posixpath.join(run_cwd, _expand(c.words[1], env)))
            elif c.kind == "export":
                for pair in c.words:
                    key, _, value = pair.partition("=")
                    env[key] = _expand(value, env)
        files, kept, selective, dropped = _pytest_plan(pytests[0], run_cwd, env, tests_dir)
        if dropped:
            notes.append(f"{name}: pytest options not used by the grader: {' '.join(dropped)}")
        return TestPlan(mode="pytest", tests_dir=str(tests_dir), test_files=tuple(files), pytest_args=tuple(kept),
                        selective=selective, cwd=run_cwd, env=env, reward_file=reward_file, notes=tuple(notes))
    return _script_plan(script, commands, tests_dir, cwd=cwd, env=env, reward_file=reward_file, name=name,
                        notes=notes)


def _script_plan(script: str, commands: list[Command], tests_dir: Path, *, cwd: str, env: dict[str, str],
                 reward_file: bool, name: str, notes: list[str]) -> TestPlan:
    """The script as written, installs replaced by `:`; the test files its top-level pytest commands name."""
    pytests = [c for c in commands if c.kind == "pytest"]
    others = [c for c in commands if c.kind == "other"]
    why = (f"{len(pytests)} pytest commands" if len(pytests) != 1 else
           f"other commands ({'; '.join(c.text.splitlines()[0][:60] for c in others[:3])})")
    lines = []
    last = 0
    for c in commands:
        if c.kind == "install":
            lines.append(script[last:c.start] + ": # rlvr: install not run at grading time")
            last = c.end
    sanitized = "".join(lines) + script[last:]
    notes.append(f"{name} has {why}: run as a script")
    named: list[str] = []  # the test files its top-level pytest commands name: each of their tests must pass
    for c in pytests:
        try:
            named += _pytest_plan(c, cwd, env, tests_dir)[0]
        except DataError:
            continue
    return TestPlan(mode="script", tests_dir=str(tests_dir), script=sanitized, cwd=cwd, env=env,
                    test_files=tuple(dict.fromkeys(named)), reward_file=reward_file, notes=tuple(notes))
