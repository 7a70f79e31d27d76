"""Benchmark rlvr's SQLVerifier against a BIRD-style evaluator on the shared SQL data.

Run: `python benchmarks/sql_verifier.py [--repeat 3] [--out benchmarks/results/sql_verifier.md]`.

Throughput: every gold query of `../shared/data/sql` (BIRD mini-dev superhero / student_club /
toxicology, Spider department_store) verified against itself:

- BIRD-style: the evaluator of BIRD's `evaluation.py` in a few lines: one ordinary (writable)
  `sqlite3` connection per item, run the prediction then the gold, `set(pred) == set(gold)`, no
  commit (as there); BIRD bounds time with `func_timeout`, here a 10 s `interrupt()` stands in.
- rlvr inline, cold: `SQLVerifier(scoring="inline")`, the per-process gold cache emptied
  before each item (every item pays extraction, sqlglot, two read-only connections, comparison).
- rlvr inline, GRPO group of 4: 4 responses per task, so the gold runs once and 3 hits are cached.
- rlvr process pool: `verify_batch` with 1 and 2 worker processes (hard timeouts; the default).

Each rlvr row runs twice: with `test_suite=False` (the task's database alone decides, as before
issue 31) and with the default `test_suite=True` (a prediction that matches is also run, with the
gold, on the perturbed copies: `rlvr.verifiers.sql.suite`). Gold against gold always matches, so
every item pays the copies: the worst case. The copies themselves are built once per database file
and kept on disk; their build time is a table of its own (built in a fresh temporary folder).

Safety: the adversarial catalog run by both on a fresh writable copy of a real database: the
score each gives and whether the database file changed (sha256).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rlvr.verifiers.sql import SQLVerifier
from rlvr.verifiers.sql import score as sql_score
from rlvr.verifiers.sql.perturb import row_variants

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "sql"
BIRD_DBS = ("superhero", "student_club", "toxicology")


def load_pairs() -> list[tuple[str, str]]:
    """(gold SQL, database path) for every gold of the shared data."""
    pairs = []
    for db_id in BIRD_DBS:
        for row in json.loads((DATA / "bird" / f"mini_dev_{db_id}.json").read_text()):
            pairs.append((row["gold_sql"], str(DATA / "bird" / db_id / f"{db_id}.sqlite")))
    spider = DATA / "spider" / "department_store"
    for line in (spider / "train_gold_department_store.sql").read_text().splitlines():
        if line.strip():
            pairs.append((line.split("\t")[0], str(spider / "department_store.sqlite")))
    return pairs


def bird_style(pred: str, gold: str, db: str) -> bool:
    """BIRD's evaluation.py: one connection, prediction then gold, set equality."""
    conn = sqlite3.connect(db)
    try:
        cursor = conn.cursor()
        cursor.execute(pred)
        predicted = cursor.fetchall()
        cursor.execute(gold)
        truth = cursor.fetchall()
        return set(predicted) == set(truth)
    finally:
        conn.close()


def timed(fn: Callable[[], int], n: int) -> tuple[int, float]:
    start = time.perf_counter()
    correct = fn()
    return correct, n / (time.perf_counter() - start)


def throughput(pairs: list[tuple[str, str]], repeat: int, test_suite: bool) -> list[dict[str, str]]:
    refs = [{"gold": g, "db": db} for g, db in pairs]
    inline = SQLVerifier(scoring="inline", test_suite=test_suite)

    def run_bird() -> int:
        return sum(bird_style(g, g, db) for g, db in pairs)

    def run_cold() -> int:
        ok = 0
        for ref in refs:
            sql_score._GOLD_CACHE.clear()
            ok += inline.verify(ref["gold"], ref).is_correct
        return ok

    def run_group() -> int:
        sql_score._GOLD_CACHE.clear()
        return sum(inline.verify(ref["gold"], ref).is_correct for ref in refs for _ in range(4)) // 4

    rows = []
    systems: list[tuple[str, Callable[[], int], int]] = [
        ("rlvr inline, cold gold cache", run_cold, len(pairs)),
        ("rlvr inline, GRPO group of 4 (gold cached)", run_group, 4 * len(pairs)),
    ]
    if not test_suite:
        systems.insert(0, ("BIRD-style (1 connection, set equality)", run_bird, len(pairs)))
    for workers in (1, 2):
        verifier = SQLVerifier(workers=workers, test_suite=test_suite)
        verifier.verify("SELECT 1", refs[0])  # start the workers outside the timing

        def run_pool(v: SQLVerifier = verifier, w: int = workers) -> int:
            return sum(x.is_correct for x in v.verify_batch([(r["gold"], r) for r in refs], workers=w))

        systems.append((f"rlvr process pool, {workers} worker(s), warm gold cache", run_pool, len(pairs)))
    for name, fn, n in systems:
        best = 0.0
        correct = 0
        for _ in range(repeat):
            correct, qps = timed(fn, n)
            best = max(best, qps)
        rows.append({"system": name, "test_suite": str(test_suite), "items": str(n),
                     "gold = gold correct": f"{correct}/{len(pairs)}", "items/s (best of repeats)": f"{best:.0f}"})
    return rows


def latency(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Per-item latency of inline scoring, gold cache cold, without and with the copies (built, on disk).

    The two settings alternate item by item, so a change of the machine's load hits both alike.
    """
    verifiers = {False: SQLVerifier(scoring="inline", test_suite=False), True: SQLVerifier(scoring="inline")}
    times: dict[bool, list[float]] = {False: [], True: []}
    for gold, db in pairs:
        for test_suite, verifier in verifiers.items():
            sql_score._GOLD_CACHE.clear()
            start = time.perf_counter()
            verifier.verify(gold, {"gold": gold, "db": db})
            times[test_suite].append(time.perf_counter() - start)
    rows = []
    for test_suite, values in times.items():
        values.sort()
        rows.append({"test_suite": str(test_suite), "items": str(len(values)),
                     "p50 ms": f"{1000 * statistics.median(values):.0f}",
                     "p90 ms": f"{1000 * values[int(0.9 * (len(values) - 1))]:.0f}",
                     "p99 ms": f"{1000 * values[int(0.99 * (len(values) - 1))]:.0f}",
                     "max ms": f"{1000 * values[-1]:.0f}", "total s": f"{sum(values):.1f}"})
    return rows


def build_times(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Seconds to build the four row copies of each database file, in a fresh temporary folder."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        before, tempfile.tempdir = tempfile.tempdir, folder
        try:
            for db in sorted({db for _, db in pairs}):
                start = time.perf_counter()
                row_variants(db, "sqlite")
                rows.append({"database": Path(db).name, "bytes": str(Path(db).stat().st_size),
                             "four row copies, s": f"{time.perf_counter() - start:.2f}"})
        finally:
            tempfile.tempdir = before
    return rows


ATTACKS = [
    ("DELETE FROM superhero before the gold", "DELETE FROM superhero"),
    ("DROP TABLE superhero", "DROP TABLE superhero"),
    ("ATTACH DATABASE", "ATTACH DATABASE '{tmp}/x.db' AS x"),
    ("SELECT 1; DROP TABLE superhero", "SELECT 1; DROP TABLE superhero"),
    ("never-ending recursive CTE",
     "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"),
    ("cross join of 10^9 rows", "SELECT count(*) FROM superhero a, superhero b, superhero c"),
    ("100 MB string", "SELECT replace(hex(zeroblob(50000000)), '0', 'x')"),
]
GOLD = "SELECT superhero_name FROM superhero WHERE id < 5"


def _bird_attack(pred: str, db: str) -> str:
    conn = sqlite3.connect(db)
    timer = threading.Timer(10.0, conn.interrupt)  # BIRD wraps this in func_timeout; none here would hang
    timer.start()
    try:
        cursor = conn.cursor()
        try:
            cursor.execute(pred)
            predicted = cursor.fetchall()
        except (sqlite3.Error, sqlite3.Warning) as exc:
            return f"prediction error ({exc})"
        cursor.execute(GOLD)
        return "score 1" if set(predicted) == set(cursor.fetchall()) else "score 0"
    except sqlite3.Error as exc:
        return f"gold failed ({exc})"
    finally:
        timer.cancel()
        conn.close()


def safety() -> list[dict[str, str]]:
    source = DATA / "bird" / "superhero" / "superhero.sqlite"
    rows = []
    verifier = SQLVerifier(query_timeout_s=2.0, timeout_s=10.0)
    for name, attack in ATTACKS:
        outcome = {}
        for system in ("BIRD-style", "rlvr"):
            with tempfile.TemporaryDirectory() as tmp:
                db = Path(tmp) / "superhero.sqlite"
                shutil.copyfile(source, db)
                db.chmod(0o644)
                before = hashlib.sha256(db.read_bytes()).hexdigest()
                pred = attack.format(tmp=tmp)
                if system == "rlvr":
                    verdict = verifier.verify(f"```sql\n{pred}\n```", {"gold": GOLD, "db": str(db)})
                    result = f"{verdict.status}, reward {verdict.reward}"
                else:
                    result = _bird_attack(pred, str(db))
                changed = hashlib.sha256(db.read_bytes()).hexdigest() != before or (Path(tmp) / "x.db").exists()
                outcome[system] = f"{result[:60]}; {'**file changed**' if changed else 'file unchanged'}"
        rows.append({"attack": name, "BIRD-style": outcome["BIRD-style"], "rlvr": outcome["rlvr"]})
    verifier.close()
    return rows


def markdown(rows: list[dict[str, str]]) -> str:
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r[h] for h in head) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats (best is reported)")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables to this Markdown file")
    args = parser.parse_args()
    pairs = load_pairs()
    load = os.getloadavg()
    builds = markdown(build_times(pairs))
    speed = markdown(throughput(pairs, args.repeat, False) + throughput(pairs, args.repeat, True))
    text = (f"Load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)\n\n"
            f"## Building the perturbed copies (once per database file)\n\n{builds}\n\n"
            f"## Throughput: gold vs gold over {len(pairs)} shared-data queries\n\n{speed}\n\n"
            f"## Latency per item (inline, gold cache cold, copies on disk)\n\n{markdown(latency(pairs))}\n\n"
            f"## Adversarial catalog on a writable copy of superhero.sqlite (gold `{GOLD}`)\n\n{markdown(safety())}\n")
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
