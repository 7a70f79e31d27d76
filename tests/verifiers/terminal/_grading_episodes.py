"""Terminal episodes for the grading tests: run shell commands, submit, read the verdict.

Shared by the cheat catalogs in this folder (`from _grading_episodes import ...`: pytest prepends the
test file's folder to `sys.path`).
"""

from __future__ import annotations

from pathlib import Path

from rlvr.environments.multi_turn import tool_call_message


def episode(env, task_id: str, commands: list[str]):
    task = next(t for t in env.tasks if t.id == task_id)
    env.reset_sync(task)
    for i, command in enumerate(commands):
        assert not env.step_sync(tool_call_message("run", {"command": command}, call_id=f"c{i}")).terminated
    final = env.step_sync(tool_call_message("submit", {"answer": ""}, call_id="s"))
    assert final.verdict is not None
    return final.verdict


def incorrect(verdict) -> None:
    assert verdict.status == "incorrect", verdict.detail
    assert verdict.reward == 0.0


def harbor_task(root: Path, name: str, test_sh: str, files: dict[str, str], solve: str) -> None:
    """A Harbor task directory `root/name` whose agent must make /app/hello.sh print `hello`."""
    task = root / name
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    (task / "instruction.md").write_text("Make /app/hello.sh print exactly `hello`.\n")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 30.0\n")
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n"
                                                     "RUN printf 'echo hallo\\n' > /app/hello.sh\n")
    (task / "tests" / "test.sh").write_text(test_sh)
    for rel, text in files.items():
        (task / "tests" / rel).write_text(text)
    (task / "solution" / "solve.sh").write_text(solve)
