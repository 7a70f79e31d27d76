"""`rlvr eval`, `rlvr check` and `rlvr verify` on the terminal environments, through the real CLI.

Every shipped Terminal-Bench task: the oracle policy (replaying solution.sh) scores correct, the
no-op policy scores none; `script:PATH` replays given commands.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.environments.terminal_data import TBENCH_SUITE
from rlvr.runners.cli import app
from rlvr.verifiers.terminal import find_task_dirs

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")
runner = CliRunner()
HARBOR = Path(__file__).resolve().parents[1] / "data" / "terminal" / "harbor"
TASKS = sorted(p.name for p in find_task_dirs(TBENCH_SUITE))


def _rows(path: Path) -> dict[str, dict]:
    return {row["task_id"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_oracle_scores_every_shipped_task_correct(tmp_path):
    out = tmp_path / "oracle.jsonl"
    result = runner.invoke(app, ["eval", "--env", "terminal/tbench-v1", "--policy", "oracle", "-o", str(out),
                                 "--concurrency", "4"])
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert sorted(rows) == TASKS and len(TASKS) >= 15
    wrong = {k: (r["verdict"]["status"], r["verdict"]["detail"][:300]) for k, r in rows.items()
             if r["verdict"]["status"] != "correct"}
    assert not wrong
    assert "1.000" in result.output


def test_noop_scores_none(tmp_path):
    out = tmp_path / "noop.jsonl"
    result = runner.invoke(app, ["eval", "--env", "terminal/tbench-v1", "--policy", "noop", "-o", str(out),
                                 "--concurrency", "4"])
    assert result.exit_code == 0, result.output
    statuses = {k: r["verdict"]["status"] for k, r in _rows(out).items()}
    assert sorted(statuses) == TASKS and set(statuses.values()) == {"incorrect"}


def test_script_policy_replays_given_commands(tmp_path):
    fence = "`" * 3
    script = tmp_path / "script.jsonl"
    rows = [
        {"task_id": "git-recover-deleted-file", "actions": [
            f"Let me look.\n{fence}bash\ncd /app/repo && git log --oneline --stat | head -30\n{fence}",
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "run", "arguments": json.dumps({"command": "cd /app/repo && f=$(git log --diff-filter=D "
                "--name-only --format= | head -1) && git checkout \"$(git rev-list -n 1 HEAD -- \"$f\")^\" -- "
                "\"$f\" && git -c user.name=a -c user.email=a@b commit -qm \"Restore $f\" && git log --oneline "
                "| head -3"})}}]},
            "<submit></submit>"]},
        {"task_id": "dedupe-emails", "actions": ["I don't know how to do this."]},
    ]
    script.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "script-out.jsonl"
    result = runner.invoke(app, ["eval", "--env", "terminal/tbench-v1", "-a", 'task_ids=["git-recover-deleted-file",'
                                 '"dedupe-emails"]', "--policy", f"script:{script}", "-o", str(out)])
    assert result.exit_code == 0, result.output
    got = _rows(out)
    recovered = got["git-recover-deleted-file"]
    assert recovered["verdict"]["status"] == "correct", recovered["verdict"]["detail"]
    tool_turns = [m for m in recovered["messages"] if m["role"] in ("tool", "user") and "exit code 0" in m["content"]]
    assert len(tool_turns) == 2  # the fenced command and the native call both ran in the sandbox
    assert got["dedupe-emails"]["verdict"]["status"] == "incorrect"


def test_harbor_oracle_and_noop(tmp_path):
    for policy, want in (("oracle", "correct"), ("noop", "incorrect")):
        out = tmp_path / f"{policy}.jsonl"
        result = runner.invoke(app, ["eval", "--env", "terminal/harbor-v1", "-a", f"tasks_dir={HARBOR}",
                                     "--policy", policy, "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert {r["verdict"]["status"] for r in _rows(out).values()} == {want}, policy


def test_check_reports_placement(tmp_path):
    from tests.verifiers.terminal.test_tasks import make_tbench_task

    make_tbench_task(tmp_path, "needs-node", "FROM node:20\nWORKDIR /app\n")
    make_tbench_task(tmp_path, "plain", "FROM ubuntu:24.04\nWORKDIR /app\n")
    result = runner.invoke(app, ["check", "terminal/tbench-v1", "-a", f"tasks_dir={tmp_path}", "-n", "1"])
    assert result.exit_code == 0, result.output
    assert "1 tasks run locally" in result.output and "needs-node" in result.output


def test_verify_cli_replays_responses(tmp_path):
    from rlvr.verifiers.terminal import TerminalVerifier

    ref = {"format": "tbench", "task_dir": str(TBENCH_SUITE / "csv-to-json")}
    good = TerminalVerifier().reference_response(ref)
    inp = tmp_path / "rows.jsonl"
    inp.write_text(json.dumps({"response": good, "reference": ref}) + "\n" +
                   json.dumps({"response": "echo '[]' > /app/out.json", "reference": ref}) + "\n")
    out = tmp_path / "verdicts.jsonl"
    result = runner.invoke(app, ["verify", "--verifier", "terminal", str(inp), "-o", str(out), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["verdict"]["status"] for line in out.read_text().splitlines()] == ["correct", "incorrect"]
