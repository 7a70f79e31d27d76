"""The math probe set's shared table format: each `test_*.py` here holds one kind's golden cases.

A case is `(id, gold, response, expected)`: `expected` is "correct" or "incorrect" (no answer
counts as not correct). `benchmarks/math_probe.py` runs every table through rlvr and Math-Verify.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pytest

from rlvr.verifiers.math import MathConfig
from rlvr.verifiers.math.score import score_math

CONFIG = MathConfig(scoring="inline")
# The shared math data (`../shared/data/math` beside the checkout); RLVR_SHARED_DATA names another `data` folder
# (a git worktree elsewhere). Tests that read it skip when it is absent.
DATA = Path(os.environ.get("RLVR_SHARED_DATA") or Path(__file__).resolve().parents[4] / "shared" / "data") / "math"


class Case(NamedTuple):
    """One golden probe: `response` scored against `gold` must be `expected`."""

    id: str
    gold: str
    response: str
    expected: str


def params(cases: list[Case]) -> list[object]:
    """`pytest.param` per case, named by its id (ids must be unique within a table)."""
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    assert all(c.expected in ("correct", "incorrect") for c in cases)
    return [pytest.param(c, id=c.id) for c in cases]


def assert_case(case: Case) -> None:
    """Score the case with the default MathConfig and check its golden verdict."""
    verdict = score_math(CONFIG, case.response, case.gold)
    got = "correct" if verdict.status == "correct" else "incorrect"
    assert got == case.expected, f"{case.id}: {verdict.status}: {verdict.detail}"
