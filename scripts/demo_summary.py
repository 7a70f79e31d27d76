"""Summary of `scripts/demo.sh`: held-out accuracy before -> after, the reward curve's ends, wall time, paths.

    python scripts/demo_summary.py OUT TOTAL_SECONDS --train-env ID --train-env-args JSON

Reads OUT/eval_before.jsonl, OUT/eval_after.jsonl (rows of `rlvr eval`), OUT/train/reward_curve.csv
(`rlvr train`) and OUT/phases.tsv (seconds per phase); writes OUT/summary.json and prints the summary.
The held-out tasks (split `test`) and the training tasks (split `train`) are disjoint by construction
(`make_reasoning_gym(split=...)`); this script checks it, and that no held-out question repeats, and
refuses to summarise otherwise.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any


def read_eval(path: Path) -> dict[str, bool]:
    """Question text -> whether the verdict was correct, for every row of an `rlvr eval` output."""
    out: dict[str, bool] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        question = next(m["content"] for m in reversed(row["messages"]) if m["role"] == "user")
        if question in out:
            raise SystemExit(f"demo: held-out question {question!r} appears twice in {path}")
        out[question] = row["verdict"]["status"] == "correct"
    return out


def training_questions(env_id: str, env_args: dict[str, Any]) -> set[str]:
    """Every prompt of the training run's dataset (not only the ones its steps reached)."""
    import rlvr

    env = rlvr.make(env_id, **env_args)
    try:
        return {t.prompt[-1].content for t in env.tasks}
    finally:
        env.close()


def accuracy(results: dict[str, bool]) -> tuple[float, int]:
    """(fraction correct, number of tasks) over `results`."""
    values = list(results.values())
    return (sum(values) / len(values) if values else float("nan")), len(values)


def main() -> None:
    """Print the summary and write OUT/summary.json."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("total_s", type=int)
    parser.add_argument("--train-env", required=True)
    parser.add_argument("--train-env-args", type=json.loads, required=True)
    args = parser.parse_args()
    out: Path = args.out
    before, after = read_eval(out / "eval_before.jsonl"), read_eval(out / "eval_after.jsonl")
    with (out / "train" / "reward_curve.csv").open() as f:
        curve = [row for row in csv.DictReader(f) if row.get("reward")]
    rewards = [float(row["reward"]) for row in curve]
    head = rewards[: max(1, len(rewards) // 4)]
    tail = rewards[-max(1, len(rewards) // 4):]
    if set(before) != set(after):
        raise SystemExit("demo: the two evaluations scored different held-out questions")
    shared = set(before) & training_questions(args.train_env, args.train_env_args)
    if shared:
        raise SystemExit(f"demo: {len(shared)} held-out questions are training questions too, e.g. {min(shared)!r}")
    phases = dict(line.split("\t") for line in (out / "phases.tsv").read_text().splitlines() if line.strip())
    acc_b, n = accuracy(before)
    acc_a, _ = accuracy(after)
    summary: dict[str, Any] = {
        "heldout_tasks": n,
        "accuracy_before": acc_b,
        "accuracy_after": acc_a,
        "heldout_disjoint_from_training": True,
        "steps": len(rewards),
        "reward_first_quarter": sum(head) / len(head) if head else None,
        "reward_last_quarter": sum(tail) / len(tail) if tail else None,
        "reward_per_step": rewards,
        "phases_s": {k: int(v) for k, v in phases.items()},
        "total_s": args.total_s,
        "paths": {
            "reward_curve_png": str(out / "train" / "reward_curve.png"),
            "reward_curve_csv": str(out / "train" / "reward_curve.csv"),
            "model": str(out / "train" / "model"),
            "eval_before": str(out / "eval_before.jsonl"),
            "eval_after": str(out / "eval_after.jsonl"),
        },
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    q = len(head)
    print("\n== summary")
    print(f"   held-out accuracy (greedy, {n} distinct tasks, none a training task): {acc_b:.0%} -> {acc_a:.0%}")
    if rewards:
        print(f"   mean reward, first {q} -> last {q} of {len(rewards)} steps: "
              f"{summary['reward_first_quarter']:.3f} -> {summary['reward_last_quarter']:.3f}")
    parts = ", ".join(f"{k} {v} s" for k, v in summary["phases_s"].items())
    print(f"   wall time: {args.total_s // 60} min {args.total_s % 60} s ({parts})")
    for name, path in summary["paths"].items():
        print(f"   {name:<17} {path}")
    print(f"   summary.json      {out / 'summary.json'}")


if __name__ == "__main__":
    main()
