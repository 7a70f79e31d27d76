"""Samples/s of `rlvr synth` end to end vs `rlvr eval` + `rlvr verify` run one after the other.

Run: `python benchmarks/synth_throughput.py [--tasks 500] [-k 4] [--policy oracle] [--out FILE.md]`

Both pipelines produce the same thing from the same environment (`math/reasoning-gym-v1`,
`basic_arithmetic`, `size=TASKS`, verifier in worker processes) and policy: the verified-correct
samples as SFT rows and the per-task pass rates.

- synth: one `rlvr synth -n K -o DIR` process.
- chain: `rlvr eval -n K -o eval.jsonl` (rolls out; the env verifies each episode), then a join of
  each trajectory's last assistant message with its task's reference into a `rlvr verify` input
  (timed, in this process), then `rlvr verify --verifier math --workers W` (scores again), then the
  correct rows are kept and pass rates counted (timed, in this process).

Wall time includes every CLI process's start-up. Samples/s = TASKS x K / wall seconds. The two
pipelines' kept (task, sample) pairs are checked to agree. With the scripted oracle the policy
costs nothing, so the table shows what the second pass and the glue cost; with a model
policy generation dominates both.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RLVR = str(Path(sys.executable).with_name("rlvr"))


def _run(args: list[str]) -> float:
    start = time.monotonic()
    subprocess.run([RLVR, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def _env(tasks: int) -> list[str]:
    return ["--env", "math/reasoning-gym-v1", "-a", "task=basic_arithmetic", "-a", f"size={tasks}"]


def synth(tmp: Path, tasks: int, k: int, policy: list[str]) -> tuple[float, set[tuple[str, int]]]:
    wall = _run(["synth", *_env(tasks), *policy, "-n", str(k), "-o", str(tmp / "synth")])
    rows = [json.loads(line) for line in (tmp / "synth" / "sft.jsonl").read_text().splitlines()]
    return wall, {(r["task_id"], r["sample"]) for r in rows}


def chain(tmp: Path, tasks: int, k: int, policy: list[str], workers: int) -> tuple[dict[str, float], set[Any]]:
    from rlvr.environments.registry import make

    times = {"eval": _run(["eval", *_env(tasks), *policy, "-n", str(k), "-o", str(tmp / "eval.jsonl")])}
    start = time.monotonic()
    env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=tasks)
    references = {t.id: t.reference for t in env.tasks}
    env.close()
    with (tmp / "eval.jsonl").open() as src, (tmp / "verify_in.jsonl").open("w") as dst:
        for line in src:
            t = json.loads(line)
            last = next(m["content"] for m in reversed(t["messages"]) if m["role"] == "assistant")
            dst.write(json.dumps({"task_id": t["task_id"], "sample": t["info"]["sample"], "response": last,
                                  "reference": references[t["task_id"]], "messages": t["messages"]}) + "\n")
    times["join"] = time.monotonic() - start
    times["verify"] = _run(["verify", "--verifier", "math", str(tmp / "verify_in.jsonl"), "-o",
                            str(tmp / "verified.jsonl"), "--workers", str(workers)])
    start = time.monotonic()
    kept, counts = set(), {}
    with (tmp / "verified.jsonl").open() as f, (tmp / "sft.jsonl").open("w") as out:
        for line in f:
            row = json.loads(line)
            n, c = counts.get(row["task_id"], (0, 0))
            ok = row["verdict"]["status"] == "correct"
            counts[row["task_id"]] = (n + (row["verdict"]["status"] != "error"), c + ok)
            if ok:
                kept.add((row["task_id"], row["sample"]))
                out.write(json.dumps({"messages": row["messages"], "task_id": row["task_id"]}) + "\n")
    times["filter"] = time.monotonic() - start
    return times, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--policy", default="oracle", help="scripted policy name, or a model for --model")
    parser.add_argument("--workers", type=int, default=2, help="rlvr verify workers in the chain")
    parser.add_argument("--out", type=Path, default=None, help="also write the table as Markdown here")
    args = parser.parse_args()
    policy = ["--policy", args.policy] if args.policy in ("oracle", "noop") else ["--model", args.policy]
    samples = args.tasks * args.k
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        synth_s, synth_kept = synth(tmp, args.tasks, args.k, policy)
        times, chain_kept = chain(tmp, args.tasks, args.k, policy, args.workers)
    if synth_kept != chain_kept:
        raise SystemExit(f"the pipelines kept different samples: {len(synth_kept)} vs {len(chain_kept)}")
    chain_s = sum(times.values())
    lines = [
        f"{args.tasks} tasks x K={args.k} = {samples} samples, policy {args.policy}, "
        f"{len(synth_kept)} kept by both",
        "",
        "| pipeline | wall s | samples/s | samples/s vs synth |",
        "|---|---:|---:|---:|",
        f"| `rlvr synth` | {synth_s:.1f} | {samples / synth_s:.0f} | 1.00x |",
        f"| `rlvr eval` + join + `rlvr verify` + filter | {chain_s:.1f} | {samples / chain_s:.0f} | "
        f"{synth_s / chain_s:.2f}x |",
        *(f"| &nbsp;&nbsp;{name} | {t:.1f} | | |" for name, t in times.items()),
    ]
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown("\n".join(lines)))
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
