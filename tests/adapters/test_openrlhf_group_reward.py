"""OpenRLHF group rewards through OpenRLHF 0.11's own code: `RolloutRayActor.generate_responses` (taken from
its source) runs a prompt's samples concurrently through the real `SingleTurnAgentExecutor`, which loads the
generated `group_reward.py`; the samples meet and are judged in one call by the loopback judge server."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.openrlhf

import test_openrlhf as _o  # noqa: E402  (this folder's OpenRLHF helpers and fixtures)

from judge_http import JudgeServer, Reply, ids_in, ruler_reply, serve  # noqa: E402
from rlvr.adapters.openrlhf import EXTRA_LOG_KEYS, export_openrlhf  # noqa: E402
from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams  # noqa: E402
from rlvr.adapters.openrlhf.group_reward import group_reward_func, write_group_reward_file  # noqa: E402

tokenizer = _o.tokenizer
ST_ID, ST_ARGS = _o.ST_ID, _o.ST_ARGS
TEXTS = ["short", "a much longer answer here", "mid size", "the longest of the answers in this group"]


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    yield from serve()


@dataclass
class Actor(ReplayEngine):
    """The `self` of `RolloutRayActor.generate_responses`: its executor, and itself as the llm engine."""

    executor: Any = None


def _generate_responses() -> Any:
    return _o._upstream_function("trainer/ray/vllm_engine.py", "generate_responses", {"asyncio": asyncio},
                                 cls="RolloutRayActor")


def _setup(tmp_path: Path, server: JudgeServer, group_size: int, wait_s: float = 30.0) -> tuple[Any, list[Any]]:
    from openrlhf.utils import agent

    import rlvr

    env = rlvr.make(ST_ID, **ST_ARGS)
    export_openrlhf(env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=2)
    env.close()
    path = write_group_reward_file(tmp_path, judge={"verifier": "ruler", "base_url": server.url, "model": "m"},
                                   group_size=group_size, wait_s=wait_s)
    return agent.SingleTurnAgentExecutor(str(path)), _o._rows(tmp_path / "train.jsonl")


def _run(executor: Any, tokenizer: Any, row: dict[str, Any], texts: list[str]) -> list[dict[str, Any]]:
    actor = Actor(turns=[_o._turn_ids(tokenizer, t) for t in texts], tokenizer=tokenizer,
                  eos_ids={_o._im_end(tokenizer)}, executor=executor)
    prompt = _o._openrlhf_prompt(tokenizer, row)
    return asyncio.run(_generate_responses()(actor, prompt, row["label"], SamplingParams(), 2048, tokenizer,
                                             num_samples=len(texts)))


def test_samples_of_a_prompt_are_judged_in_one_call(judge_server: JudgeServer, tokenizer: Any,
                                                    tmp_path: Path) -> None:
    judge_server.reply = lambda body: ruler_reply(body, lambda tid, text: min(1.0, len(text) / 40))
    executor, rows = _setup(tmp_path, judge_server, group_size=4)
    for n, row in enumerate(rows, start=1):
        outputs = _run(executor, tokenizer, row, TEXTS)
        assert [o["reward"].item() for o in outputs] == pytest.approx([min(1.0, len(t) / 40) for t in TEXTS])
        assert len(judge_server.requests) == n and len(ids_in(judge_server.requests[-1])) == 4
        assert all(set(o["extra_logs"]) == set(EXTRA_LOG_KEYS) for o in outputs)
    goals = [b["messages"][1]["content"].split("GOAL:")[1][:300] for b in judge_server.requests]
    assert goals[0] != goals[1]


def test_group_failure_is_nan_for_every_sample(judge_server: JudgeServer, tokenizer: Any, tmp_path: Path) -> None:
    judge_server.reply = lambda body: Reply('{"scores": [{"trajectory_id": "1", "explanation": "", "score": 1}]}')
    executor, rows = _setup(tmp_path, judge_server, group_size=3)
    outputs = _run(executor, tokenizer, rows[0], TEXTS[:3])
    assert all(math.isnan(o["reward"].item()) and math.isnan(o["scores"].item()) for o in outputs)
    assert all(o["extra_logs"]["rlvr/status/error"].item() == 1.0 for o in outputs)


def test_incomplete_group_is_judged_after_the_wait(judge_server: JudgeServer, tokenizer: Any, tmp_path: Path) -> None:
    judge_server.reply = lambda body: ruler_reply(body, lambda tid, text: 0.5)
    executor, rows = _setup(tmp_path, judge_server, group_size=4, wait_s=0.5)
    outputs = _run(executor, tokenizer, rows[0], TEXTS[:2])  # only 2 of 4 samples arrive
    assert [o["reward"].item() for o in outputs] == [0.5, 0.5] and len(ids_in(judge_server.requests[0])) == 2


def test_a_batched_call_is_grouped_by_label(judge_server: JudgeServer, tokenizer: Any, tmp_path: Path) -> None:
    judge_server.reply = lambda body: ruler_reply(body, lambda tid, text: 0.25)
    _, rows = _setup(tmp_path, judge_server, group_size=2)
    prompts = [_o._openrlhf_prompt(tokenizer, r) for r in rows for _ in range(2)]
    labels = [r["label"] for r in rows for _ in range(2)]
    queries = [p + t + "<|im_end|>" for p, t in zip(prompts, ["a", "b", "c", "d"], strict=True)]
    out = group_reward_func(queries, prompts, labels, judge={"verifier": "ruler", "base_url": judge_server.url,
                                                             "model": "m"}, group_size=2)
    assert out["rewards"].tolist() == [0.25] * 4 and len(judge_server.requests) == 2
