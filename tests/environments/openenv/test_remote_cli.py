"""`rlvr eval` (a script policy) and `rlvr check` over foreign OpenEnv servers through `openenv/remote-v1`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr import check
from rlvr.runners.cli import app
from rlvr.runners.eval import read_trajectories, score_file

pytestmark = pytest.mark.extras

runner = CliRunner()


def _call(message: str, repeat: int) -> dict[str, object]:
    arguments = json.dumps({"message": message, "repeat": repeat})
    call = {"id": "c", "type": "function", "function": {"name": "tool_action", "arguments": arguments}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def test_rlvr_eval_plays_a_foreign_server_with_a_script(tool_url: str, tmp_path: Path) -> None:
    script, out = tmp_path / "script.jsonl", tmp_path / "out.jsonl"
    rows = [{"task_id": "train-0", "actions": [_call("hi", 1), _call("stop", 1)]},  # return 0.5: correct
            {"task_id": "train-1", "actions": [_call("hi", 1), "I am done."]},  # no call ends it, never done
            {"task_id": "custom-2", "actions": [_call("none", 1), _call("stop", 1)]}]  # a None reward: error
    script.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["eval", "--env", "openenv/remote-v1", "-a", f"base_url={tool_url}", "-a", "success_threshold=0.5",
            "--policy", f"script:{script}", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    by_id = {t.task_id: t for t in read_trajectories(out)}
    first = by_id["train-0"]
    assert first.verdict is not None and first.verdict.status == "correct" and first.reward == pytest.approx(0.5)
    assert by_id["train-1"].verdict.status == "incorrect"  # type: ignore[union-attr]
    broken = by_id["custom-2"].verdict
    assert broken is not None and broken.status == "error" and broken.reward is None
    stats = score_file(out)
    assert stats.statuses["error"] == 1 and stats.pass_at(1) == (0.5, 2)  # the masked task is left out


def test_rlvr_check_passes_a_foreign_server_without_references(echo_url: str) -> None:
    report = check("openenv/remote-v1", n=2, env_kwargs={"base_url": echo_url, "num_tasks": 2, "max_turns": 3})
    assert report.passed, report.failures
    results = {r.name: r for r in report.results}
    assert "reference_correct" not in results and results["response_scoring"].detail.startswith("scored by the episode")
    assert results["oracle_episode"].detail == "no reference actions" and results["noop_episode"].items == 2
    result = runner.invoke(app, ["check", "openenv/remote-v1", "-a", f"base_url={echo_url}", "-a", "max_turns=2",
                                 "-n", "2"])
    assert result.exit_code == 0, result.output
