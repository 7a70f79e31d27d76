"""Verdict metrics, computed in one place: counts per status, mean reward, per-task counts and pass@k.

`rlvr verify`, `rlvr eval` and `rlvr synth` count their verdicts with `VerdictStats` (each adds
what only it knows: bad rows, episode errors, resumed rows). Rules every report shares:

- a missing verdict counts as `error`;
- `error` verdicts (the grader or the episode broke, `reward=None`) are not scored: they are left
  out of the mean reward, of a task's `n` and so of pass@k, and counted in `n_error`;
- pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
  on Code", eq. 1): per task with n scored samples of which c are correct,
  `1 - C(n-c, k) / C(n, k)`, computed as the product `1 - prod_{i=n-c+1..n} (1 - k/i)` (their
  numerically stable form), averaged over the tasks with at least k scored samples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rlvr.core.errors import ConfigError
from rlvr.core.types import STATUSES

__all__ = ["TaskCounts", "VerdictStats", "mean_pass_at", "status_fractions"]


def status_fractions(statuses: Iterable[str]) -> dict[str, float]:
    """The fraction of each status of `STATUSES` among `statuses`, every status a key (in order).

    For one verdict's status this is its indicator (1.0 on it, 0.0 elsewhere): the fixed key set that
    trainers' metric batching needs (veRL's `reward_extra_info`, OpenRLHF's `extra_logs`, TRL's
    `log_metric`). No statuses give 0.0 everywhere.
    """
    counts = Counter(statuses)
    total = sum(counts.values())
    return {s: counts.get(s, 0) / total if total else 0.0 for s in STATUSES}


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: n samples, c correct (Chen et al. 2021, eq. 1, product form).

    Raises:
        ConfigError: unless 0 <= c <= n and 1 <= k <= n.

    Example:
        >>> round(pass_at_k(10, 3, 1), 4)
        0.3
        >>> round(pass_at_k(10, 3, 5), 4)
        0.9167
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ConfigError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass
class TaskCounts:
    """Sample counts of one task.

    Attributes:
        task_id: the task.
        n: scored samples (status other than `error`).
        n_correct: samples scored `correct`.
        n_error: samples whose episode or grader broke (left out of `n`).
    """

    task_id: str
    n: int = 0
    n_correct: int = 0
    n_error: int = 0

    @property
    def pass_rate(self) -> float | None:
        """n_correct / n, or None when no sample was scored."""
        return self.n_correct / self.n if self.n else None


def mean_pass_at(counts: Iterable[TaskCounts], k: int) -> tuple[float | None, int]:
    """(mean pass@k over the tasks with >= k scored samples, in the given order; number of such tasks)."""
    values = [pass_at_k(c.n, c.n_correct, k) for c in counts if c.n >= k]
    return (sum(values) / len(values) if values else None), len(values)


@dataclass
class VerdictStats:
    """Counts over a set of verdicts.

    Attributes:
        statuses: status -> verdicts (`error` for a missing one).
        reward_sum: sum of the scored verdicts' rewards.
        rewarded: verdicts with a reward (every status but `error`).
        tasks: task id -> its counts, for verdicts added with a task id (first-seen order).
    """

    statuses: Counter[str] = field(default_factory=Counter)
    reward_sum: float = 0.0
    rewarded: int = 0
    tasks: dict[str, TaskCounts] = field(default_factory=dict)

    def count(self, status: str, reward: float | None, task_id: str | None = None) -> None:
        """Count one verdict by its status and reward (None: not scored), under `task_id` when given."""
        self.statuses[status] += 1
        if reward is not None:
            self.reward_sum += reward
            self.rewarded += 1
        if task_id is not None:
            counts = self.tasks.setdefault(task_id, TaskCounts(task_id))
            counts.n_error += status == "error"
            counts.n += status != "error"
            counts.n_correct += status == "correct"

    @property
    def total(self) -> int:
        """Verdicts counted (every status)."""
        return sum(self.statuses.values())

    @property
    def mean_reward(self) -> float | None:
        """Mean reward over the scored verdicts, or None when none was scored."""
        return self.reward_sum / self.rewarded if self.rewarded else None

    def pass_at(self, k: int) -> tuple[float | None, int]:
        """(mean pass@k over tasks with >= k scored samples, number of such tasks); see `mean_pass_at`."""
        return mean_pass_at(self.tasks.values(), k)
