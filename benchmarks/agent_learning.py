"""An agent learns to use a tool (issue 30): base -> SFT -> GRPO per backend on `math/calculator-arithmetic-v1`.

Pipeline, each stage through rlvr's own library path (what the commands a user runs call):

1. synth: `rlvr synth --policy oracle` on the `train` split (seed 0, the forms of `--sft-forms`):
   verified tool-calling demonstrations in sft.jsonl (`run_synth`).
2. base: `rlvr eval` (greedy) of the base model, rendered with the tool-calling template SFT and GRPO
   use (`base_tool/`: the same weights, TRL's qwen2_5 template), on held-out tasks: the `test` split,
   seed 1 (a split no train seed can produce, `rlvr.environments.arithmetic`).
3. sft: `rlvr sft` (`run_sft`) on the first N demonstrations, for each N of `--demos`, then `rlvr eval`
   of each SFT model on the same held-out tasks.
4. grpo: `rlvr train --backend B` (`TrainConfig` + `train_trl` for trl, `run_backend` for verl and
   openrlhf: multi-turn GRPO through each backend's own agent path) from one SFT model
   (`--grpo-from N`) for `--grpo-steps` steps on the train split (seed 2, every form), for each B
   of `--backends`, then `rlvr eval` of each trained model.

Prints one table: stage x held-out accuracy, tool-call rate (episodes with >= 1 call), failed calls
per episode (malformed, unknown tool, bad arguments, tool error: the environment's `tool_errors`),
mean model turns, wall time of the stage, CPU seconds of this process, load average (1 min) at its
start and end. The metrics are `rlvr eval`'s own (`EvalStats`: pass@1 and
`rlvr.core.metrics.EpisodeStats`). Writes `OUT/results.json` (resumable: finished stages are
skipped on a rerun) and, except with `--smoke`, `benchmarks/results/agent_learning.md`.

Run (set-up excluded; minutes depend on the load; veRL/OpenRLHF run in their own venvs):

    source scripts/env.sh; .venvs/trl/bin/python benchmarks/agent_learning.py --demos 64,256 --grpo-steps 10 \\
        --backends trl,verl,openrlhf

`--smoke`: tiny sizes and a tiny random model (`rlvr.runners.models.tiny_model`), 1 SFT and 1 GRPO
step: proves the pipeline end to end in a few minutes, measures nothing about learning.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

ENV = "math/calculator-arithmetic-v1"
RESULTS = Path(__file__).resolve().parent / "results"
BACKENDS = ("trl", "verl", "openrlhf")
TRAINER_ARGS: dict[str, dict[str, Any]] = {
    "trl": {"num_generations": 4, "per_device_train_batch_size": 8, "max_completion_length": 128,
            "learning_rate": 5e-6, "temperature": 1.0},
    "verl": {},
    "openrlhf": {},
}
"""Each backend's trainer arguments (`TrainConfig.trainer_args`); `--trainer-args` replaces a backend's entry."""


def _load() -> float:
    return os.getloadavg()[0]


def _cpu() -> float:
    """CPU seconds this process has used (user + system): a measure the machine's load does not inflate."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def base_tool_model(source: Path, out: Path) -> Path:
    """`source`'s weights (linked, not copied) with the tool-calling template SFT and GRPO render with."""
    from transformers import AutoTokenizer

    from rlvr.adapters.trl.agent import tool_calling_tokenizer

    out.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        if (source / name).is_file():
            (out / name).unlink(missing_ok=True)
            (out / name).symlink_to(source.resolve() / name)
    tokenizer, _ = tool_calling_tokenizer(AutoTokenizer.from_pretrained(str(source)))
    tokenizer.save_pretrained(str(out))
    return out


def held_out_eval(model: Path, out: Path, size: int, max_tokens: int) -> dict[str, Any]:
    """Greedy `rlvr eval` of `model` on the held-out tasks: accuracy (pass@1), the episode metrics, wall s, load."""
    from rlvr.runners.eval import EvalConfig, evaluate, verified_env

    config = EvalConfig(env=ENV, env_args={"split": "test", "seed": 1, "size": size}, output=out, model=str(model),
                        temperature=0.0, max_tokens=max_tokens, concurrency=16, overwrite=True)
    start, load = time.monotonic(), _load()
    with verified_env(config.env, config.env_args) as env:
        stats = evaluate(env, config.build_policy(), out, config=config.record(), n=1,
                         concurrency=config.concurrency, seed=config.seed, overwrite=True)
    accuracy, _ = stats.pass_at(1)
    return {"n": stats.total, "accuracy": accuracy or 0.0, "episode_errors": stats.errors,
            **stats.episodes.metrics(), "wall_s": time.monotonic() - start, "load": (load, _load())}


def grpo(backend: str, model: Path, out: Path, steps: int, trainer_args: dict[str, Any], size: int) -> dict[str, Any]:
    """GRPO (multi-turn) with `backend` from `model`; returns the stage row with the trained `model_dir`.

    Raises:
        RuntimeError: the backend's trainer failed (its exit code and log are named).
    """
    from rlvr.runners.train.config import TrainConfig

    config = TrainConfig.build(backend=backend, env=ENV, env_args={"split": "train", "seed": 2, "size": size},
                               model=str(model), steps=steps, output=out, trainer_args=trainer_args)
    start, load = time.monotonic(), _load()
    if backend == "trl":
        from rlvr.runners.train.trl import train_trl

        result = train_trl(config)
        model_dir, done = result.model_dir, result.steps
    else:
        from rlvr.runners.train.external import run_backend

        run = run_backend(config)
        if run.exit_code != 0:
            raise RuntimeError(f"{backend} exited with code {run.exit_code}; log: {run.log_path}")
        model_dir, done = out / "model", steps
    from rlvr.runners.train.curve import read_curve_csv

    curve = read_curve_csv(out / "reward_curve.csv")
    return {"steps": done, "model_dir": str(model_dir), "wall_s": time.monotonic() - start, "load": (load, _load()),
            "rewards": [r.get("reward") for r in curve],
            "tool_call_rate_per_step": [r.get("tool_call_rate") for r in curve]}


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/agent_learning"))
    parser.add_argument("--model", default=None, help="base model folder (default: the embedded SmolLM2-135M)")
    parser.add_argument("--demos", default="64,256", help="SFT sizes N (comma-separated)")
    parser.add_argument("--sft-forms", default="product", help="forms of the demonstrations ('all' for every form)")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--sft-steps", type=int, default=None, help="SFT optimizer steps (wins over --epochs)")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--eval-size", type=int, default=48)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--grpo-from", type=int, default=None, help="the N whose SFT model GRPO starts from")
    parser.add_argument("--grpo-steps", type=int, default=0)
    parser.add_argument("--grpo-tasks", type=int, default=1000, help="train-split tasks GRPO draws from")
    parser.add_argument("--backends", default="trl", help="GRPO backends (comma-separated: trl, verl, openrlhf)")
    parser.add_argument("--trainer-args", default="{}", help='JSON {"backend": {trainer args}} replacing the defaults')
    parser.add_argument("--stages", default="synth,base,sft,grpo")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a tiny random model, 1 step (see above)")
    args = parser.parse_args()
    if args.smoke:
        args.demos, args.eval_size, args.max_tokens, args.sft_steps, args.grpo_steps = "8", 4, 32, 1, 1
        args.grpo_tasks = 16
        args.trainer_args = json.dumps({"trl": {**TRAINER_ARGS["trl"], "num_generations": 2,
                                                "per_device_train_batch_size": 2, "max_completion_length": 48}})
    unknown = set(args.backends.split(",")) - set(BACKENDS)
    if unknown:
        parser.error(f"--backends: unknown {sorted(unknown)}; choose from {', '.join(BACKENDS)}")
    return args


def main() -> None:  # one block per stage, in pipeline order
    args = _args()
    from rlvr.runners.models import resolve_model, tiny_model
    from rlvr.runners.sft import SftConfig, run_sft
    from rlvr.runners.synth import SynthConfig, run_synth

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    stages = set(args.stages.split(","))
    demos = [int(x) for x in args.demos.split(",")]
    backends = args.backends.split(",")
    trainer_args = {**TRAINER_ARGS, **json.loads(args.trainer_args)}
    results = out / "results.json"
    rows: dict[str, dict[str, Any]] = json.loads(results.read_text()) if results.is_file() else {}
    cpu = [_cpu()]

    def record(stage: str, row: dict[str, Any]) -> None:
        row["cpu_s"] = _cpu() - cpu[0]  # since the previous record
        cpu[0] = _cpu()
        rows[stage] = row
        results.write_text(json.dumps(rows, indent=2))
        print(f"{stage}: {json.dumps(row)}", file=sys.stderr, flush=True)

    base = Path(tiny_model(out / "tiny")) if args.smoke else Path(resolve_model(args.model))
    if "synth" in stages and "synth" not in rows:
        start, load = time.monotonic(), _load()
        env_args: dict[str, Any] = {"split": "train", "seed": 0, "size": max(demos)}
        if args.sft_forms != "all":
            env_args["forms"] = args.sft_forms.split(",")
        run_synth(SynthConfig(env=ENV, env_args=env_args, output=out / "synth", policy="oracle", n=1))
        record("synth", {"rows": max(demos), "wall_s": time.monotonic() - start, "load": (load, _load())})
    if "base" in stages and "base" not in rows:
        record("base", held_out_eval(base_tool_model(base, out / "base_tool"), out / "eval_base.jsonl",
                                     args.eval_size, args.max_tokens))
    if "sft" in stages:
        for n in demos:
            if f"sft{n}" in rows:
                continue
            start, load = time.monotonic(), _load()
            result = run_sft(SftConfig(data=out / "synth" / "sft.jsonl", model=str(base), output=out / f"sft{n}",
                                       limit=n, epochs=args.epochs, max_steps=args.sft_steps, learning_rate=args.lr,
                                       batch_size=8, save_steps=20))
            losses = [r["loss"] for r in result.log_history if "loss" in r]
            record(f"sft{n}-train", {"steps": result.steps, "final_loss": losses[-1] if losses else None,
                                     "wall_s": time.monotonic() - start, "load": (load, _load())})
            record(f"sft{n}", held_out_eval(out / f"sft{n}", out / f"eval_sft{n}.jsonl", args.eval_size,
                                            args.max_tokens))
    if "grpo" in stages and args.grpo_steps:
        n = args.grpo_from or demos[0]
        for backend in backends:
            if f"grpo{n}-{backend}" in rows:
                continue
            train = grpo(backend, out / f"sft{n}", out / f"grpo{n}-{backend}", args.grpo_steps,
                         trainer_args.get(backend, {}), args.grpo_tasks)
            record(f"grpo{n}-{backend}-train", train)
            record(f"grpo{n}-{backend}", held_out_eval(Path(train["model_dir"]), out / f"eval_grpo{n}-{backend}.jsonl",
                                                       args.eval_size, args.max_tokens))
    table = markdown_table(rows)
    print(table)
    if not args.smoke:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "agent_learning.md").write_text(f"{' '.join(sys.argv[1:])}\n\n{table}\n")


def markdown_table(rows: dict[str, dict[str, Any]]) -> str:
    """One line per stage: held-out metrics for evaluated stages, wall time, CPU time and load for every stage."""
    lines = ["| stage | held-out accuracy | tool-call rate | failed calls / episode | turns | wall s | CPU s "
             "| load 1 min |", "|---|---|---|---|---|---|---|---|"]
    for stage, row in rows.items():
        load = f"{row['load'][0]:.1f}-{row['load'][1]:.1f}"
        if "accuracy" in row:
            lines.append(f"| {stage} | {row['accuracy']:.2f} ({row['n']}) | {row['tool_call_rate']:.2f} | "
                         f"{row['tool_errors']:.2f} | {row['turns']:.2f} | {row['wall_s']:.0f} | "
                         f"{row.get('cpu_s', 0):.0f} | {load} |")
        else:
            lines.append(f"| {stage} | | | | | {row['wall_s']:.0f} | {row.get('cpu_s', 0):.0f} | {load} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
