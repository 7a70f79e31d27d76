"""The three backends side by side on this machine: `rlvr compare --backends trl,verl,openrlhf`, as a table.

    python benchmarks/compare_backends.py [--summary OUT/summary.json] [--run -o OUT]

With `--run` it runs the comparison first (easy arithmetic, `math/reasoning-gym-v1` with the env
arguments of scripts/gpu_check.sh, 3 steps, each backend in its venv: `$RLVR_TRL_PYTHON`,
`$RLVR_VERL_PYTHON`, `$RLVR_OPENRLHF_PYTHON`); then it prints one markdown row per backend from
`summary.json`: status, steps, s/step (training seconds / steps), tokens/s, peak memory, wall time
(start-up included), final reward and how its settings were aligned (for BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ENV_ARGS = ["size=256", "seed=0",
            'config={"min_terms":2,"max_terms":2,"min_digits":1,"max_digits":1,"operators":["+","-"]}']


def _fmt(value: Any, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def table(summary: dict[str, Any]) -> str:
    """Markdown table of a compare `summary.json`."""
    lines = ["| backend | status | steps | s/step | tokens/s | peak MiB | wall s | final reward | settings |",
             "|---|---|---|---|---|---|---|---|---|"]
    for b in summary["backends"]:
        t = b.get("train") or {}
        status = b["status"] + (f" ({b['reason']})" if b.get("reason") else "")
        lines.append(f"| {b['backend']} | {status} | {t.get('steps', '–')} | {_fmt(t.get('step_s'), '.1f')} | "
                     f"{_fmt(t.get('tokens_per_s'), ',.0f')} | {_fmt(t.get('peak_mb'), ',.0f')} | "
                     f"{_fmt(t.get('wall_s'), '.0f')} | {_fmt(t.get('final_reward'), '.3f')} | "
                     f"{b.get('settings', '')} |")
    return "\n".join(lines)


def main() -> None:
    """Parse arguments, optionally run the comparison, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="run rlvr compare first")
    parser.add_argument("-o", "--output", default="compare-backends", help="compare output folder (with --run)")
    parser.add_argument("--summary", help="an existing summary.json (default: OUTPUT/summary.json)")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    if args.run:
        command = [sys.executable, "-m", "rlvr.runners.cli", "compare", "--env", "math/reasoning-gym-v1",
                   "--backends", "trl,verl,openrlhf", "--steps", str(args.steps), "-o", args.output,
                   "--train-timeout", os.environ.get("TRAIN_TIMEOUT", "2400")]
        for kv in ENV_ARGS:
            command += ["--env-arg", kv]
        subprocess.run(command, check=False)
    summary = json.loads(Path(args.summary or Path(args.output) / "summary.json").read_text())
    print(table(summary))


if __name__ == "__main__":
    main()
