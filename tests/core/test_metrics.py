"""Verdict metrics: status counts, mean reward, per-task counts, pass@k."""

from __future__ import annotations

from typing import get_args

import pytest

from rlvr.core.metrics import TaskCounts, VerdictStats, mean_pass_at, pass_at_k, status_fractions
from rlvr.core.types import STATUSES, Status, Verdict


def test_statuses_are_the_status_type_in_order() -> None:
    assert STATUSES == get_args(Status) == ("correct", "incorrect", "no_answer", "timeout", "error")


def test_error_verdicts_are_counted_but_never_scored() -> None:
    stats = VerdictStats()
    verdicts = [Verdict(status="correct", reward=1.0), Verdict(status="incorrect", reward=0.0),
                Verdict.error("grader broke"), Verdict(status="timeout", reward=0.0)]
    for i, verdict in enumerate(verdicts):
        stats.count(verdict.status, verdict.reward, task_id=f"t{i % 2}")
    assert stats.total == 4 and stats.statuses["error"] == 1
    assert stats.rewarded == 3 and stats.mean_reward == 1.0 / 3
    assert stats.tasks["t0"] == TaskCounts("t0", n=1, n_correct=1, n_error=1)
    assert stats.tasks["t1"] == TaskCounts("t1", n=2, n_correct=0, n_error=0)


def test_nothing_scored_has_no_mean_reward_and_no_pass_rate() -> None:
    stats = VerdictStats()
    stats.count("error", None, task_id="t")
    assert stats.mean_reward is None and stats.tasks["t"].pass_rate is None
    assert stats.pass_at(1) == (None, 0)


def test_pass_at_k_averages_over_tasks_with_k_scored_samples() -> None:
    counts = [TaskCounts("a", n=4, n_correct=2), TaskCounts("b", n=4, n_correct=0), TaskCounts("c", n=1, n_correct=1)]
    assert mean_pass_at(counts, 1) == ((0.5 + 0.0 + 1.0) / 3, 3)
    assert mean_pass_at(counts, 2) == ((pass_at_k(4, 2, 2) + 0.0) / 2, 2)  # task c has too few samples
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # 1 - C(2, 2) / C(4, 2)


def test_status_fractions_have_every_status_as_a_key() -> None:
    assert list(status_fractions(["error"])) == list(STATUSES)  # the fixed key set trainers batch metrics by
    assert status_fractions(["error"])["error"] == 1.0 and sum(status_fractions(["error"]).values()) == 1.0
    assert status_fractions(["correct", "correct", "timeout", "incorrect"])["correct"] == 0.5
    assert set(status_fractions([]).values()) == {0.0}
