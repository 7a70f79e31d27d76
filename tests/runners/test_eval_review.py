"""Review regressions for `rlvr eval`: error rows round-trip, broken episodes are rerun on resume."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rlvr.environments.registry import make
from rlvr.runners.cli import app
from rlvr.runners.eval import read_trajectories, score_file

runner = CliRunner()
ARGS = {"task": "basic_arithmetic", "size": 4, "scoring": "inline"}
ENV = ["--env", "math/reasoning-gym-v1", *[x for k, v in ARGS.items() for x in ("-a", f"{k}={v}")]]


def _script(path: Path, count: int) -> None:
    env = make("math/reasoning-gym-v1", **ARGS)
    try:
        rows = [{"task_id": t.id, "actions": [env.reference_actions(t)[0].content]} for t in env.tasks[:count]]
    finally:
        env.close()
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_error_rows_are_readable_and_broken_episodes_rerun(tmp_path: Path) -> None:
    script, out = tmp_path / "script.jsonl", tmp_path / "out.jsonl"
    _script(script, 1)  # tasks 2-4 have no actions: their episodes break (error verdict, reward None)
    result = runner.invoke(app, ["eval", *ENV, "--policy", f"script:{script}", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(read_trajectories(out))  # an error verdict (reward None) must survive the JSONL round trip
    broken = [t for t in rows if t.error]
    assert len(rows) == 8 and len(broken) == 6
    assert all(t.verdict is not None and t.verdict.status == "error" and t.verdict.reward is None for t in broken)
    stats = score_file(out)
    assert stats.errors == 6 and stats.pass_at(1) == (1.0, 1)

    _script(script, 4)  # the "server" is back: a rerun redoes the broken episodes only, without duplicates
    result = runner.invoke(app, ["eval", *ENV, "--policy", f"script:{script}", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 / 6" in result.output
    rows = list(read_trajectories(out))
    assert sorted((t.task_id, t.info["sample"]) for t in rows) == sorted({(t.task_id, t.info["sample"]) for t in rows})
    assert len(rows) == 8 and not any(t.error for t in rows)
    assert score_file(out).pass_at(2) == (1.0, 4)
