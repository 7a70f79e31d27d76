"""`rlvr compare --backends trl,...` end to end in the TRL venv: a tiny model trains 2 steps on CPU.

The parity records are built for the compared env with the tiny model's (SmolLM2) tokenizer and replayed
through rlvr's TRL adapters in a subprocess; a backend not installed here is reported as unavailable.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.trl
pytest.importorskip("trl")
pytest.importorskip("matplotlib")

from rlvr.runners.cli import app  # noqa: E402

EASY = '{"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1, "operators": ["+", "-"]}'


def test_compare_trains_trl_and_writes_report_and_summary(tiny_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, [
        "compare", "--env", "math/reasoning-gym-v1", "-a", "size=16", "-a", f"config={EASY}",
        "--backends", "trl,verl", "--trl-python", sys.executable, "--verl-python", sys.executable,
        "--model", str(tiny_dir), "--steps", "2", "--n-tasks", "1", "-o", str(out),
        "--trl-arg", "max_completion_length=8", "--trl-arg", "num_generations=2",
        "--trl-arg", "per_device_train_batch_size=4"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    trl, verl = summary["backends"]
    assert trl["status"] == "trained" and trl["probe"]["backend"]
    assert trl["train"]["steps"] == 2 and len(trl["train"]["curve"]) == 2 and trl["train"]["exit_code"] == 0
    assert trl["train"]["tokens_per_s"] > 0 and trl["train"]["wall_s"] > 0
    assert trl["parity"]["records"] == 5 and trl["parity"]["agree"] == 5 and trl["parity"]["mismatches"] == []
    assert {r["status"] for r in summary["records"]} == {"correct", "incorrect", "no_answer", "error"}
    assert (out / "trl" / "reward_curve.csv").is_file() and (out / "trl.log").read_text()
    if importlib.util.find_spec("verl") is None:
        assert verl["status"] == "unavailable" and "verl does not import" in verl["reason"]
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 4 and "rlvr compare: math/reasoning-gym-v1" in page
