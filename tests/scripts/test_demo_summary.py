"""scripts/demo_summary.py refuses held-out sets that repeat a question or share one with the training dataset,
and summarises a disjoint one (the demo's own split arguments)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rlvr
from rlvr.environments.math import EASY_ARITHMETIC

ROOT = Path(__file__).resolve().parents[2]
TRAIN_ARGS = {"task": "basic_arithmetic", "split": "train", "seed": 0, "size": 160, "config": EASY_ARITHMETIC}


def _questions(**kwargs: object) -> list[str]:
    env = rlvr.make("math/reasoning-gym-v1", **kwargs)
    try:
        return [t.prompt[-1].content for t in env.tasks]
    finally:
        env.close()


def _run(out: Path, held: list[str]) -> subprocess.CompletedProcess[str]:
    rows = [{"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": "x"}],
             "verdict": {"status": "correct" if i % 2 else "incorrect"}} for i, q in enumerate(held)]
    for name in ("eval_before.jsonl", "eval_after.jsonl"):
        (out / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "train").mkdir(exist_ok=True)
    (out / "train" / "reward_curve.csv").write_text("step,reward\n1,0.25\n2,0.5\n")
    (out / "phases.tsv").write_text("setup\t3\ntrain\t9\n")
    return subprocess.run([sys.executable, str(ROOT / "scripts/demo_summary.py"), str(out), "12",
                           "--train-env", "math/reasoning-gym-v1", "--train-env-args", json.dumps(TRAIN_ARGS)],
                          capture_output=True, text=True, timeout=300)


def test_a_disjoint_heldout_split_is_summarised(tmp_path: Path) -> None:
    held = _questions(task="basic_arithmetic", split="test", seed=12345, size=30, config=EASY_ARITHMETIC)
    proc = _run(tmp_path, held)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["heldout_tasks"] == 30 and summary["heldout_disjoint_from_training"] is True
    assert "30 distinct tasks, none a training task" in proc.stdout


@pytest.mark.parametrize("problem", ["shared", "repeated"])
def test_a_heldout_set_that_leaks_or_repeats_is_refused(tmp_path: Path, problem: str) -> None:
    held = _questions(task="basic_arithmetic", split="test", seed=12345, size=10, config=EASY_ARITHMETIC)
    if problem == "shared":
        held.append(_questions(**TRAIN_ARGS)[7])
    else:
        held.append(held[3])
    proc = _run(tmp_path, held)
    assert proc.returncode == 1
    assert ("training questions too" if problem == "shared" else "appears twice") in proc.stderr
    assert not (tmp_path / "summary.json").exists()
