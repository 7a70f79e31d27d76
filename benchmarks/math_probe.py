"""The math probe set through rlvr and Math-Verify 0.9.0: right / false passes / false fails per kind.

Run: `python benchmarks/math_probe.py [--show]` (seconds). The cases are the golden tables of
`tests/verifiers/math/test_*.py` (one kind per file, each case `(id, gold, response, expected)`).
A false pass: scored correct where the golden verdict is incorrect; a false fail: the reverse.
Math-Verify: `verify(parse('$'+gold+'$'), parse(response))`, as in `benchmarks/math_verifier.py`.
`benchmarks/math_verifier.py` prints this table too, in the same run as ProcessBench.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.verifiers.math import MathConfig
from rlvr.verifiers.math.score import score_math

REPO = Path(__file__).resolve().parents[1]
PROBES = REPO / "tests" / "verifiers" / "math"


def load_cases() -> dict[str, list[Any]]:
    """{kind: cases} from every `test_*.py` table under tests/verifiers/math (kind = file stem)."""
    sys.path.insert(0, str(PROBES))
    out: dict[str, list[Any]] = {}
    for path in sorted(PROBES.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_probe_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases = [c for c in getattr(module, "CASES", ()) if all(hasattr(c, a) for a in ("id", "gold", "response",
                                                                                        "expected"))]
        if cases:  # golden verdict tables only (test_fast_parser.py checks the parser, test_response_length
            out[path.stem.removeprefix("test_")] = cases  # the length limits, as plain tuples)
    return out


@dataclass
class Tally:
    right: int = 0
    false_pass: int = 0
    false_fail: int = 0
    wrong_ids: list[str] = field(default_factory=list)

    def add(self, case_id: str, said_correct: bool, expected: str) -> None:
        if said_correct == (expected == "correct"):
            self.right += 1
        elif said_correct:
            self.false_pass += 1
            self.wrong_ids.append(f"{case_id} (false pass)")
        else:
            self.false_fail += 1
            self.wrong_ids.append(f"{case_id} (false fail)")


_INLINE = MathConfig(scoring="inline")


def rlvr_correct(gold: str, response: str) -> bool:
    return score_math(_INLINE, response, gold).status == "correct"


def math_verify_correct(gold: str, response: str) -> bool:
    from math_verify import parse, verify

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(verify(parse(f"${gold}$"), parse(response)))
    except Exception:  # a crash of Math-Verify counts as "not correct"
        return False


def run() -> dict[str, dict[str, Tally]]:
    """{kind: {"rlvr": Tally, "Math-Verify 0.9.0": Tally}} over the whole probe set."""
    results: dict[str, dict[str, Tally]] = {}
    for kind, cases in load_cases().items():
        ours, theirs = Tally(), Tally()
        for case in cases:
            ours.add(case.id, rlvr_correct(case.gold, case.response), case.expected)
            theirs.add(case.id, math_verify_correct(case.gold, case.response), case.expected)
        results[kind] = {"rlvr": ours, "Math-Verify 0.9.0": theirs}
    return results


def markdown(results: dict[str, dict[str, Tally]], show: bool = False) -> str:
    lines = ["## Probe set (tests/verifiers/math): right / false passes / false fails", "",
             "| kind | cases | rlvr right | rlvr false passes | rlvr false fails "
             "| Math-Verify right | Math-Verify false passes | Math-Verify false fails |",
             "|---|---|---|---|---|---|---|---|"]
    total = {name: Tally() for name in ("rlvr", "Math-Verify 0.9.0")}
    for kind, by in results.items():
        ours, theirs = by["rlvr"], by["Math-Verify 0.9.0"]
        n = ours.right + ours.false_pass + ours.false_fail
        lines.append(f"| {kind} | {n} | {ours.right} | {ours.false_pass} | {ours.false_fail} "
                     f"| {theirs.right} | {theirs.false_pass} | {theirs.false_fail} |")
        for name, t in by.items():
            for f in ("right", "false_pass", "false_fail"):
                setattr(total[name], f, getattr(total[name], f) + getattr(t, f))
    ours, theirs = total["rlvr"], total["Math-Verify 0.9.0"]
    n = ours.right + ours.false_pass + ours.false_fail
    lines.append(f"| **all** | {n} | {ours.right} | {ours.false_pass} | {ours.false_fail} "
                 f"| {theirs.right} | {theirs.false_pass} | {theirs.false_fail} |")
    if show:
        for kind, by in results.items():
            for name, t in by.items():
                if t.wrong_ids:
                    lines.append(f"\n{name} wrong on {kind}: " + ", ".join(t.wrong_ids))
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", action="store_true", help="list the cases each system gets wrong")
    args = ap.parse_args()
    print(markdown(run(), show=args.show))


if __name__ == "__main__":
    main()
