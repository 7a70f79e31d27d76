"""An agent learns to use a tool (issue 30, phase 1): base -> SFT -> GRPO on `math/calculator-arithmetic-v1`, CPU.

Pipeline, each stage through rlvr's own library path (the commands a user runs):

1. `rlvr synth --policy oracle` on the `train` split (seed 0, `--sft-forms`): verified tool-calling
   demonstrations in sft.jsonl.
2. `rlvr eval` (greedy) of the base SmolLM2-135M-Instruct, rendered with the tool-calling template
   SFT and GRPO use (`base_tool/`: the same weights, TRL's qwen2_5 template), on held-out tasks:
   the `test` split, seed 1 (a split no train seed can produce, `rlvr.environments.arithmetic`).
3. `rlvr sft` (`rlvr.runners.sft.run_sft`) on the first N demonstrations, for each N of `--demos`.
4. `rlvr eval` of each SFT model on the same held-out tasks.
5. `rlvr train --backend trl` (GRPO, multi-turn through TRL's environment_factory) from one SFT
   model (`--grpo-from N`) for `--grpo-steps` steps on the train split (seed 2, all forms), then
   `rlvr eval` of the result.

Prints one table: stage x held-out accuracy, tool-call rate (episodes with >= 1 call), calls
answered with an error (malformed / failed), mean model turns, wall time of the stage, load
average (1 min) at its start and end. Writes `OUT/results.json` and `benchmarks/results/agent_learning.md`.

Run (set-up excluded; minutes depend on the load):

    source scripts/env.sh; .venvs/trl/bin/python benchmarks/agent_learning.py --demos 64,256 --grpo-steps 10
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


def _load() -> float:
    return os.getloadavg()[0]


def _cpu() -> float:
    """CPU seconds this process has used (user + system): a measure the machine's load does not inflate."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def tool_use(trajectories: list[Any]) -> dict[str, float]:
    """Accuracy, tool-call rate, calls answered with an error per episode, mean model turns.

    Calls are the environment's answers to them: `tool` messages and `<tool_response>` blocks in
    the observations; an answer starting with "Error:" is a malformed or failed call.
    """
    n = len(trajectories)
    correct = sum(t.verdict is not None and t.verdict.status == "correct" for t in trajectories)
    called = errors = turns = 0
    for t in trajectories:
        answers: list[str] = []
        first = next(i for i, m in enumerate(t.messages) if m.role == "assistant") if any(
            m.role == "assistant" for m in t.messages) else len(t.messages)
        for m in t.messages[first:]:
            if m.role == "tool":
                answers.append(m.content)
            elif m.role == "user":
                blocks = m.content.split("<tool_response>")[1:]
                answers += [block.split("</tool_response>")[0].strip() for block in blocks]
        called += bool(answers)
        errors += sum(a.startswith("Error:") for a in answers)
        turns += sum(m.role == "assistant" for m in t.messages)
    return {"n": n, "accuracy": correct / n, "tool_call_rate": called / n, "error_calls_per_episode": errors / n,
            "turns": turns / n}


def base_tool_model(out: Path) -> Path:
    """The embedded SmolLM2 with the tool-calling template SFT/GRPO render with (weights linked, not copied)."""
    from transformers import AutoTokenizer

    from rlvr.adapters.trl.agent import tool_calling_tokenizer
    from rlvr.runners.models import prepare_smollm2

    source = prepare_smollm2()
    out.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        (out / name).unlink(missing_ok=True)
        (out / name).symlink_to(source / name)
    tokenizer, _ = tool_calling_tokenizer(AutoTokenizer.from_pretrained(str(source)))
    tokenizer.save_pretrained(str(out))
    return out


def held_out_eval(model: Path, out: Path, size: int, max_tokens: int) -> dict[str, Any]:
    from rlvr.runners.eval import EvalConfig, evaluate, read_trajectories, verified_env

    config = EvalConfig(env=ENV, env_args={"split": "test", "seed": 1, "size": size}, output=out, model=str(model),
                        temperature=0.0, max_tokens=max_tokens, concurrency=16)
    start, load = time.monotonic(), _load()
    with verified_env(config.env, config.env_args) as env:
        evaluate(env, config.build_policy(), out, config=config.record(), n=1, concurrency=config.concurrency,
                 seed=config.seed)
    return {**tool_use(list(read_trajectories(out))), "wall_s": time.monotonic() - start, "load": (load, _load())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/agent_learning"))
    parser.add_argument("--demos", default="64,256", help="SFT sizes N (comma-separated)")
    parser.add_argument("--sft-forms", default="product", help="forms of the demonstrations ('all' for every form)")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--eval-size", type=int, default=48)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--grpo-from", type=int, default=None, help="the N whose SFT model GRPO starts from")
    parser.add_argument("--grpo-steps", type=int, default=0)
    parser.add_argument("--stages", default="synth,base,sft,grpo")
    args = parser.parse_args()
    from rlvr.runners.sft import SftConfig, run_sft
    from rlvr.runners.synth import SynthConfig, run_synth
    from rlvr.runners.train import train_command

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    stages = set(args.stages.split(","))
    demos = [int(x) for x in args.demos.split(",")]
    forms = None if args.sft_forms == "all" else args.sft_forms.split(",")
    rows: dict[str, dict[str, Any]] = {}
    results = out / "results.json"
    if results.is_file():
        rows = json.loads(results.read_text())

    cpu = [_cpu()]

    def record(stage: str, row: dict[str, Any]) -> None:
        row["cpu_s"] = _cpu() - cpu[0]  # since the previous record
        cpu[0] = _cpu()
        rows[stage] = row
        results.write_text(json.dumps(rows, indent=2))
        print(f"{stage}: {json.dumps(row)}", file=sys.stderr, flush=True)

    if "synth" in stages:
        start, load = time.monotonic(), _load()
        env_args = {"split": "train", "seed": 0, "size": max(demos), "forms": forms}
        run_synth(SynthConfig(env=ENV, env_args=env_args, output=out / "synth", policy="oracle", n=1))
        record("synth", {"rows": max(demos), "wall_s": time.monotonic() - start, "load": (load, _load())})
    if "base" in stages:
        record("base", held_out_eval(base_tool_model(out / "base_tool"), out / "eval_base.jsonl", args.eval_size,
                                     args.max_tokens))
    if "sft" in stages:
        for n in demos:
            start, load = time.monotonic(), _load()
            result = run_sft(SftConfig(data=out / "synth" / "sft.jsonl", output=out / f"sft{n}", limit=n,
                                       epochs=args.epochs, learning_rate=args.lr, batch_size=8, save_steps=20))
            losses = [r["loss"] for r in result.log_history if "loss" in r]
            sft_row = {"steps": result.steps, "final_loss": losses[-1] if losses else None,
                       "wall_s": time.monotonic() - start, "load": (load, _load())}
            record(f"sft{n}-train", sft_row)
            record(f"sft{n}", held_out_eval(out / f"sft{n}", out / f"eval_sft{n}.jsonl", args.eval_size,
                                            args.max_tokens))
    if "grpo" in stages and args.grpo_steps:
        n = args.grpo_from or demos[0]
        start, load = time.monotonic(), _load()
        trainer_args = {"num_generations": 4, "per_device_train_batch_size": 8, "max_completion_length": 128,
                        "learning_rate": 5e-6, "temperature": 1.0}
        result = train_command("trl", ENV, {"split": "train", "seed": 2, "size": 1000}, str(out / f"sft{n}"),
                               args.grpo_steps, out / f"grpo{n}", trainer_args)
        record(f"grpo{n}-train", {"steps": result.steps, "wall_s": time.monotonic() - start, "load": (load, _load()),
                                  "rewards": [r.get("reward") for r in result.log_history if "reward" in r]})
        record(f"grpo{n}", held_out_eval(result.model_dir, out / f"eval_grpo{n}.jsonl", args.eval_size,
                                         args.max_tokens))
    table = markdown_table(rows)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "agent_learning.md").write_text(f"{' '.join(sys.argv[1:])}\n\n{table}\n")


def markdown_table(rows: dict[str, dict[str, Any]]) -> str:
    """One line per stage: held-out metrics for evaluated stages, wall time and load for every stage."""
    lines = ["| stage | held-out accuracy | tool-call rate | error calls / episode | turns | wall s | CPU s "
             "| load 1 min |", "|---|---|---|---|---|---|---|---|"]
    for stage, row in rows.items():
        load = f"{row['load'][0]:.1f}-{row['load'][1]:.1f}"
        if "accuracy" in row:
            lines.append(f"| {stage} | {row['accuracy']:.2f} ({row['n']}) | {row['tool_call_rate']:.2f} | "
                         f"{row['error_calls_per_episode']:.2f} | {row['turns']:.2f} | {row['wall_s']:.0f} | "
                         f"{row.get('cpu_s', 0):.0f} | {load} |")
        else:
            lines.append(f"| {stage} | | | | | {row['wall_s']:.0f} | {row.get('cpu_s', 0):.0f} | {load} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
