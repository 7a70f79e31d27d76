"""Benchmark `rlvr forge` on real PyPI projects: tasks per CPU-hour, yield per mutator, grading time, audit.

Run: `python benchmarks/forge.py [--package NAME==VERSION ...] [-n 10] [--workers 1] [--audit all|N]
[--audit-workers 2] [--out DIR] [--table-out benchmarks/results/forge.md]`. Defaults: three projects of different
shapes that this machine's host paths do not vendor (forge drops candidates whose original is
reachable from the sandbox, and the google-cloud-sdk and setuptools vendor inflection,
more-itertools, cachetools, six ...): `isodate` (src layout, a package of modules, unittest-style
tests), `tabulate` (a flat package around one big module, pytest tests), `boltons` (a flat package of
40 independent modules, a large suite).

Measured per project, in one run:

- the kept suite (tests kept / dropped, one plain run's seconds);
- candidates validated, tasks made, duplicates dropped, drops by reason;
- CPU seconds of everything forge ran (this process, its sandboxes, their test processes, the
  grader's own oracle and no-op check of every task): a cgroup-v1 `cpuacct` group holding this
  process (`/sys/fs/cgroup/cpuacct`), so sandboxes are counted too (where none can be made:
  'n/a'); tasks per CPU-hour = tasks / that CPU time;
- yield per mutator (validated / tried), all projects together;
- every task graded again after forge (forge already refuses a task whose oracle or no-op the grader
  disagrees with): the oracle's episode (prepared sandbox, the reverse patch applied) must be `correct`
  and a no-op `incorrect`; `TerminalVerifier.grade` of the oracle's exported workspace timed alone is
  one episode's grading time (p50, p99);
- the adversarial audit (`rlvr check --adversarial`) of `swe/forge-v1` on `--audit` tasks: wrong
  probes that scored correct (must be 0) and failed controls (must be 0); the CPU seconds of the
  re-grading and of the audit are counted apart from the projects'.

The load average is recorded at the start and the end: the machine may be shared.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_PACKAGES = ("isodate==0.7.2", "tabulate==0.9.0", "boltons==26.2.0")
CGROUP = Path("/sys/fs/cgroup/cpuacct")


class CpuMeter:
    """CPU seconds of this process and every descendant, sandboxes included (a cgroup-v1 cpuacct group)."""

    def __init__(self) -> None:
        self.group: Path | None = None
        with contextlib.suppress(OSError):
            group = CGROUP / f"rlvr-forge-bench-{os.getpid()}"
            group.mkdir(exist_ok=True)
            (group / "cgroup.procs").write_text(str(os.getpid()))
            self.group = group

    def seconds(self) -> float | None:
        """CPU seconds so far (None when no cgroup could be made)."""
        if self.group is None:
            return None
        return int((self.group / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        """Leave the group and remove it."""
        if self.group is not None:
            with contextlib.suppress(OSError):
                (CGROUP / "cgroup.procs").write_text(str(os.getpid()))
                self.group.rmdir()


@contextlib.contextmanager
def _meter() -> Iterator[CpuMeter]:
    meter = CpuMeter()
    try:
        yield meter
    finally:
        meter.close()


def _difference(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _cpu_text(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.0f}"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def grade_every_task(task_dirs: list[Path]) -> tuple[list[float], list[str], list[str]]:
    """Grade each task's oracle episode and a no-op with the terminal grader.

    Returns:
        (seconds of `TerminalVerifier.grade` of each oracle episode's exported workspace, timed alone:
        preparation and the patch's replay not counted; tasks whose oracle did not score `correct`;
        tasks whose no-op did not score `incorrect`).
    """
    from rlvr.verifiers.terminal import TerminalVerifier, load_task, oracle_command
    from rlvr.verifiers.terminal.workspace import TaskSession

    verifier = TerminalVerifier()
    times: list[float] = []
    oracle_wrong: list[str] = []
    noop_wrong: list[str] = []
    for task_dir in task_dirs:
        reference = {"format": "harbor", "task_dir": str(task_dir)}
        task = load_task(reference)
        with TaskSession(task, verifier.config.sandbox) as session:
            session.run(oracle_command(task), timeout_s=300.0)
            workspace = session.finish()
            start = time.monotonic()
            verdict = verifier.grade(reference, workspace)
            times.append(time.monotonic() - start)
        if verdict.status != "correct":
            oracle_wrong.append(f"{task_dir.name}: {verdict.status}: {verdict.detail[:200]}")
        noop = verifier.verify("", reference)
        if noop.status != "incorrect":
            noop_wrong.append(f"{task_dir.name}: {noop.status}: {noop.detail[:200]}")
    return times, oracle_wrong, noop_wrong


def run_audit(out: Path, limit: int | None, workers: int) -> dict[str, Any]:
    """`rlvr check --adversarial` on swe/forge-v1 over the first `limit` tasks (None: all), `workers` probes at once."""
    import rlvr
    from rlvr.environments.audit import audit

    env = rlvr.make("swe/forge-v1", tasks_dir=str(out))
    ids = [t.id for t in env.tasks][:limit]
    report = audit(env, task_ids=ids, workers=workers)
    env.close()
    return report.to_json()


def _project_rows(report: Any, cpu: dict[str, float | None]) -> list[str]:
    rows = []
    for p in report.projects:
        if p.error:
            rows.append(f"| {p.project} | refused: {p.error[:80]} | | | | | | | |")
            continue
        seconds = cpu.get(p.project)
        per_hour = f"{p.validated / (seconds / 3600):.1f}" if seconds and p.validated else "n/a"
        cpu_text = f"{seconds:.0f}" if seconds is not None else "n/a"
        drops = ", ".join(f"{k} {v}" for k, v in sorted(p.dropped.items(), key=lambda kv: -kv[1]))
        rows.append(f"| {p.project} | {p.kept_tests} / {p.dropped_tests} | {p.baseline_s:.1f} | {p.tried} | "
                    f"{p.validated} | {p.duplicates} | {drops or '-'} | {p.wall_s:.0f} / {cpu_text} | {per_hour} |")
    return rows


def main() -> None:
    """Run the benchmark and print (and write) its tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", help="NAME==VERSION (repeatable; default: three projects)")
    parser.add_argument("-n", type=int, default=10, help="tasks wanted per project")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--audit", default="all", help="tasks audited: 'all', a number, or 0")
    parser.add_argument("--audit-workers", type=int, default=2, help="probes of one task graded at once")
    parser.add_argument("--out", help="tasks folder (default: a temporary one)")
    parser.add_argument("--table-out", default="benchmarks/results/forge.md")
    args = parser.parse_args()
    from rlvr.runners.forge import forge

    packages = args.package or list(DEFAULT_PACKAGES)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="rlvr-forge-bench-"))
    load_start = os.getloadavg()
    cpu: dict[str, float | None] = {}
    reports = []
    with _meter() as meter:
        for package in packages:  # one project at a time, so each gets its own CPU count
            before = meter.seconds()
            report = forge(packages=[package], out=out, n=args.n, seed=args.seed, workers=args.workers)
            for p in report.projects:
                cpu[p.project] = _difference(before, meter.seconds())
                print(json.dumps(p.model_dump()), flush=True)
            reports.append(report)
        task_dirs = sorted(p.parent for p in out.glob("*/task.toml"))
        before = meter.seconds()
        times, oracle_wrong, noop_wrong = grade_every_task(task_dirs) if task_dirs else ([], [], [])
        grade_cpu = _difference(before, meter.seconds())
        audit_limit = None if args.audit == "all" else int(args.audit)
        before = meter.seconds()
        audited = run_audit(out, audit_limit, args.audit_workers) if task_dirs and audit_limit != 0 else None
        audit_cpu = _difference(before, meter.seconds())
    for wrong in oracle_wrong + noop_wrong:
        print("GRADER DISAGREES:", wrong, flush=True)
    rows = [r for report in reports for r in _project_rows(report, cpu)]
    per_mutator: dict[str, Counter[str]] = {}
    for report in reports:
        for p in report.projects:
            for name, counts in p.per_mutator.items():
                per_mutator.setdefault(name, Counter()).update(counts)
    load_end = os.getloadavg()
    lines = [
        f"Load average at start {load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f}, at end "
        f"{load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f}; {os.cpu_count()} CPUs; -n {args.n}, "
        f"--workers {args.workers}, seed {args.seed}.",
        "",
        "| project | tests kept / dropped | suite s | candidates validated | tasks | duplicates | dropped by reason "
        "| wall s / CPU s | tasks per CPU-hour |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "| mutator | tried | validated | yield |",
        "|---|---|---|---|",
        *(f"| {name} | {c['tried']} | {c['validated']} | "
          f"{(c['validated'] / c['tried'] if c['tried'] else 0):.0%} |" for name, c in sorted(per_mutator.items())),
        "",
    ]
    if times:
        lines.append(f"Every task ({len(times)}), graded again after forge: the oracle's episode `correct` "
                     f"{len(times) - len(oracle_wrong)} / {len(times)}, a no-op `incorrect` "
                     f"{len(times) - len(noop_wrong)} / {len(times)} ({_cpu_text(grade_cpu)} CPU s).")
        lines.append(f"Grading one episode (`TerminalVerifier.grade` of the oracle's workspace, {len(times)} tasks): "
                     f"p50 {statistics.median(times):.1f} s, p99 {_percentile(times, 0.99):.1f} s, "
                     f"max {max(times):.1f} s.")
    if audited is not None:
        fams = ", ".join(f"{k} {v['false_passes']}/{v['tried']}" for k, v in sorted(audited["families"].items()))
        lines.append(f"Adversarial audit of swe/forge-v1 on {audited['n']} tasks: {audited['false_passes']} false "
                     f"passes of {audited['tried']} wrong probes ({fams}); controls failed "
                     f"{audited['controls_failed']} of {audited['controls']['tried']}; "
                     f"{audited['elapsed_s']:.0f} s wall, {_cpu_text(audit_cpu)} CPU s.")
    table = "\n".join(lines) + "\n"
    print(table)
    Path(args.table_out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.table_out).write_text(table)


if __name__ == "__main__":
    main()
