"""The reward curve every `rlvr train` run writes, whichever backend trains: `reward_curve.csv` and `.png`.

One row per logged training step (`CURVE_COLUMNS`, then for veRL and OpenRLHF `EXTRA_COLUMNS`):
TRL's rows come from its logs in this process (`reward_curve_callback`, `curve_row`); veRL's and
OpenRLHF's from what the trainer logged (`rlvr.runners.train.logs`). The CSV is rewritten whole on
each write (temporary file and rename), so a reader never sees half a row; `read_curve_csv` reads
any backend's.
"""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path
from typing import Any

from rlvr.adapters.trl import METRIC_PREFIX
from rlvr.core.metrics import EPISODE_METRICS
from rlvr.core.types import STATUSES
from rlvr.runners.report import figure

__all__ = ["read_curve_csv"]

CURVE_COLUMNS: tuple[str, ...] = (
    "step", "reward", "reward_std", *STATUSES, *EPISODE_METRICS, "completion_length", "elapsed_s", "peak_rss_mb",
    "num_tokens",
)
"""Columns of `reward_curve.csv`; the status columns are fractions of the step's completions; the
episode columns (`rlvr.core.metrics.EPISODE_METRICS`: tool-call rate, tool calls, failed calls and
model turns per episode) are empty where the trainer did not log them (single-turn runs; veRL, whose
training-step metrics never include rlvr's); `num_tokens` is TRL's running count of tokens seen
(prompts + completions, `num_input_tokens_seen`)."""

EXTRA_COLUMNS: tuple[str, ...] = ("step_s", "tokens_per_s", "reward_min", "reward_max", "rollout_actor_corr",
                                  "grad_norm")
"""Columns of a veRL/OpenRLHF `reward_curve.csv` after `CURVE_COLUMNS` (empty where not logged)."""


def to_float(value: Any) -> float | None:
    """`value` as a float; None when it is missing, not a number or NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _reward_metric(log: dict[str, Any], key: str, reward_name: str | None) -> Any:
    """`rlvr/<reward_name>/<key>` from a log entry; with no name, the first `rlvr/*/<key>` key."""
    if reward_name is not None:
        return log.get(f"{METRIC_PREFIX}/{reward_name}/{key}")
    prefix, suffix = f"{METRIC_PREFIX}/", f"/{key}"
    for key, value in log.items():
        if key.startswith(prefix) and key.endswith(suffix) and key.count("/") == 2:
            return value
    return None


def curve_row(log: dict[str, Any], elapsed_s: float, reward_name: str | None = None) -> dict[str, Any] | None:
    """One `reward_curve.csv` row from a TRL training log entry; None for entries without a reward.

    Status fractions come from the `rlvr/<reward_name>/<status>` metrics logged by
    `rlvr.adapters.trl.VerifierReward` (with `reward_name` None: the first such reward found), the
    episode columns from the multi-turn rewards' `rlvr/<reward_name>/<key>` metrics.
    """
    if "reward" not in log or log.get("reward") is None:
        return None
    row: dict[str, Any] = {
        "step": log.get("step"),
        "reward": log.get("reward"),
        "reward_std": log.get("reward_std"),
        "completion_length": log.get("completions/mean_length"),
        "elapsed_s": round(elapsed_s, 2),
        "peak_rss_mb": _peak_rss_mb(),
        "num_tokens": log.get("num_tokens"),
    }
    for key in (*STATUSES, *EPISODE_METRICS):
        row[key] = _reward_metric(log, key, reward_name)
    return row


def _peak_rss_mb() -> float | None:
    """Peak resident memory of this process, MiB (None where `resource` is missing, e.g. Windows)."""
    try:
        import resource
    except ImportError:
        return None
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux reports KiB


def write_curve_csv(rows: list[dict[str, Any]], path: Path, extra: tuple[str, ...] = ()) -> None:
    """Write the curve rows (rewritten whole on each call, via a temporary file and rename).

    Columns: `CURVE_COLUMNS`, then `extra` (a backend's own per-step metrics, e.g. veRL's rollout/actor
    probability correlation); other keys of the rows are left out.
    """
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*CURVE_COLUMNS, *extra], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


def read_curve_csv(path: Path) -> list[dict[str, Any]]:
    """Rows of a `reward_curve.csv` (any backend's) with numbers as floats (missing values None); [] without one."""
    if not path.is_file():
        return []
    with path.open(newline="") as fh:
        return [{k: to_float(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def plot_reward_curve(rows: list[dict[str, Any]], path: Path, title: str = "") -> Any:
    """Plot mean reward (± std) and the fraction correct per step to a PNG (Agg, no pyplot state); returns the
    matplotlib `Figure`.

    Where every reward is in [0, 1] (a verifier's 0/1 or partial-credit reward) the ± std band is clipped to
    [0, 1], since no reward lies outside it, and the y axis shows exactly that range. The legend sits below
    the axes, so it never covers the data.
    """
    from matplotlib.ticker import MaxNLocator

    steps = [float(r["step"]) for r in rows]
    reward = [_nan_if_missing(r["reward"]) for r in rows]
    std = [_nan_if_missing(r.get("reward_std")) for r in rows]
    unit = all(math.isnan(x) or 0.0 <= x <= 1.0 for x in reward)
    fig = figure(7, 4.6, dpi=110)
    ax = fig.add_subplot()
    ax.plot(steps, reward, marker=".", label="mean reward")
    low = [m - s for m, s in zip(reward, std, strict=True)]
    high = [m + s for m, s in zip(reward, std, strict=True)]
    if unit:
        low, high = [max(0.0, x) for x in low], [min(1.0, x) for x in high]
        ax.set_ylim(-0.02, 1.02)
    ax.fill_between(steps, low, high, alpha=0.2, label="± std" + (" (clipped to [0, 1])" if unit else ""))
    if any(r.get("correct") is not None for r in rows):
        ax.plot(steps, [_nan_if_missing(r.get("correct")) for r in rows], linestyle="--", label="fraction correct")
    if len(rows) >= 5:
        window = max(2, len(rows) // 10)
        smooth = [sum(reward[max(0, i - window + 1): i + 1]) / len(reward[max(0, i - window + 1): i + 1])
                  for i in range(len(reward))]
        ax.plot(steps, smooth, linewidth=2, label=f"mean reward, {window}-step moving average")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("training step")
    ax.set_ylabel("reward")
    ax.set_title(title or "GRPO reward curve")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize="small", frameon=False)
    fig.tight_layout()
    fig.savefig(str(path))
    return fig


def _nan_if_missing(value: Any) -> float:
    """`value` as a float, NaN when missing or not a number (a gap in the plotted line)."""
    number = to_float(value)
    return math.nan if number is None else number


def reward_curve_callback(output: Path, title: str, reward_name: str | None = None) -> Any:
    """A `TrainerCallback` that appends to `reward_curve.csv` on every log and plots at the end.

    `reward_name` is the `VerifierReward.__name__` whose status metrics fill the status columns
    (None: the first rlvr reward found in each log). `callback.plot()` draws the PNG from the rows so
    far (used after an interrupted run).
    """
    from transformers import TrainerCallback

    class RewardCurveCallback(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []
            self.start = time.monotonic()
            self.csv_path = output / "reward_curve.csv"
            self.png_path = output / "reward_curve.png"

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.start = time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            row = curve_row({**(logs or {}), "step": state.global_step}, time.monotonic() - self.start,
                            reward_name)
            if row is not None and state.is_world_process_zero:
                self.rows.append(row)
                write_curve_csv(self.rows, self.csv_path)

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if state.is_world_process_zero:
                self.plot()

        def plot(self) -> bool:
            """Plot the rows so far to `reward_curve.png`; False when there are none."""
            if not self.rows:
                return False
            plot_reward_curve(self.rows, self.png_path, title)
            return True

    return RewardCurveCallback()
