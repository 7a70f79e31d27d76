"""`reward_curve.csv` rows of an OpenRLHF run, read from what OpenRLHF 0.11's own `TensorboardLogger` writes.

The status dict has the keys `PPOTrainer.fit` logs (`openrlhf/trainer/ppo_trainer.py`): sample means of
the experience info (reward, rlvr's `rlvr/status/*` extra logs, lengths), the actor's grad norm, the
rollout statistics and the phase timings.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.openrlhf

pytest.importorskip("openrlhf")
pytest.importorskip("tensorboard")


def _status(step: int) -> dict[str, float]:
    correct = 0.25 * step
    return {"reward": correct, "rlvr/status/correct": correct, "rlvr/status/incorrect": 1 - correct,
            "rlvr/status/no_answer": 0.0, "rlvr/status/timeout": 0.0, "rlvr/status/error": 0.0,
            "response_length": 50.0 + step, "total_length": 100.0, "actor_grad_norm": 0.5 * step,
            "rollout/reward_std": 0.1, "rollout/num_samples": 8.0, "timing/generation": 10.0,
            "timing/make_experience": 2.0, "timing/ppo_train": 7.0, "timing/broadcast": 1.0,
            "timing/step_total": 20.0}


def test_openrlhf_curve_rows_come_from_openrlhf_tensorboard_scalars(tmp_path: Path) -> None:
    from openrlhf.utils.logging_utils import TensorboardLogger

    from rlvr.runners.train.logs import read_openrlhf_curve

    args = SimpleNamespace(logger=SimpleNamespace(tensorboard_dir=str(tmp_path / "tb"),
                                                  wandb=SimpleNamespace(run_name="run")))
    logger = TensorboardLogger(args)
    for step in (1, 2):
        logger.log_train(step, {**_status(step), "generated_samples": ["text", 1.0]})
    logger.close()

    rows = read_openrlhf_curve(sys.executable, tmp_path / "tb")
    assert [r["step"] for r in rows] == [1.0, 2.0]
    first, second = rows
    assert (first["reward"], first["correct"], first["incorrect"]) == (0.25, 0.25, 0.75)
    assert (second["elapsed_s"], second["step_s"]) == (40.0, 20.0)
    assert (first["num_tokens"], second["num_tokens"], first["tokens_per_s"]) == (800.0, 1600.0, 40.0)
    assert (first["completion_length"], second["grad_norm"], first["reward_std"]) == (51.0, 1.0, pytest.approx(0.1))
