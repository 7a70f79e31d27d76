"""Per-step table of an OpenRLHF run in rlvr's CPU mode (`rlvr train --backend openrlhf --device cpu`).

    python benchmarks/openrlhf_cpu.py RUN_FOLDER [--python .venvs/openrlhf/bin/python]

Reads what the run left in RUN_FOLDER: OpenRLHF's own TensorBoard scalars (`export/openrlhf/tensorboard`,
read in OpenRLHF's interpreter, which has tensorboard), `run.json` (peak memory, wall time, the weight
syncs vLLM's workers recorded) and prints one markdown row per step for BENCHMARKS.md: reward and
fraction correct (rlvr's verifier), mean response tokens, the step's seconds and its phases as
OpenRLHF times them (`timing/generation`, `timing/make_experience` = actor log-probs, `timing/ppo_train`,
`timing/broadcast` = weight sync), tokens/s, the actor's grad norm and the tensors whose value changed
in vLLM at that step's sync.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

from rlvr.runners.train.logs import OPENRLHF_CURVE_SOURCE, openrlhf_rows


def _scalars(python: str, tensorboard_dir: Path) -> list[dict[str, Any]]:
    done = subprocess.run([python, "-c", OPENRLHF_CURVE_SOURCE, str(tensorboard_dir)], capture_output=True,
                          text=True, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RLVR_CURVE "))
    scalars: list[dict[str, Any]] = json.loads(line[len("RLVR_CURVE "):])
    return scalars


def _fmt(value: Any, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def table(run: Path, python: str) -> str:
    """The markdown table of one run folder (see the module docstring)."""
    scalars = _scalars(python, run / "export" / "openrlhf" / "tensorboard")
    rows = openrlhf_rows(scalars)
    info = json.loads((run / "run.json").read_text())
    syncs = {s["sync"]: s for s in info.get("weight_syncs") or []}
    lines = ["| step | reward (rlvr verifier) | correct | response tokens (mean) | step s | generation s | "
             "actor log-probs s | training s | weight sync s | tokens/s | grad norm | tensors changed in vLLM |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for raw, row in zip((s for s in scalars if "train/reward" in s), rows, strict=True):
        sync = syncs.get(int(row["step"]), {})
        changed = f"{sync['changed']} of {sync['verified']} checked ({sync['tensors']} sent)" if sync else "–"
        lines.append(f"| {int(row['step'])} | {_fmt(row['reward'], '.3f')} | {_fmt(row['correct'], '.3f')} | "
                     f"{_fmt(row['completion_length'], '.1f')} | {_fmt(row['step_s'], '.1f')} | "
                     f"{_fmt(raw.get('train/timing/generation'), '.1f')} | "
                     f"{_fmt(raw.get('train/timing/make_experience'), '.1f')} | "
                     f"{_fmt(raw.get('train/timing/ppo_train'), '.1f')} | "
                     f"{_fmt(raw.get('train/timing/broadcast'), '.1f')} | {_fmt(row['tokens_per_s'], '.1f')} | "
                     f"{_fmt(row['grad_norm'], '.3g')} | {changed} |")
    lines.append("")
    lines.append(f"peak {_fmt(info.get('peak_mb'), ',.0f')} MiB (summed PSS of the run's processes), wall "
                 f"{_fmt(info.get('wall_s'), '.0f')} s, cleaned: {json.dumps(info.get('cleaned'))}")
    return "\n".join(lines)


def main() -> None:
    """Parse arguments, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the rlvr train -o folder")
    parser.add_argument("--python", default=".venvs/openrlhf/bin/python", help="OpenRLHF's interpreter")
    args = parser.parse_args()
    print(table(args.run, args.python))


if __name__ == "__main__":
    main()
