"""Throughput of `rlvr verify --verifier math` on the local and Ray engines, with the driver's peak memory.

Run: `python benchmarks/verify_scale.py [-n 20000] [--out benchmarks/results/verify_scale.md]`
(needs the `ray` extra and `../shared/data/math/labeled/`).

Input: N rows built from the ProcessBench solutions that have a gold answer (1,563)
(`../shared/data/math/labeled/processbench_{gsm8k,math,olympiadbench}.jsonl`; response = steps
joined by blank lines, reference = `gold_answer`), replicated with new ids in file order.

Runs, all on the same input, each one `rlvr verify` CLI process (wall time includes start-up):

- `--engine local --workers 1` and `--workers 2`;
- `--engine ray --workers 1` and `--workers 2` on a loopback cluster of two 1-CPU Ray nodes
  (`rlvr.runners.engine.loopback`);
- overhead probes: `--engine ray --workers 2 --verifier constant` (no scoring work) with batches
  of 64 and of 256 rows, and with batches of 256 on the first N/10 rows. The driver's CPU time is
  fixed + per-row + per-batch costs: per-batch driver CPU = (CPU_64 - CPU_256) / (batches_64 -
  batches_256); per-row = (CPU_256 - CPU_256,N/10 - per-batch x batch difference) / (0.9 N).

Rows/s = N / wall seconds. Driver peak RSS is the CLI process's `ru_maxrss` (from `wait4`). The
four math outputs are checked to hold identical verdicts (`elapsed_s` aside).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rlvr.runners.engine.loopback import LoopbackCluster, loopback_cluster

REPO = Path(__file__).resolve().parents[1]
LABELED = REPO.parent / "shared" / "data" / "math" / "labeled"
BATCH = 64


def build_input(path: Path, n: int) -> int:
    base = []
    for subset in ("gsm8k", "math", "olympiadbench"):
        for line in (LABELED / f"processbench_{subset}.jsonl").read_text().splitlines():
            record = json.loads(line)
            if record.get("gold_answer") is not None:
                base.append({"response": "\n\n".join(record["steps"]), "reference": str(record["gold_answer"]),
                             "expected": "correct" if record["final_answer_correct"] else "incorrect",
                             "source_id": record["id"]})
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"pb-{i}", **base[i % len(base)]}) + "\n")
    return len(base)


def run(cmd: list[str], env: dict[str, str], log: Path) -> tuple[float, float, float]:
    """Run the CLI; return (wall seconds, CPU seconds, peak RSS MiB).

    CPU seconds (user + system) come from `wait4`: the CLI process plus the descendants it reaped,
    i.e. the local engine's verifier worker processes; Ray actors are not its descendants, so for
    the Ray engine this is the driver alone.
    """
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{log.read_text()[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def verdicts(path: Path) -> list[Any]:
    rows = []
    with path.open() as f:
        for line in f:
            verdict = json.loads(line)["verdict"]
            verdict.pop("elapsed_s")
            rows.append(verdict)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20_000, help="input rows")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "verify_scale.md")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rlvr-verify-scale-"))
    inp = work / "in.jsonl"
    unique = build_input(inp, args.n)
    cli = [sys.executable, "-m", "rlvr.runners.cli", "verify"]
    results: list[dict[str, Any]] = []
    with loopback_cluster(nodes=2, cpus_per_node=1) as cluster:
        tenth = work / "tenth.jsonl"
        with inp.open() as f, tenth.open("w") as g:
            g.writelines(line for _, line in zip(range(args.n // 10), f, strict=False))
        runs = [("local", 1, "math", BATCH, inp), ("local", 2, "math", BATCH, inp), ("ray", 1, "math", BATCH, inp),
                ("ray", 2, "math", BATCH, inp), ("ray", 2, "constant", BATCH, inp),
                ("ray", 2, "constant", 4 * BATCH, inp), ("ray", 2, "constant", 4 * BATCH, tenth)]
        for engine, workers, verifier, batch, source in runs:
            rows = args.n if source == inp else args.n // 10
            out = work / f"{engine}{workers}-{verifier}-{batch}-{rows}.jsonl"
            cmd = [*cli, str(source), "-o", str(out), "--verifier", verifier, "--engine", engine,
                   "--workers", str(workers), "--batch-size", str(batch)]
            cmd += ["--ray-address", cluster.address] if engine == "ray" else []
            wall, cpu, rss = run(cmd, _env(cluster), out.with_suffix(".log"))
            results.append({"engine": engine, "workers": workers, "verifier": verifier, "batch": batch, "rows": rows,
                            "seconds": round(wall, 1), "rows_per_s": round(rows / wall, 1),
                            "cpu_s": round(cpu, 1), "peak_rss_mib": round(rss)})
            print(results[-1], flush=True)
    same = all(verdicts(work / f"{e}{w}-math-{BATCH}-{args.n}.jsonl")
               == verdicts(work / f"local1-math-{BATCH}-{args.n}.jsonl")
               for e, w in (("local", 2), ("ray", 1), ("ray", 2)))
    report = _report(results, args.n, unique, same)
    print(report)
    args.out.write_text(report)
    print(f"written to {args.out}; inputs and outputs kept in {work}")


def _env(cluster: LoopbackCluster) -> dict[str, str]:
    return {**cluster.env, "OMP_NUM_THREADS": "1"}


def _report(results: list[dict[str, Any]], n: int, unique: int, same: bool) -> str:
    lines = [f"# `rlvr verify --verifier math`: local vs Ray engine ({n:,} rows, {unique:,} unique ProcessBench "
             f"solutions, batch {BATCH}, {os.cpu_count()} CPUs)", "",
             "| engine | workers | verifier | batch | rows | wall s | rows/s | CPU s (driver + reaped workers) | "
             "driver peak RSS (MiB) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['engine']} | {r['workers']} | {r['verifier']} | {r['batch']} | {r['rows']} | {r['seconds']} | "
              f"{r['rows_per_s']} | {r['cpu_s']} | {r['peak_rss_mib']} |" for r in results]
    local1 = results[0]
    small, large, tenth = results[-3], results[-2], results[-1]
    per_batch = (small["cpu_s"] - large["cpu_s"]) / (n / small["batch"] - n / large["batch"])
    per_row = (large["cpu_s"] - tenth["cpu_s"] - per_batch * (n - tenth["rows"]) / large["batch"]) / (
        n - tenth["rows"])
    fixed = tenth["cpu_s"] - per_row * tenth["rows"] - per_batch * tenth["rows"] / large["batch"]
    lines += ["", f"Per-worker rate, CPU-bound: {n / local1['cpu_s']:.0f} rows per CPU-second (local, 1 worker, "
              "driver included).",
              f"Ray driver CPU: {1000 * per_batch:.1f} ms per batch, {1e6 * per_row:.0f} µs per row (reading, "
              f"shards, merge), {fixed:.1f} s fixed (start-up, connecting)."]
    lines += ["", f"Identical verdicts across the four math runs: {same}.", "", "```json",
              json.dumps(results, indent=1), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
