"""Tool-use metrics of episodes (`rlvr.core.metrics.EpisodeStats`), from real episodes of a tool env, as
`rlvr eval` and `rlvr synth` report them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from rlvr.core.metrics import EPISODE_METRICS, EpisodeStats, episode_metrics
from rlvr.core.types import Trajectory
from rlvr.runners.cli import app

ENV = ["--env", "math/calculator-arithmetic-v1", "-a", "split=train", "-a", "size=3", "-a", "seed=0",
       "-a", "scoring=inline"]


def _call(expression: str, name: str = "calculator") -> dict[str, Any]:
    arguments = json.dumps({"expression": expression})
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}


SCRIPT = [
    # a malformed Hermes call (arguments not JSON), then a good native call, then the answer: 2 calls, 1 failed, 3 turns
    {"task_id": "calc-train-0-0", "actions": ['<tool_call>{"name": "calculator", "arguments": {172 * 657}</tool_call>',
                                              _call("172 * 657"), "The final answer is \\boxed{113004}."]},
    # no tool: 0 calls, 1 turn (a wrong answer)
    {"task_id": "calc-train-0-1", "actions": ["\\boxed{1}"]},
    # an unknown tool, then the answer: 1 call, 1 failed, 2 turns
    {"task_id": "calc-train-0-2", "actions": [_call("918 * 836 - 172", name="abacus"),
                                              "The final answer is \\boxed{767276}."]},
]
EXPECTED = {"tool_call_rate": 2 / 3, "tool_calls": 1.0, "tool_errors": 2 / 3, "turns": 2.0}


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in SCRIPT))
    return path


def _close(got: dict[str, float], want: dict[str, float]) -> bool:
    return set(got) == set(want) and all(abs(got[k] - want[k]) < 1e-9 for k in want)


def test_eval_reports_the_tool_use_of_the_episodes_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "eval.jsonl"
    result = CliRunner().invoke(app, ["eval", *ENV, "--policy", f"script:{_script(tmp_path)}", "-o", str(out)],
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    trajectories = {t.task_id: t for t in map(Trajectory.model_validate_json, out.read_text().splitlines())}
    per_episode = {task: episode_metrics([t]) for task, t in trajectories.items()}
    assert per_episode == {
        "calc-train-0-0": {"tool_call_rate": 1.0, "tool_calls": 2.0, "tool_errors": 1.0, "turns": 3.0},
        "calc-train-0-1": {"tool_call_rate": 0.0, "tool_calls": 0.0, "tool_errors": 0.0, "turns": 1.0},
        "calc-train-0-2": {"tool_call_rate": 1.0, "tool_calls": 1.0, "tool_errors": 1.0, "turns": 2.0}}
    # the counts are the environment's: a malformed call and an unknown tool are answered with an error
    first = trajectories["calc-train-0-0"].messages
    assert [m.role for m in first] == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert first[3].content.count("Error:") == 1 and first[5].content == "113004"
    assert trajectories["calc-train-0-2"].messages[3].content.startswith("Error: unknown tool 'abacus'")
    assert _close(episode_metrics(trajectories.values()), EXPECTED)
    assert re.search(r"tool-call rate \(episodes with a call\)\s*│\s*0\.667 ", result.output)
    assert re.search(r"failed tool calls / episode\s*│\s*0\.667 ", result.output)
    assert re.search(r"model turns / episode\s*│\s*2\.00 ", result.output)


def test_synth_reports_the_tool_use_of_every_sample(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    result = CliRunner().invoke(app, ["synth", *ENV, "--policy", f"script:{_script(tmp_path)}", "-n", "1", "-o",
                                      str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert _close(report["episodes"], EXPECTED)
    assert "0.667 / 0.667" in result.output and "Tool use" in (out / "report.html").read_text()


def test_no_episodes_give_zeros_and_absent_counts_are_zero() -> None:
    assert EpisodeStats().metrics() == dict.fromkeys(EPISODE_METRICS, 0.0)
    single_turn = Trajectory(task_id="t", messages=[], info={"turns": 1})
    assert episode_metrics([single_turn]) == {"tool_call_rate": 0.0, "tool_calls": 0.0, "tool_errors": 0.0,
                                              "turns": 1.0}
