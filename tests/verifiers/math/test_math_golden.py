"""Golden tests on real data: Math-Verify's own cases, every GSM8K test and MATH-500 reference solution."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from _math_probe import DATA

from rlvr.core.types import Verdict
from rlvr.verifiers.math import MathConfig, MathVerifier

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"golden data not found at {DATA}")


def _jsonl(name: str) -> list[dict[str, Any]]:
    path = DATA / name
    if not path.is_file():
        return []
    with path.open() as f:
        return [json.loads(line) for line in f]


# Math-Verify cases where rlvr deliberately gives another verdict; keyed by (gold, pred).
_DISAGREE = {
    ("1000.99", "1000,99"): "decimal comma: rlvr reads ',' as a list separator unless it groups thousands",
    ("1,22", "1.22"): "decimal comma: '1,22' is the list {1, 22} for rlvr (MATH answers list roots with commas)",
    ("0,111", "0.111"): "decimal comma: '0,111' is not a thousands grouping, so rlvr reads a list",
    ("$1 - \\frac{1}{\\mathrm{e}}$", "$1 + \\frac{1}{\\mathrm{e}}$"):
        "Math-Verify bug: 1-1/e and 1+1/e are different numbers (the issue's must-pass case)",
    ("$x \\in [-2,7]$", "$-2 \\\\le x \\\\le 7$"):
        "rlvr accepts an inequality for a gold interval in both directions (x in [-2,7] means -2 <= x <= 7)",
    ("$p=5,q=2;p=7,q=2$", "$(5,2),(7,2)$"): "unsupported: ';'-separated groups of labelled values as tuples",
    ("$9$", "Answer \\( \n 9 \n \\)"):
        "rlvr reads an inline block that runs over lines like a display block (Math-Verify reads `\\[ \n 9 \n \\]`)",
}
# Issue 20's soundness rules (2026-12-03), where Math-Verify accepts: M6 — an answer stating a false
# equation (`5+5+1 = 7`) is incorrect even when its last value is right; M5 — labelled values never
# match a bare list by position (the question's order is not known to the verifier). These cost
# realistic answers (false fails): a same-order rule for M5 is the open alternative.
_M6 = "issue 20 M6: the prediction states a false equation; a chain counts only when every link holds"
_M5 = "issue 20 M5: labelled values never match a bare list by position (false fail kept for soundness)"
_SOUNDNESS = {6: _M6, 5: _M5}
# Issue 31 closed mv176 (a tuple assignment of symmetric solutions), mv186/mv188 (indexed roots `x_1`, `x_2` in
# index order) and mv187 (`y_1 = \\boxed{..}`: the label outside the box); distinct names stay M5.
_SOUNDNESS_CASES = {
    "mv074": 6, "mv075": 6, "mv076": 6, "mv086": 6,
    "mv150": 5, "mv163": 5,
}


def _config(note: str) -> MathConfig:
    m = re.search(r"float_rounding=(\d+) \(non-default", note)
    return MathConfig(float_rounding=int(m.group(1)) if m else None)


_MV = _jsonl("mathverify_cases.jsonl")


@pytest.fixture(scope="module")
def mv_verdicts() -> list[Verdict]:
    out: list[Verdict | None] = [None] * len(_MV)
    by_config: dict[MathConfig, list[int]] = {}
    for i, case in enumerate(_MV):
        by_config.setdefault(_config(case["config_note"]), []).append(i)
    for config, idx in by_config.items():
        with MathVerifier(config) as verifier:
            for i, v in zip(idx, verifier.verify_batch([(_MV[i]["pred"], _MV[i]["gold"]) for i in idx], workers=2),
                            strict=True):
                out[i] = v
    return [v for v in out if v is not None]


def _mv_params() -> list[Any]:
    params = []
    for i, case in enumerate(_MV):
        reason = _DISAGREE.get((case["gold"], case["pred"]))
        if f"mv{i:03d}" in _SOUNDNESS_CASES:
            reason = _SOUNDNESS[_SOUNDNESS_CASES[f"mv{i:03d}"]]
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(i, id=f"mv{i:03d}-{case['test_function']}", marks=marks))
    return params


@pytest.mark.parametrize("index", _mv_params())
def test_mathverify_case(index: int, mv_verdicts: list[Verdict]) -> None:
    case, verdict = _MV[index], mv_verdicts[index]
    assert verdict.status in ("correct", "incorrect", "no_answer"), verdict.detail
    assert (verdict.status == "correct") == bool(case["expected"]), (case["gold"], case["pred"][-200:], verdict.detail)


_GSM8K = _jsonl("gsm8k_test.jsonl")
_MATH500 = _jsonl("math500.jsonl")


@pytest.fixture(scope="module")
def self_check_verdicts() -> dict[str, list[Verdict]]:
    with MathVerifier() as verifier:
        gsm = verifier.verify_batch([(r["answer"], r["answer"].split("####")[-1].strip()) for r in _GSM8K], workers=2)
        math500 = verifier.verify_batch([(r["solution"], r["answer"]) for r in _MATH500], workers=2)
    return {"gsm8k": gsm, "math500": math500}


@pytest.mark.parametrize("index", [pytest.param(i, id=f"gsm8k-test-{i}") for i in range(len(_GSM8K))])
def test_gsm8k_reference_solution_is_correct(index: int, self_check_verdicts: dict[str, list[Verdict]]) -> None:
    verdict = self_check_verdicts["gsm8k"][index]
    assert verdict.status == "correct", verdict.detail


@pytest.mark.parametrize(
    "index", [pytest.param(i, id=f"math500-{r.get('unique_id', i)}") for i, r in enumerate(_MATH500)]
)
def test_math500_reference_solution_is_correct(index: int, self_check_verdicts: dict[str, list[Verdict]]) -> None:
    verdict = self_check_verdicts["math500"][index]
    assert verdict.status == "correct", verdict.detail
