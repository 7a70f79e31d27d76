"""The reward curve every `rlvr train` run writes, whichever backend trains: `reward_curve.csv` and `.png`.

One row per logged training step (`CURVE_COLUMNS`, then for veRL and OpenRLHF `EXTRA_COLUMNS`):
TRL's rows come from its logs in this process (`reward_curve_callback`, `curve_row`); veRL's and
OpenRLHF's from what the trainer logged (`rlvr.runners.train.logs`). The CSV is rewritten whole on
each write (temporary file and rename), so a reader never sees half a row; `read_curve_csv` reads
any backend's.
"""

from __future__ import annotations

import csv
import json
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
    """Plot mean reward (± std) and the fraction correct per step to a PNG; returns the matplotlib `Figure`.

    Agg, no pyplot state. Where every reward is in [0, 1] (a verifier's 0/1 or partial-credit reward) the
    ± std band is clipped to [0, 1], since no reward lies outside it, and the y axis shows exactly that
    range. The legend sits below the axes, so it never covers the data.
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


def step_line(row: dict[str, Any], max_steps: int | None, step_s: float | None) -> str:
    """One readable console line for a `curve_row`: step, mean reward ± std, fraction correct, tool use, s/step.

    Example: `step 3/16  reward 0.69 ± 0.46  correct 0.62  tool calls 1.00/episode  24.1 s/step`.
    """
    def num(value: Any) -> str:
        number = to_float(value)
        return "-" if number is None else f"{number:.2f}"

    parts = [f"step {row['step']}/{max_steps}" if max_steps else f"step {row['step']}",
             f"reward {num(row.get('reward'))} ± {num(row.get('reward_std'))}"]
    if row.get("correct") is not None:
        parts.append(f"correct {num(row.get('correct'))}")
    if row.get("tool_calls") is not None:
        parts.append(f"tool calls {num(row.get('tool_calls'))}/episode")
    if step_s is not None:
        parts.append(f"{step_s:.1f} s/step")
    return "  ".join(parts)


def reward_curve_callback(output: Path, title: str, reward_name: str | None = None) -> Any:
    """A `TrainerCallback` that appends to `reward_curve.csv` on every log and plots at the end.

    `reward_name` is the `VerifierReward.__name__` whose status metrics fill the status columns
    (None: the first rlvr reward found in each log). `callback.plot()` draws the PNG from the rows so
    far (used after an interrupted run). Every log entry is also appended whole to `train_log.jsonl`
    (the trainer's raw metrics, one JSON object a line, with its `step`), since the console shows one
    short line a step (`step_progress_callback`).
    """
    from transformers import TrainerCallback

    class RewardCurveCallback(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []
            self.start = time.monotonic()
            self.csv_path = output / "reward_curve.csv"
            self.png_path = output / "reward_curve.png"
            self.log_path = output / "train_log.jsonl"

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.start = time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if not state.is_world_process_zero:
                return
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"step": state.global_step, **(logs or {})}, default=str) + "\n")
            row = curve_row({**(logs or {}), "step": state.global_step}, time.monotonic() - self.start,
                            reward_name)
            if row is not None:
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


def step_progress_callback(reward_name: str | None = None) -> Any:
    """Transformers' progress bar, printing one `step_line` a logged step instead of the raw metric dict.

    Put it in place of the trainer's `ProgressCallback` (`trainer.pop_callback(ProgressCallback)`);
    the raw metrics go to `train_log.jsonl` (`reward_curve_callback`).
    """
    from transformers.trainer_callback import ProgressCallback

    class StepProgressCallback(ProgressCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.last: tuple[float, int] = (time.monotonic(), 0)

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            super().on_train_begin(args, state, control, **kw)
            self.last = (time.monotonic(), state.global_step)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if not state.is_world_process_zero or self.training_bar is None:
                return
            row = curve_row({**(logs or {}), "step": state.global_step}, 0.0, reward_name)
            if row is None:  # the closing summary (train_runtime, ...): in train_log.jsonl
                return
            now, steps = time.monotonic(), state.global_step - self.last[1]
            step_s = (now - self.last[0]) / steps if steps > 0 else None
            self.last = (now, state.global_step)
            self.training_bar.write(step_line(row, state.max_steps, step_s))

    return StepProgressCallback()
