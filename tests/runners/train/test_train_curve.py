"""The reward curve of every `rlvr train` run (`rlvr.runners.train.curve`): rows, CSV, plot."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rlvr.runners.train.curve import CURVE_COLUMNS, curve_row, plot_reward_curve, write_curve_csv


def test_curve_row_reads_the_status_fractions_of_the_named_reward() -> None:
    log = {"step": 3, "reward": 0.5, "reward_std": 0.1, "completions/mean_length": 12.0, "num_tokens": 640.0,
           "rlvr/math/correct": 0.5, "rlvr/math/incorrect": 0.25, "rlvr/format/correct": 1.0,
           "rlvr/format/extra/correct": 0.0}
    row = curve_row(log, 1.234, reward_name="math")
    assert row is not None and set(row) == set(CURVE_COLUMNS)
    assert (row["step"], row["reward"], row["reward_std"], row["completion_length"], row["elapsed_s"],
            row["num_tokens"]) == (3, 0.5, 0.1, 12.0, 1.23, 640.0)
    assert (row["correct"], row["incorrect"], row["error"]) == (0.5, 0.25, None)
    assert (curve_row(log, 0.0, reward_name="format") or {})["correct"] == 1.0
    assert (curve_row(log, 0.0) or {})["correct"] == 0.5  # no name: the first rlvr/<name>/<status> key
    assert curve_row({"step": 1, "loss": 0.1}, 0.0) is None and curve_row({"step": 1, "reward": None}, 0.0) is None
    assert (row["tool_call_rate"], row["turns"]) == (None, None)  # a single-turn reward logs no episode metrics


def test_curve_row_reads_the_episode_metrics_of_a_multi_turn_reward() -> None:
    log = {"step": 2, "reward": 1.0, "rlvr/agent/correct": 1.0, "rlvr/agent/tool_call_rate": 0.75,
           "rlvr/agent/tool_calls": 1.25, "rlvr/agent/tool_errors": 0.25, "rlvr/agent/turns": 2.5}
    row = curve_row(log, 0.0)
    assert row is not None
    assert [row[k] for k in ("tool_call_rate", "tool_calls", "tool_errors", "turns")] == [0.75, 1.25, 0.25, 2.5]


def test_curve_csv_has_the_fixed_columns_then_the_extras_and_is_rewritten_whole(tmp_path: Path) -> None:
    path = tmp_path / "reward_curve.csv"
    rows = [{"step": 1, "reward": 0.5, "not_a_column": "x", "rollout_corr": 0.9}, {"step": 2, "reward": 0.75}]
    write_curve_csv(rows, path, extra=("rollout_corr",))
    with path.open() as fh:
        read = list(csv.DictReader(fh))
    assert list(read[0]) == [*CURVE_COLUMNS, "rollout_corr"]
    assert [(r["step"], r["reward"], r["rollout_corr"]) for r in read] == [("1", "0.5", "0.9"), ("2", "0.75", "")]
    write_curve_csv(rows[:1], path)
    assert path.read_text().splitlines()[0] == ",".join(CURVE_COLUMNS) and len(path.read_text().splitlines()) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reward_curve.csv"]  # no temporary file left


def test_reward_curve_is_plotted_to_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [{"step": s, "reward": s / 10, "reward_std": 0.1, "correct": s / 10 if s > 1 else None} for s in range(1, 7)]
    plot_reward_curve(rows, tmp_path / "curve.png", title="six steps")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_zero_one_reward_band_stays_in_its_range_and_the_legend_off_the_data(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [{"step": s, "reward": r, "reward_std": 0.5, "correct": r} for s, r in enumerate([0.1, 0.5, 0.95], 1)]
    fig = plot_reward_curve(rows, tmp_path / "curve.png")
    ax = fig.axes[0]
    band = next(c for c in ax.collections if "std" in str(c.get_label()))
    ys = [y for path in band.get_paths() for _, y in path.vertices]
    assert min(ys) >= 0.0 and max(ys) <= 1.0  # a 0/1 reward's mean +- std never drawn below 0 or above 1
    assert ax.get_ylim() == (-0.02, 1.02)
    assert ax.get_legend().get_bbox_to_anchor().y1 < ax.get_window_extent().y0  # below the axes


def test_a_reward_outside_zero_one_keeps_its_whole_band(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [{"step": s, "reward": r, "reward_std": 1.0} for s, r in enumerate([-1.0, 2.0], 1)]
    ax = plot_reward_curve(rows, tmp_path / "curve.png").axes[0]
    band = next(c for c in ax.collections if "std" in str(c.get_label()))
    ys = [y for path in band.get_paths() for _, y in path.vertices]
    assert min(ys) == -2.0 and max(ys) == 3.0
