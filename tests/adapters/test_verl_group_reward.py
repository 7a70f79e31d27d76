"""veRL group rewards against veRL 0.9's real classes: the reward loop's `RewardLoopWorker` with
`RlvrGroupRewardManager` (importlib source) and the legacy `BatchRewardManager` with
`compute_score_batch`; the judge is the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.verl

import test_verl as _verl  # noqa: E402  (this folder's veRL fixtures and batch builders)

from judge_http import JudgeServer, Reply, ids_in, ruler_reply, serve  # noqa: E402
from rlvr.adapters.verl import UnscorableSampleError  # noqa: E402
from rlvr.adapters.verl import group_reward as verl_group_reward  # noqa: E402

_close_cached_envs, model_dir, st_env, st_export, tokenizer = (
    _verl._close_cached_envs, _verl.model_dir, _verl.st_env, _verl.st_export, _verl.tokenizer)
_config, _data_proto, _reward_loop, pq = _verl._config, _verl._data_proto, _verl._reward_loop, _verl.pq
TEXTS = ["short", "a much longer answer", "mid answer", "x", "yy", "the longest answer of them all", "zzz", "q"]


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    yield from serve()


def _by_length(body: dict[str, Any]) -> Reply:
    return ruler_reply(body, lambda tid, text: min(1.0, len(text) / 40))


def _judge_args(server: JudgeServer, *extra: str) -> list[str]:
    path = Path(verl_group_reward.__file__)
    return ["reward.reward_manager.source=importlib", f"reward.reward_manager.module.path={path}",
            "reward.reward_manager.name=RlvrGroupRewardManager", "actor_rollout_ref.rollout.n=2",
            f"+reward.custom_reward_function.reward_kwargs.judge.base_url={server.url}",
            "+reward.custom_reward_function.reward_kwargs.judge.model=m", *extra]


def _rows(st_export: Path) -> list[dict[str, Any]]:
    rows = pq.read_table(st_export / "train.parquet").to_pylist()
    return [row for row in rows for _ in range(2)]  # rollout.n = 2: each prompt twice, as veRL repeats


def test_reward_loop_judges_each_prompt_group_in_one_call(judge_server: JudgeServer, st_export: Path,
                                                          tokenizer: Any, model_dir: Path) -> None:
    judge_server.reply = _by_length
    rows = _rows(st_export)
    data = _data_proto(tokenizer, rows, TEXTS)
    outputs = _reward_loop(_config(st_export, model_dir, *_judge_args(judge_server)), data)
    assert [o["reward_score"] for o in outputs] == [min(1.0, len(t) / 40) for t in TEXTS]
    assert len(judge_server.requests) == 4 and all(len(ids_in(b)) == 2 for b in judge_server.requests)
    asked = {b["messages"][1]["content"].split("GOAL:")[1][:400] for b in judge_server.requests}
    assert len(asked) == 4  # four different questions, one call each
    assert {o["reward_extra_info"]["rlvr_status"] for o in outputs} <= {"correct", "incorrect"}


def test_reward_loop_error_verdict_raises_or_scores_nan(judge_server: JudgeServer, st_export: Path,
                                                        tokenizer: Any, model_dir: Path) -> None:
    judge_server.reply = lambda body: Reply('{"scores": []}')
    data = _data_proto(tokenizer, _rows(st_export)[:2], TEXTS[:2])
    with pytest.raises(UnscorableSampleError, match="could not score"):
        _reward_loop(_config(st_export, model_dir, *_judge_args(judge_server)), data)
    nan = _judge_args(judge_server, "+reward.custom_reward_function.reward_kwargs.on_error=nan")
    outputs = _reward_loop(_config(st_export, model_dir, *nan), data)
    assert all(math.isnan(o["reward_score"]) and o["reward_extra_info"]["rlvr_status"] == "error" for o in outputs)


def test_batch_reward_manager_with_compute_score_batch(judge_server: JudgeServer, st_export: Path,
                                                        tokenizer: Any) -> None:
    from verl.workers.reward_manager.batch import BatchRewardManager

    judge_server.reply = _by_length
    rows = _rows(st_export)
    data = _data_proto(tokenizer, rows, TEXTS)
    manager = BatchRewardManager(tokenizer, 0, verl_group_reward.compute_score_batch,
                                 judge={"verifier": "ruler", "base_url": judge_server.url, "model": "m"})
    result = manager(data, return_dict=True)
    expected = [min(1.0, len(t) / 40) for t in TEXTS]
    assert [round(float(x), 6) for x in result["reward_tensor"].sum(dim=1)] == [round(e, 6) for e in expected]
    assert result["reward_extra_info"]["rlvr_status"] == ["correct" if e >= 0.5 else "incorrect" for e in expected]
    assert len(judge_server.requests) == 4
    judge_server.reply = lambda body: Reply("not json")
    failed = BatchRewardManager(tokenizer, 0, verl_group_reward.compute_score_batch,
                                judge=json.dumps({"verifier": "ruler", "base_url": judge_server.url, "model": "m2"}))
    scores = failed(data, return_dict=True)["reward_tensor"].sum(dim=1)
    assert all(math.isnan(float(s)) for s in scores)  # masked as NaN, never a 0
