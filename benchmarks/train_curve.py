"""Evidence of real learning: GRPO on SmolLM2-135M-Instruct, CPU only, through `rlvr train`'s code path.

Task: `math/reasoning-gym-v1`, `basic_arithmetic` with two single-digit terms and + / -
(`rlvr.environments.math.EASY_ARITHMETIC`), scored by the math verifier (\\boxed{} or last number).
Training: `rlvr.runners.train.trl.train_trl` (TRL GRPOTrainer) for STEPS steps, 16 samples per
step (2 prompts x 8 generations), <= 64 completion tokens, lr 1e-5 constant, beta 0.
Held-out: HELDOUT greedy problems from another seed, excluding questions in the training rows,
scored before and after training.

Writes benchmarks/results/train_curve.{csv,png,md}. Run (~15-40 min on 2 CPU cores):

    RLVR_CACHE=/tmp/rlvrcache python benchmarks/train_curve.py [--steps 60]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import rlvr
from rlvr.environments.math import EASY_ARITHMETIC
from rlvr.runners.models import prepare_smollm2
from rlvr.runners.train.config import TrainConfig
from rlvr.runners.train.trl import train_trl

RESULTS = Path(__file__).resolve().parent / "results"
ENV_ID = "math/reasoning-gym-v1"
TRAIN_ENV_ARGS: dict[str, Any] = {"task": "basic_arithmetic", "size": 2000, "seed": 0, "config": dict(EASY_ARITHMETIC)}
TRAINER_ARGS: dict[str, Any] = {
    "num_generations": 8,
    "per_device_train_batch_size": 16,
    "max_completion_length": 64,
    "learning_rate": 1e-5,
    "lr_scheduler_type": "constant",
    "beta": 0.0,
    "seed": 0,
}


def heldout_tasks(n: int, exclude: set[str]) -> tuple[Any, list[Any]]:
    env = rlvr.make(ENV_ID, **{**TRAIN_ENV_ARGS, "seed": 12345, "size": 2000})
    tasks = [t for t in env.tasks if t.prompt[-1].content not in exclude][:n]
    return env, tasks


def greedy_accuracy(model_dir: str | Path, env: Any, tasks: list[Any], batch: int = 25) -> tuple[float, float]:
    """Greedy-decode each task (<= 64 tokens) and return (accuracy, seconds)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.monotonic()
    tok = AutoTokenizer.from_pretrained(str(model_dir), padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
    texts: list[str] = []
    for i in range(0, len(tasks), batch):
        chats = [[{"role": m.role, "content": m.content} for m in t.prompt] for t in tasks[i:i + batch]]
        enc = tok.apply_chat_template(chats, add_generation_prompt=True, return_tensors="pt", padding=True,
                                      return_dict=True)
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=64, do_sample=False, pad_token_id=tok.pad_token_id)
        texts += tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    verdicts = env.verifier.verify_batch([(x, t.reference) for x, t in zip(texts, tasks, strict=True)], workers=2)
    for t, x, v in list(zip(tasks, texts, verdicts, strict=True))[:3]:
        print(f"  {t.prompt[-1].content!r} -> {x[-80:]!r} [{v.status}]", file=sys.stderr)
    return sum(v.is_correct for v in verdicts) / len(verdicts), time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--heldout", type=int, default=50)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rlvr-train-curve"))
    args = parser.parse_args()

    t0 = time.monotonic()
    model_dir = prepare_smollm2()
    prepare_s = time.monotonic() - t0
    prompts_per_step = TRAINER_ARGS["per_device_train_batch_size"] // TRAINER_ARGS["num_generations"]
    train_env = rlvr.make(ENV_ID, **TRAIN_ENV_ARGS)
    seen = {train_env.tasks[i].prompt[-1].content for i in range(prompts_per_step * args.steps)}
    train_env.close()
    eval_env, tasks = heldout_tasks(args.heldout, seen)
    acc_before, eval_s = greedy_accuracy(model_dir, eval_env, tasks)
    print(f"held-out accuracy before: {acc_before:.2%} ({eval_s:.0f} s)", file=sys.stderr)

    if args.work.exists():
        shutil.rmtree(args.work)
    result = train_trl(TrainConfig(env=ENV_ID, env_args=TRAIN_ENV_ARGS, model=str(model_dir), steps=args.steps,
                                   output=args.work, trainer_args=TRAINER_ARGS))
    acc_after, _ = greedy_accuracy(result.model_dir, eval_env, tasks)
    print(f"held-out accuracy after: {acc_after:.2%}", file=sys.stderr)
    eval_env.close()

    RESULTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(result.curve_csv, RESULTS / "train_curve.csv")
    shutil.copy(result.curve_png, RESULTS / "train_curve.png")
    logs = [h for h in result.log_history if "reward" in h]
    write_report(args, logs, result.wall_s, prepare_s, acc_before, acc_after, len(tasks))


def write_report(args: Any, logs: list[dict[str, Any]], wall_s: float, prepare_s: float,
                 acc_before: float, acc_after: float, n_heldout: int) -> None:
    rewards = [h["reward"] for h in logs]
    first, last = statistics.mean(rewards[:10]), statistics.mean(rewards[-10:])
    step_times = [h["step_time"] for h in logs if "step_time" in h]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rows = [
        ("model", "SmolLM2-135M-Instruct (embedded GGUF → fp32, `prepare_smollm2`)"),
        ("task", f"`{ENV_ID}` basic_arithmetic, `EASY_ARITHMETIC` (2 single-digit terms, + and -)"),
        ("trainer", "TRL GRPOTrainer via `rlvr.runners.train.trl.train_trl`, CPU (2 cores, shared)"),
        ("settings", "16 samples/step (2 prompts × 8), ≤64 tokens, lr 1e-5 constant, beta 0; "
                     f"`{json.dumps(TRAINER_ARGS)}`"),
        ("steps", str(len(logs))),
        ("training wall time", f"{wall_s / 60:.1f} min (median step {statistics.median(step_times):.1f} s)"),
        ("model preparation", f"{prepare_s:.0f} s (0 when cached)"),
        ("mean reward, first 10 steps", f"{first:.3f}"),
        ("mean reward, last 10 steps", f"{last:.3f}"),
        (f"held-out greedy accuracy ({n_heldout} unseen problems), before", f"{acc_before:.0%}"),
        (f"held-out greedy accuracy ({n_heldout} unseen problems), after", f"{acc_after:.0%}"),
        ("peak RSS (trainer process / largest verifier worker)", f"{rss / 1024:.2f} GiB / {rss_children:.0f} MiB"),
    ]
    verdict = "PASS" if last > first else "FAIL"
    lines = [
        "# GRPO learning curve on CPU (benchmarks/train_curve.py)", "",
        f"Result: **{verdict}** — last-10 mean reward {last:.3f} vs first-10 {first:.3f}.", "",
        "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows], "",
        "![reward curve](train_curve.png)", "",
        "Per-step data: `train_curve.csv` (reward mean/std, verdict-status fractions, completion length, "
        "elapsed seconds, peak RSS). Held-out problems come from reasoning-gym seed 12345 and exclude every "
        "question of the training rows; the problem space is small (10 × 10 × 2), so this measures "
        "generalisation to unseen prompts, not to unseen operand ranges.", "",
        f"Reproduce: `RLVR_CACHE=/tmp/rlvrcache python benchmarks/train_curve.py --steps {args.steps}`", "",
    ]
    (RESULTS / "train_curve.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
