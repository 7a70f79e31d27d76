r"""The work of one verdict is bounded, deterministically, and running out of it is never a pass (issue 31).

A list comparison tries likely partners first (the same string, the nearest value at a fixed point, the same or
the mirrored place), so a list in another order costs about one comparison per item; past `_LIST_WORK` point
values it is undecided, so incorrect. More than 16 other final answers written differently is a hedge without
comparing them. Budgets count work (`exact.work_done`), not time: the same input gets the same verdict on any
machine.
"""

from __future__ import annotations

import random

import pytest

from rlvr.verifiers.math import MathConfig, equivalence, symbolic
from rlvr.verifiers.math.exact import work_done
from rlvr.verifiers.math.score import score_math

CONFIG = MathConfig(scoring="inline")
N = 12
GOLD = r"\boxed{" + ", ".join(rf"\sin({2 * k}x)" for k in range(1, N + 1)) + "}"


def _shuffled(seed: int, shift: int = 0) -> str:
    """The gold's double-angle sines as products (equal only at evaluation points), in a shuffled order."""
    order = list(range(1, N + 1))
    random.Random(seed).shuffle(order)
    return r"\boxed{" + ", ".join(rf"2\sin({k}x)\cos({k + shift}x)" for k in order) + "}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_shuffled_list_of_identities_costs_about_one_comparison_per_item(seed: int) -> None:
    before = work_done()
    verdict = score_math(CONFIG, _shuffled(seed), GOLD)
    assert verdict.status == "correct", verdict.detail
    assert 0 < work_done() - before <= N * 16 + 2 * N  # 16 points per item and a few more: no item tried twice


def test_a_wrong_item_in_a_long_list_is_found() -> None:
    assert score_math(CONFIG, _shuffled(3, shift=1), GOLD).status == "incorrect"


def test_running_out_of_work_is_incorrect_never_correct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(equivalence, "_LIST_WORK", 5)
    equivalence.check_equivalence.cache_clear()
    try:
        verdict = score_math(CONFIG, _shuffled(4), GOLD)
    finally:
        equivalence.check_equivalence.cache_clear()
    assert verdict.status == "incorrect", verdict.detail


def test_the_same_input_does_the_same_work() -> None:
    equivalence.check_equivalence.cache_clear()
    runs = []
    for _ in range(2):
        equivalence.check_equivalence.cache_clear()
        before = work_done()
        score_math(CONFIG, _shuffled(5), GOLD)
        runs.append(work_done() - before)
    assert runs[0] == runs[1] > 0


def test_more_than_sixteen_other_final_answers_is_a_hedge() -> None:
    restated = " ".join(rf"The answer is $5+{'0+' * k}0$." for k in range(17))
    verdict = score_math(CONFIG, r"So \boxed{5}. " + restated, "5")
    assert verdict.status == "incorrect" and "other final answers" in verdict.detail
    few = " ".join(rf"The answer is $5+{'0+' * k}0$." for k in range(3))
    assert score_math(CONFIG, r"So \boxed{5}. " + few, "5").status == "correct"


# Points whose first coordinate is the larger: no interval reading, so the grammar would read each whole.
POINTS = [("1", "0"), (r"\frac{1}{100}", "-8"), ("100", "8"), ("27", r"\sqrt{3}"), (r"\frac{9}{2}", "-1"), ("64", "6")]
WRITTEN = {"1": "1", r"\frac{1}{100}": "10^{-2}", "100": "10^2", "27": "3^3", r"\frac{9}{2}": "4.5", "64": "2^6",
           "0": "0", "-8": "-2^3", "8": r"\sqrt{64}", r"\sqrt{3}": r"3^{\frac{1}{2}}", "-1": "-1", "6": r"\frac{12}{2}"}
POINT_GOLD = r"\boxed{" + ", ".join(f"({a},{b})" for a, b in POINTS) + "}"


def _shuffled_points(seed: int, *, wrong: int | None = None) -> str:
    order = list(range(len(POINTS)))
    random.Random(seed).shuffle(order)
    items = [(WRITTEN[POINTS[k][0]], WRITTEN[POINTS[k][1]] + ("+1" if k == wrong else "")) for k in order]
    return "The points are " + r"\boxed{" + ", ".join(f"\\left({a}, {b}\\right)" for a, b in items) + "}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_shuffled_list_of_points_is_matched_without_parsing_a_point_whole(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlvr.verifiers.math import parse

    whole: list[str] = []
    real = parse.latex2sympy

    def watched(s: str, **kwargs: object) -> object:
        if s.startswith("(") and "," in s:
            whole.append(s)
        return real(s, **kwargs)

    monkeypatch.setattr(parse, "latex2sympy", watched)
    for cached in (parse.to_sympy, symbolic.fingerprint, equivalence.check_equivalence):
        cached.cache_clear()
    verdict = score_math(CONFIG, _shuffled_points(seed), POINT_GOLD)
    assert verdict.status == "correct", verdict.detail
    assert whole == []  # the grammar's 50-150 ms per point: ordering the tries needs only its coordinates' values


@pytest.mark.parametrize("wrong", [0, 3, 5])
def test_a_wrong_coordinate_in_a_shuffled_list_of_points_is_found(wrong: int) -> None:
    assert score_math(CONFIG, _shuffled_points(wrong + 7, wrong=wrong), POINT_GOLD).status == "incorrect"
