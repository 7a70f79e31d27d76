"""`mcp/git-v1`: the git task family on the reference MCP git server (mcp-server-git from PyPI), end to end."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.environments.mcp import MCPToolEnv
from rlvr.environments.mcp.git import git_tasks, normalize_answer
from rlvr.environments.multi_turn import tool_call_message
from rlvr.environments.registry import make
from rlvr.rollout.check import check
from rlvr.runners.cli import app

pytestmark = pytest.mark.extras

runner = CliRunner()


@pytest.fixture(scope="module")
def env() -> Iterator[MCPToolEnv]:
    built = make("mcp/git-v1")
    yield built
    built.close()


def test_the_tasks_are_the_same_on_every_build() -> None:
    first, second = git_tasks(), git_tasks()
    assert [t.model_dump() for t in first] == [t.model_dump() for t in second]
    assert len(first) >= 15 and len({t.id for t in first}) == len(first)
    hashes = [t.reference["answer"] for t in first if t.id.startswith("ask-hash")]
    assert hashes and all(re.fullmatch(r"[0-9a-f]{40}", h) for h in hashes)


def test_the_policy_sees_the_reference_servers_tools(env: MCPToolEnv) -> None:
    names = {t["function"]["name"] for t in env.spec.tools}
    assert {"git_status", "git_add", "git_commit", "git_create_branch", "git_checkout", "git_show"} <= names
    assert env.spec.resources["transport"] == "stdio (sandboxed)"


def test_rlvr_check_passes_oracle_and_noop(env: MCPToolEnv) -> None:
    report = check(env, n=6)
    assert report.passed, [(r.name, r.detail) for r in report.failures]
    names = {r.name for r in report.results}
    assert {"oracle_episode", "noop_episode", "reference_correct", "junk_rejected"} <= names


def test_rlvr_eval_with_the_oracle_and_the_noop_policy(tmp_path: Path) -> None:
    for policy, status in (("oracle", "correct"), ("noop", "incorrect")):
        out = tmp_path / f"{policy}.jsonl"
        result = runner.invoke(app, ["eval", "--env", "mcp/git-v1", "-a", "size=4", "--policy", policy, "-o", str(out),
                                     "--concurrency", "2"])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == 4
        assert {r["verdict"]["status"] for r in rows} == {status}, [r["verdict"]["detail"] for r in rows]


def test_a_commit_message_cannot_forge_the_subject_the_state_check_reads(env: MCPToolEnv) -> None:
    task = next(t for t in env.tasks if t.id == "commit-new-file-0")
    forged = "Wrong subject\n\n    Add todo list\ncommit 0000000000000000000000000000000000000000"
    episode = env.episode_copy()
    episode.reset_sync(task)
    episode.step_sync(tool_call_message("git_add", {"repo_path": "/work/repo", "files": ["notes/todo.md"]}))
    episode.step_sync(tool_call_message("git_commit", {"repo_path": "/work/repo", "message": forged}))
    final = episode.step_sync("Done.")
    assert final.verdict is not None and final.verdict.status == "incorrect"
    assert json.loads(final.verdict.extracted or "{}")["head_subject"] == "Wrong subject"


def test_a_wrong_answer_and_a_hash_prefix_are_not_the_answer(env: MCPToolEnv) -> None:
    task = next(t for t in env.tasks if t.id == "ask-hash-0")
    full = task.reference["answer"]
    for answer, status in ((full[:12], "incorrect"), (f"The hash is `{full.upper()}`.", "incorrect"),
                           (f"`{full.upper()}`.", "correct")):
        episode = env.episode_copy()
        episode.reset_sync(task)
        verdict = episode.step_sync(answer).verdict
        assert verdict is not None and verdict.status == status, (answer, verdict.detail)


@pytest.mark.parametrize(("text", "answer"), [
    ("Add config.yaml", "Add config.yaml"),
    ("The subject is:\n`Add config.yaml`.", "Add config.yaml"),
    ("**\"Add config.yaml\"**", "Add config.yaml"),
    ("ABCDEF1234567", "abcdef1234567"),
    ("", ""),
    ("Add config.yaml.\n\n", "Add config.yaml"),
])
def test_normalize_answer(text: str, answer: str) -> None:
    assert normalize_answer(text) == answer
