"""veRL's logs and any backend's reward_curve.csv read back (`rlvr.runners.train.logs`, `.curve`)."""

from __future__ import annotations

from pathlib import Path

from rlvr.core.metrics import EPISODE_METRICS
from rlvr.runners.train.curve import read_curve_csv
from rlvr.runners.train.logs import openrlhf_rows, read_verl_curve


def test_curve_readers(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    # two lines as veRL's console logger prints them (verl/utils/logger/aggregate_logger.py), between other output
    log.write_text("(TaskRunner pid=1) loading\n"
                   "step:1 - critic/score/mean:0.25 - timing_s/step:10.0 - perf/total_num_tokens:4000 - "
                   "perf/throughput:400.0\n"
                   "(WorkerDict pid=2) something - else:1\n"
                   "(TaskRunner pid=1) step:2 - critic/score/mean:0.5 - timing_s/step:8.0 - "
                   "perf/total_num_tokens:2000 - perf/throughput:250.0\n")
    rows = read_verl_curve(log)
    assert [(r["step"], r["reward"], r["elapsed_s"], r["num_tokens"]) for r in rows] == [
        (1.0, 0.25, 10.0, 4000.0), (2.0, 0.5, 18.0, 6000.0)]
    assert read_verl_curve(tmp_path / "missing.log") == []
    csv_path = tmp_path / "reward_curve.csv"
    csv_path.write_text("step,reward,correct,num_tokens,elapsed_s\n1,0.5,0.5,100,2.0\n2,,nan,250,4.0\n")
    assert read_curve_csv(csv_path) == [{"step": 1.0, "reward": 0.5, "correct": 0.5, "num_tokens": 100.0,
                                         "elapsed_s": 2.0},
                                        {"step": 2.0, "reward": None, "correct": None, "num_tokens": 250.0,
                                         "elapsed_s": 4.0}]


def test_openrlhf_rows_read_the_status_and_tool_use_scalars_of_rlvr_s_agent() -> None:
    # per-step scalars as OpenRLHF's TensorBoard logger writes them: train/<experience info key>, the batch mean
    scalars = [{"step": 1, "train/reward": 0.5, "train/rlvr/status/correct": 0.5, "train/rlvr/tool_call_rate": 0.75,
                "train/rlvr/tool_calls": 1.5, "train/rlvr/tool_errors": 0.25, "train/rlvr/turns": 2.5,
                "train/timing/step_total": 4.0},
               {"step": 2, "train/reward": 1.0, "train/rlvr/status/correct": 1.0}]  # a single-turn run: none
    first, second = openrlhf_rows(scalars)
    assert (first["step"], first["reward"], first["correct"], first["elapsed_s"]) == (1.0, 0.5, 0.5, 4.0)
    assert [first[k] for k in EPISODE_METRICS] == [0.75, 1.5, 0.25, 2.5]
    assert [second[k] for k in EPISODE_METRICS] == [None] * 4
