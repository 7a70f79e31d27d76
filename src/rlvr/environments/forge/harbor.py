"""A validated bug written as a Harbor task directory (`rlvr forge` step 4), plus its `tasks.jsonl` row.

Harbor's task layout (PyPI `harbor`, `harbor/models/task/paths.py`; rlvr reads it in
`rlvr.verifiers.terminal.tasks.load_harbor`), so `terminal/harbor-v1`, `swe/forge-v1`, Harbor
itself and TRL's Harbor integration run the same directory:

```
TASK_ID/
  instruction.md           the problem statement: a CI-failure report (failing test ids, first lines
                           of their errors), never the fix
  task.toml                [metadata] (project, mutator, counts), [verifier] / [agent] timeouts
  environment/Dockerfile   python:3.X-slim, the workspace copied to /app, PYTHONPATH, `git init` + one
                           commit of the buggy tree (no history, no objects of the original)
  environment/workspace/   the project with the bug, its tests left out
  tests/test.sh            pytest on the task's FAIL_TO_PASS and PASS_TO_PASS node ids, named one by
                           one (each must run and pass), reward 1/0 in /logs/verifier/reward.txt
  tests/...                the project's tests folder (withheld from the agent)
  solution/fix.patch       the reverse patch (buggy -> original)
  solution/solve.sh        `git apply` of it: the oracle
```

Test ids on the command line are single-quoted and restricted to a safe alphabet (`SAFE_ID`): ids
with quotes, `$`, backslashes or control characters in their parameters are never a task's tests.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.environments.forge.mutators import Mutant
from rlvr.environments.forge.project import Project

__all__ = ["TaskRecord"]

SAFE_ID = re.compile(r"^[A-Za-z0-9_./-]+(::[A-Za-z_][A-Za-z0-9_]*)+(\[[^\]\['\"$`\\\x00-\x1f]*\])?$")
"""A test id the task's test.sh may name, single-quoted: no quotes, `$`, backquotes, backslashes, control characters
or brackets inside its parameters (spaces and `:` are fine; `::` is not, see `safe_ids`)."""
MAX_LISTED = 10
"""Failing tests the problem statement lists (the others are counted)."""


def safe_ids(ids: Sequence[str]) -> list[str]:
    """The ids of `ids` that `SAFE_ID` allows and whose parameters hold no `::`, in order."""
    return [i for i in ids if SAFE_ID.match(i) and "::" not in i.partition("[")[2]]


class TaskRecord(BaseModel):
    """One `tasks.jsonl` row: what a forge task is, where it came from, what grades it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    project: str = Field(description="Distribution name.")
    version: str
    mutator: str = Field(description="The bug family (`rlvr.environments.forge.mutators`).")
    file: str = Field(description="The changed file, relative to the project root.")
    function: str = Field(description="The changed function's qualified name.")
    line: int = Field(description="The changed line of the original file.")
    note: str = Field(description="What changed (for analysis; never shown to the agent).")
    fail_to_pass: list[str] = Field(description="Tests (ids relative to tests/) that fail with the bug and pass "
                                    "once it is fixed.")
    pass_to_pass: list[str] = Field(description="Tests the grading runs that must keep passing.")
    diff_hash: str = Field(description="Hash of the buggy file's syntax tree: equal hashes are the same bug.")
    validate_s: float = Field(default=0.0, description="Seconds spent validating this candidate.")
    grade_s: dict[str, float] = Field(default_factory=dict, description="Seconds of the final gradings (oracle, "
                                      "no-op).")
    statement: str = Field(default="ci-report", description="What wrote the problem statement: 'ci-report' (no "
                           "model) or 'issue' (the issue writer).")
    statement_note: str = Field(default="", description="Why the issue writer's text was not used, when it was not.")


def task_id(project: Project, mutant: Mutant) -> str:
    """`<project>-<mutator>-<hash>`: stable for the same bug of the same project."""
    name = re.sub(r"[^a-z0-9]+", "-", project.name.lower()).strip("-")
    return f"{name}-{mutant.mutator}-{mutant.key[:10]}"


def tests_path(project: Project, test_id: str) -> str:
    """A test id as the project names it (its path from the project root)."""
    return f"{project.tests_dir}/{test_id}" if project.tests_dir else test_id


def instruction_text(project: Project, fail_to_pass: Sequence[str], messages: dict[str, str]) -> str:
    """The problem statement: a CI-failure report of the failing tests (ids, first error lines), never the fix."""
    where = f"`{project.import_root}/`" if project.import_root else "the project's folders"
    lines = [
        f"# Failing tests in {project.name} {project.version}".rstrip(),
        "",
        f"The continuous-integration run of `{project.name}` fails: {len(fail_to_pass)} test(s) that used to pass "
        "fail now. The project's source is in `/app` (a git repository; its code lives in "
        f"{where}). Its test suite is not in the workspace: the failing tests are listed below with the first "
        "line of their errors.",
        "",
        "Find the bug in the project's source code and fix it, so that these tests pass again without breaking "
        "the others. Do not add, change or delete tests or test configuration. When you are done, say so.",
        "",
        "## Failing tests",
        "",
    ]
    for test_id in list(fail_to_pass)[:MAX_LISTED]:
        lines.append(f"- `{tests_path(project, test_id)}`")
        message = (messages.get(test_id) or "").strip()
        if message:
            lines += ["  ```", *(f"  {m}" for m in message.splitlines()[:3]), "  ```"]
    if len(fail_to_pass) > MAX_LISTED:
        lines.append(f"- ... and {len(fail_to_pass) - MAX_LISTED} more")
    return "\n".join(lines) + "\n"


def _patch(path: str, before: str, after: str) -> str:
    diff = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}", n=3)
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _task_toml(project: Project, mutant: Mutant, f2p: int, p2p: int, test_timeout_s: float,
               agent_timeout_s: float, statement: str) -> str:
    meta: dict[str, Any] = {"author_name": "rlvr forge", "category": "debugging", "difficulty": "medium",
                            "tags": ["swe", "python", "forge", project.name], "forge_project": project.name,
                            "forge_version": project.version, "forge_mutator": mutant.mutator,
                            "forge_fail_to_pass": f2p, "forge_pass_to_pass": p2p, "forge_statement": statement}
    lines = ['version = "1.0"', "", "[metadata]"]
    for key, value in meta.items():
        lines.append(f"{key} = {json.dumps(value) if not isinstance(value, str) else _toml_string(value)}")
    lines += ["", "[verifier]", f"timeout_sec = {float(test_timeout_s)}", "", "[agent]",
              f"timeout_sec = {float(agent_timeout_s)}", "", "[environment]", "build_timeout_sec = 600.0", "cpus = 1",
              "memory_mb = 2048", ""]
    return "\n".join(lines)


def _dockerfile(project: Project, python_version: str) -> str:
    pythonpath = f"/app/{project.import_root}" if project.import_root else "/app"
    message = f"{project.name} {project.version}".strip()
    return (f"FROM python:{python_version}-slim\n"
            "RUN apt-get update && apt-get install -y --no-install-recommends git\n"
            "WORKDIR /app\n"
            "COPY workspace/ /app/\n"
            f"ENV PYTHONPATH={pythonpath}\n"
            "RUN git init -q && git add -A && git -c user.name=rlvr-forge -c user.email=forge@rlvr.invalid "
            f"commit -q -m {json.dumps(message)}\n")


def _test_sh(ids: Sequence[str], pytest_version: str) -> str:
    named = " \\\n  ".join(f"'/tests/{i}'" for i in ids)
    return ("#!/bin/bash\n"
            "# rlvr forge: the task's FAIL_TO_PASS and PASS_TO_PASS tests, each named (each must run and pass)\n"
            f"pip install -q 'pytest=={pytest_version}'\n"
            "cd /app\n"
            f"python3 -m pytest -p no:cacheprovider --rootdir /tests \\\n  {named}\n"
            "if [ $? -eq 0 ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n"
            "  echo 0 > /logs/verifier/reward.txt\nfi\n")


def write_task(root: Path, project: Project, mutant: Mutant, fail_to_pass: Sequence[str],
               pass_to_pass: Sequence[str], messages: dict[str, str], *, python_version: str, pytest_version: str,
               test_timeout_s: float = 600.0, agent_timeout_s: float = 1800.0, instruction: str | None = None,
               statement: str = "ci-report") -> Path:
    """Write the task directory `root` (replaced if present) for `mutant` (module docstring for the layout).

    Args:
        root: the task directory to write.
        project: the project.
        mutant: the validated bug.
        fail_to_pass: FAIL_TO_PASS ids (relative to the tests folder, `SAFE_ID`s).
        pass_to_pass: PASS_TO_PASS ids the grading runs (`SAFE_ID`s).
        messages: FAIL_TO_PASS id -> first line of its error (for the problem statement).
        python_version: `3.X`, the image's Python (the sandbox's).
        pytest_version: the pytest version test.sh installs in an image (the grader's).
        test_timeout_s: the grading budget, seconds.
        agent_timeout_s: the agent's budget, seconds.
        instruction: the problem statement (None: `instruction_text`, the CI-failure report).
        statement: what wrote it, recorded in task.toml: 'ci-report' or 'issue'.

    Returns:
        `root`.
    """
    if root.exists():
        shutil.rmtree(root)
    env, tests, solution = root / "environment", root / "tests", root / "solution"
    workspace = env / "workspace"
    for folder in (workspace, tests, solution):
        folder.mkdir(parents=True)
    for path in project.workspace_files:
        target = workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if path == mutant.path:
            target.write_text(mutant.source, encoding="utf-8")
        else:
            shutil.copyfile(Path(project.root) / path, target)
    for path in (*project.test_files, *project.test_support):
        target = tests / project.tests_name(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(project.root) / path, target)
    (env / "Dockerfile").write_text(_dockerfile(project, python_version))
    (tests / "test.sh").write_text(_test_sh([*fail_to_pass, *pass_to_pass], pytest_version))
    original = project.read(mutant.path).decode("utf-8")
    (solution / "fix.patch").write_text(_patch(mutant.path, mutant.source, original))
    (solution / "solve.sh").write_text("#!/bin/bash\n# rlvr forge oracle: the reverse patch of the bug\n"
                                       "cd /app\ngit apply --whitespace=nowarn /solution/fix.patch\n")
    (root / "instruction.md").write_text(instruction or instruction_text(project, fail_to_pass, messages))
    (root / "task.toml").write_text(_task_toml(project, mutant, len(fail_to_pass), len(pass_to_pass), test_timeout_s,
                                               agent_timeout_s, statement))
    for item in root.rglob("*"):
        item.chmod(0o755 if item.is_dir() or item.suffix == ".sh" else 0o644)
    root.chmod(0o755)
    return root
