"""Benchmark rlvr's MathVerifier against Math-Verify 0.9.0 on ProcessBench final-answer labels.

Run: `python benchmarks/math_verifier.py [--workers2] [--show] [--out benchmarks/results/math_verifier.md]`
(`RLVR_SHARED_DATA` names the shared `data` folder when the checkout is not beside it).

For each row of `../shared/data/math/labeled/processbench_{gsm8k,math,olympiadbench}.jsonl`
the solution text is "\\n\\n".join(steps); the label is `final_answer_correct`; rows whose
`gold_answer` is null are skipped (and counted). Positive = "predicted correct". Also reports
the self-check pass counts (every GSM8K test / MATH-500 reference solution must verify correct),
the items/s ratio of the two systems in this run (they take turns every 64 rows, so a drift of the machine's
speed falls on both) with the load average beside it (the ratio is
meant on a quiet machine: load average < 0.5), the time per item (p50 / p99 / max, milliseconds: rlvr's
`Verdict.elapsed_s` measured in the worker, Math-Verify's parse + verify), and the probe set's table
(`math_probe.py`: right / false passes / false fails per kind for both systems).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.verifiers.math import MathConfig, MathVerifier

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RLVR_SHARED_DATA") or REPO.parent / "shared" / "data") / "math"
SUBSETS = ("gsm8k", "math", "olympiadbench")


@dataclass
class Scores:
    n: int = 0
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    timeouts: int = 0
    errors: int = 0
    seconds: float = 0.0
    times: list[float] = field(default_factory=list)  # seconds per item

    def add(self, pred: bool, label: bool) -> None:
        self.n += 1
        if pred and label:
            self.tp += 1
        elif pred:
            self.fp += 1
        elif label:
            self.fn += 1
        else:
            self.tn += 1

    def merge(self, other: Scores) -> None:
        """Add `other`'s counts, seconds and per-item times to these."""
        for f in ("n", "tp", "fp", "tn", "fn", "timeouts", "errors", "seconds"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.times += other.times

    def row(self) -> dict[str, str]:
        acc = (self.tp + self.tn) / self.n if self.n else 0.0
        prec = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        rec = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        ips = self.n / self.seconds if self.seconds else 0.0
        return {"n": str(self.n), "accuracy": f"{acc:.3f}", "precision": f"{prec:.3f}", "recall": f"{rec:.3f}",
                "F1": f"{f1:.3f}", "timeouts": str(self.timeouts), "errors": str(self.errors), "items/s": f"{ips:.0f}",
                "p50 ms": _quantile(self.times, 0.5), "p99 ms": _quantile(self.times, 0.99),
                "max ms": _quantile(self.times, 1.0)}


def _quantile(times: list[float], q: float) -> str:
    """The q-quantile of per-item seconds, in milliseconds (nearest rank)."""
    if not times:
        return "-"
    ordered = sorted(times)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3:.1f}"


# Answer forms that reach the LaTeX grammar (tuples, intervals, unions, sets, functions, matrices, relations).
WARMUP = [(f"\\boxed{{{a}}}", a) for a in (
    "1", "(1,2)", "[0,1)", r"(-\infty, 3] \cup (4, \infty)", r"\{1, 2\}", r"\sin x + \cos x", r"\log_{10} 2",
    r"\ln 3", r"\tan^{-1}(2)", r"\lfloor x \rfloor", r"\binom{5}{2}", r"\sqrt[3]{6}", "x = 3", r"x \geq 2",
    r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", "f(x) = x^2", r"\frac{\pi}{6} + k\pi", "|x-1|", r"3 \mod 5")]
# ... and pairs that are not written alike, so that both systems' comparison paths (sympy's evaluation,
# set and inequality code) are imported and warm before the timing, as they are after the first batch of training.
WARMUP += [(f"\\boxed{{{p}}}", g) for p, g in (
    ("x > 2", r"(2, \infty)"),
    (r"[0, 1) \cup (2, 3]", r"[0,1) \cup (2,3]"),
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"),
    ("(x+1)^2", "x^2+2x+1"),
    (r"\sin^2 x + \cos^2 x", "1"),
    ("y = 2x + 3", "2x - y + 3 = 0"),
    ("1, 2", r"\{1, 2\}"),
    (r"\frac{\pi}{3} + k\pi", r"k\pi + \frac{\pi}{3}"),
    ("2^{n+1}", r"2\cdot 2^{n}"),
    ("0.5", r"\frac{1}{2}"),
)]


def load(subset: str) -> tuple[list[dict[str, Any]], int]:
    rows, skipped = [], 0
    for line in (DATA / "labeled" / f"processbench_{subset}.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("gold_answer") is None:
            skipped += 1
            continue
        rows.append(row)
    return rows, skipped


def run_rlvr(verifier: MathVerifier, pairs: list[tuple[str, str]], workers: int) -> tuple[list[bool], Scores]:
    scores = Scores()
    start = time.perf_counter()
    verdicts = verifier.verify_batch(pairs, workers=workers)
    scores.seconds = time.perf_counter() - start
    for v in verdicts:
        scores.timeouts += v.status == "timeout"
        scores.errors += v.status == "error"
        scores.times.append(v.elapsed_s)
    return [v.status == "correct" for v in verdicts], scores


def run_math_verify(pairs: list[tuple[str, str]], gold_wrap: bool = True) -> tuple[list[bool], Scores]:
    from math_verify import parse, verify

    scores = Scores()
    out = []
    start = time.perf_counter()
    for solution, gold in pairs:
        item_start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = parse(f"${gold}$" if gold_wrap else gold)
                ok = bool(verify(g, parse(solution)))
        except Exception:
            scores.errors += 1
            ok = False
        scores.times.append(time.perf_counter() - item_start)
        out.append(ok)
    scores.seconds = time.perf_counter() - start
    return out, scores


CHUNK = 64  # rows per turn when the two systems alternate


def interleaved(verifier: MathVerifier, pairs: list[tuple[str, str]]) -> tuple[list[bool], Scores, list[bool], Scores]:
    """Both systems on the same rows, taking turns every `CHUNK` rows (which goes first alternates).

    This machine's speed drifts by a quarter within a minute (a shared VM: Math-Verify ran 53 and 72 items/s in
    two runs a minute apart); one system after the other would put a drift into the ratio, turns share it.
    """
    ours, theirs, ours_s, theirs_s = [], [], Scores(), Scores()
    for k in range(0, len(pairs), CHUNK):
        chunk = pairs[k : k + CHUNK]
        turns = [0, 1] if (k // CHUNK) % 2 == 0 else [1, 0]
        for turn in turns:
            preds, s = run_rlvr(verifier, chunk, workers=1) if turn == 0 else run_math_verify(chunk)
            (ours if turn == 0 else theirs).extend(preds)
            (ours_s if turn == 0 else theirs_s).merge(s)
    return ours, ours_s, theirs, theirs_s


def self_checks(verifier: MathVerifier) -> dict[str, tuple[int, int, int, int]]:
    """(rlvr passed, math-verify passed, total, rlvr items/s) for GSM8K test and MATH-500 references."""
    sets = {
        "GSM8K test": [(r["answer"], r["answer"].split("####")[-1].strip())
                       for r in map(json.loads, (DATA / "gsm8k_test.jsonl").read_text().splitlines())],
        "MATH-500": [(r["solution"], r["answer"])
                     for r in map(json.loads, (DATA / "math500.jsonl").read_text().splitlines())],
    }
    out = {}
    for name, pairs in sets.items():
        start = time.perf_counter()
        ours = sum(v.status == "correct" for v in verifier.verify_batch(pairs, workers=1))
        ips = int(len(pairs) / (time.perf_counter() - start))
        theirs = sum(run_math_verify([(s, g) for s, g in pairs])[0])
        out[name] = (ours, theirs, len(pairs), ips)
    return out


def speed_line(totals: dict[str, Scores], load: tuple[float, float]) -> str:
    """The items/s ratio of the run, with the 1-minute load average before and after it."""
    ours, theirs = totals["rlvr (1 worker)"], totals["Math-Verify 0.9.0"]
    if not (ours.seconds and theirs.seconds):
        return ""
    ratio = (ours.n / ours.seconds) / (theirs.n / theirs.seconds)
    return (f"Speed, same run: rlvr (1 worker) {ours.n / ours.seconds:.0f} items/s vs Math-Verify "
            f"{theirs.n / theirs.seconds:.0f} items/s = **{ratio:.1f}x** on {ours.n} rows; load average "
            f"{load[0]:.2f} before, {load[1]:.2f} after ({os.cpu_count()} CPUs; a quiet machine is below 0.5).\n")


def markdown(table: list[dict[str, str]], checks: dict[str, tuple[int, int, int, int]], skipped: dict[str, int]) -> str:
    cols = ["system", "subset", "n", "accuracy", "precision", "recall", "F1", "timeouts", "errors", "items/s", "p50 ms",
            "p99 ms", "max ms"]
    lines = ["# Math verifier benchmark: ProcessBench final-answer labels", "",
             "Positive = verifier says the final answer is correct; label = `final_answer_correct`. "
             "Solution text = steps joined by blank lines. "
             "Math-Verify 0.9.0: `verify(parse('$'+gold+'$'), parse(solution))`. "
             "rlvr: `MathVerifier().verify_batch(pairs, workers=N)` (default MathConfig). "
             "Same process, same machine (2 cores).", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r[c] for c in cols) + " |" for r in table]
    lines += ["", "Rows skipped (gold_answer is null): " + ", ".join(f"{k}: {v}" for k, v in skipped.items()), "",
              "## Self-checks (reference solution must verify correct)", "",
              "| set | rlvr | Math-Verify | total | rlvr items/s (1 worker) |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {a} | {b} | {n} | {ips} |" for k, (a, b, n, ips) in checks.items()]
    return "\n".join(lines) + "\n"


def probe_table(args: argparse.Namespace) -> str:
    if args.no_probe:
        return ""
    import math_probe  # benchmarks/ is on sys.path when this file runs as a script

    return "\n" + math_probe.markdown(math_probe.run(), show=args.show)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers2", action="store_true", help="also run rlvr with 2 workers")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "math_verifier.md"))
    ap.add_argument("--dump", default="", help="write rlvr/Math-Verify disagreements with labels to this JSONL")
    ap.add_argument("--no-probe", action="store_true", help="skip the probe-set table (benchmarks/math_probe.py)")
    ap.add_argument("--show", action="store_true", help="list the probe cases each system gets wrong")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    verifier = MathVerifier(MathConfig(timeout_s=10.0))
    table: list[dict[str, str]] = []
    totals = {"rlvr (1 worker)": Scores(), "Math-Verify 0.9.0": Scores(), "rlvr (2 workers)": Scores()}
    skipped: dict[str, int] = {}
    dump = []
    # Warm both systems up on the same answers, outside the timings: the worker start and the ANTLR
    # grammar's first parse of each construct (0.1-0.5 s each; paid once per process in training).
    verifier.verify_batch(WARMUP, workers=2 if args.workers2 else 1)
    run_math_verify([(r, g) for r, g in WARMUP])
    for subset in SUBSETS:
        rows, skipped[subset] = load(subset)
        pairs = [("\n\n".join(r["steps"]), str(r["gold_answer"])) for r in rows]
        labels = [bool(r["final_answer_correct"]) for r in rows]
        systems: list[tuple[str, list[bool], Scores]] = []
        preds, sc, mv, mvs = interleaved(verifier, pairs)
        systems.append(("rlvr (1 worker)", preds, sc))
        if args.workers2:
            p2, sc2 = run_rlvr(verifier, pairs, workers=2)
            systems.append(("rlvr (2 workers)", p2, sc2))
        systems.append(("Math-Verify 0.9.0", mv, mvs))
        for name, ps, s in systems:
            for p, lab in zip(ps, labels, strict=True):
                s.add(p, lab)
            totals[name].merge(s)
            table.append({"system": name, "subset": subset, **s.row()})
        if args.dump:
            for r, p, m, lab in zip(rows, preds, mv, labels, strict=True):
                if p != lab:
                    dump.append({"subset": subset, "id": r["id"], "label": lab, "rlvr": p, "mv": m,
                                 "gold": r["gold_answer"], "tail": "\n\n".join(r["steps"])[-600:]})
    for name, tot in totals.items():
        if tot.n:
            table.append({"system": name, "subset": "**all**", **tot.row()})
    checks = self_checks(verifier)
    verifier.close()
    loads = (load_before, os.getloadavg()[0])
    md = markdown(table, checks, skipped) + "\n" + speed_line(totals, loads) + probe_table(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(md)
    print(md)
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps(d) + "\n" for d in dump))


if __name__ == "__main__":
    main()
