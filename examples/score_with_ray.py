"""Score a dataset file with the Ray engine: each Ray actor holds a warm verifier, fed batches with backpressure.

Writes a JSONL file of responses to offline arithmetic tasks (for each task the reference solution, a wrong
number and no answer, each with the status it should get), scores every row on a Ray cluster with
`make_engine("ray", ...)`, writes the rows with their verdicts, and prints the status counts and how many
verdicts match the expected status. Needs the `ray` extra (`pip install '.[ray]'`).

    python examples/score_with_ray.py [--tasks 20] [--workers 2] [--ray-address auto] [-o runs/examples/ray]

Without `--ray-address`, Ray's default applies (`RAY_ADDRESS`, else a new local cluster that ends with the
script). The command-line equivalent for a file of any size, resumable after a crash (sharded output,
exactly once): `rlvr verify --verifier math IN.jsonl -o OUT.parquet --engine ray --workers 2`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import rlvr
from rlvr.runners.engine import make_engine
from rlvr.verifiers import get_verifier


def write_dataset(path: Path, n_tasks: int) -> int:
    """Write three rows per task (correct, incorrect, no answer) to `path`; return the number of rows."""
    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=n_tasks, seed=0)
    try:
        with path.open("w") as f:
            for task in env.tasks:
                wrong = Decimal(task.reference) + 7
                for response, expected in ((env.verifier.reference_response(task.reference), "correct"),
                                           (f"The answer is \\boxed{{{wrong}}}.", "incorrect"),
                                           ("I could not work it out.", "no_answer")):
                    row = {"id": task.id, "response": response, "reference": task.reference, "expected": expected}
                    f.write(json.dumps(row) + "\n")
    finally:
        env.close()
    return 3 * n_tasks


def main(argv: list[str] | None = None) -> int:
    """Write the dataset, score it on Ray, write the verdicts; 0 when every verdict is the expected one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20, help="tasks (three rows each)")
    parser.add_argument("--workers", type=int, default=2, help="Ray actors, one CPU each")
    parser.add_argument("--ray-address", default=None, help="auto, HOST:PORT, or none for Ray's default")
    parser.add_argument("-o", "--output", type=Path, default=Path("runs/examples/ray"), help="output folder")
    args = parser.parse_args(argv)

    args.output.mkdir(parents=True, exist_ok=True)
    dataset, scored = args.output / "responses.jsonl", args.output / "verified.jsonl"
    print(f"wrote {write_dataset(dataset, args.tasks)} rows to {dataset}")

    rows = [json.loads(line) for line in dataset.read_text().splitlines()]
    with make_engine("ray", get_verifier("math"), workers=args.workers, address=args.ray_address) as engine:
        print(f"ray engine: {engine.workers} actors")
        verdicts = list(engine.verify_pairs((row["response"], row["reference"]) for row in rows))
    with scored.open("w") as f:
        for row, verdict in zip(rows, verdicts, strict=True):
            f.write(json.dumps({**row, "verdict": verdict.model_dump(mode="json")}) + "\n")

    counts = Counter(v.status for v in verdicts)
    agree = sum(v.status == row["expected"] for row, v in zip(rows, verdicts, strict=True))
    print(f"scored {len(verdicts)} rows to {scored}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    print(f"agree with expected: {agree}/{len(rows)}")
    return 0 if agree == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
