"""Verdict and episode metrics in one place: counts per status, mean reward, pass@k, tool use per episode.

`rlvr verify`, `rlvr eval` and `rlvr synth` count their verdicts with `VerdictStats` (each adds
what only it knows: bad rows, episode errors, resumed rows). Rules every report shares:

- a missing verdict counts as `error`;
- `error` verdicts (the grader or the episode broke, `reward=None`) are not scored: they are left
  out of the mean reward, of a task's `n` and so of pass@k, and counted in `n_error`;
- pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
  on Code", eq. 1): per task with n scored samples of which c are correct,
  `1 - C(n-c, k) / C(n, k)`, computed as the product `1 - prod_{i=n-c+1..n} (1 - k/i)` (their
  numerically stable form), averaged over the tasks with at least k scored samples.

Episode metrics (`EpisodeStats`, `episode_metrics`; keys `EPISODE_METRICS`), read from what the
episode driver records in `Trajectory.info` (`rlvr.rollout.driver.EpisodeRun`): `turns` (model
turns) and `step_components` (a `ToolEnv`'s `tool_calls` and `tool_errors` summed over the
episode). Each is a mean over episodes of a per-episode value, so the metrics of one episode are
its values and a trainer that averages per-sample values over a batch (OpenRLHF's `extra_logs`,
veRL's `reward_extra_info`) gets exactly the batch metrics. `rlvr eval` and `rlvr synth` report
them, and TRL, veRL and OpenRLHF log them per step. An episode that broke counts with the calls
and turns it made before it broke.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rlvr.core.errors import ConfigError
from rlvr.core.types import STATUSES, Trajectory

__all__ = ["EPISODE_METRICS", "EpisodeStats", "TaskCounts", "VerdictStats", "episode_metrics", "mean_pass_at",
           "status_fractions"]


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


EPISODE_METRICS: tuple[str, ...] = ("tool_call_rate", "tool_calls", "tool_errors", "turns")
"""Keys of `episode_metrics`, means over episodes: `tool_call_rate` (episodes with >= 1 tool call),
`tool_calls` (calls per episode), `tool_errors` (calls per episode answered with an error: a
malformed call -- unparsable arguments, no tool name, an unclosed tag --, an unknown tool, bad
arguments, a tool that failed or timed out) and `turns` (model turns per episode)."""


@dataclass
class EpisodeStats:
    """Tool-use counts over a set of episodes (see the module docstring).

    Attributes:
        episodes: episodes counted.
        with_calls: episodes with at least one tool call.
        tool_calls: tool calls made, all episodes.
        tool_errors: calls answered with an error, all episodes.
        turns: model turns, all episodes.
    """

    episodes: int = 0
    with_calls: int = 0
    tool_calls: float = 0.0
    tool_errors: float = 0.0
    turns: int = 0

    def add(self, trajectory: Trajectory) -> None:
        """Count one episode from its `info` (`turns`, `step_components`; absent counts as 0)."""
        components = trajectory.info.get("step_components") or {}
        calls = float(components.get("tool_calls", 0.0))
        self.episodes += 1
        self.with_calls += calls > 0
        self.tool_calls += calls
        self.tool_errors += float(components.get("tool_errors", 0.0))
        self.turns += int(trajectory.info.get("turns", 0))

    def metrics(self) -> dict[str, float]:
        """The `EPISODE_METRICS` means over the episodes counted (every key; 0.0 when none were).

        Example:
            >>> stats = EpisodeStats()
            >>> for calls, errors, turns in [(2, 1, 3), (0, 0, 1)]:
            ...     stats.add(Trajectory(task_id="t", messages=[], info={
            ...         "turns": turns, "step_components": {"tool_calls": calls, "tool_errors": errors}}))
            >>> stats.metrics()
            {'tool_call_rate': 0.5, 'tool_calls': 1.0, 'tool_errors': 0.5, 'turns': 2.0}
        """
        n = self.episodes
        if not n:
            return dict.fromkeys(EPISODE_METRICS, 0.0)
        return {"tool_call_rate": self.with_calls / n, "tool_calls": self.tool_calls / n,
                "tool_errors": self.tool_errors / n, "turns": self.turns / n}


def episode_metrics(trajectories: Iterable[Trajectory]) -> dict[str, float]:
    """`EPISODE_METRICS` of a batch of episodes (of one episode: its own values); see `EpisodeStats`."""
    stats = EpisodeStats()
    for trajectory in trajectories:
        stats.add(trajectory)
    return stats.metrics()
