"""The cross-trainer episodes (tests/data/parity/episodes.json): one expectation every trainer path is held to.

The fixture holds one scripted multi-turn episode of the calculator env per kind (tool calls and the
right answer, a malformed call, a wrong final answer, truncation at max_turns, a grader that breaks,
a chat template that rewrites history), with the messages, token ids, loss mask, status and reward
rlvr gives (`rlvr.runners.parity.records.build_episode_records`; rebuild with `scripts/record_parity.py`).
This core test (no tokenizer) re-derives the messages and verdicts by stepping the environment and
checks the token fields' invariants; the same records go through rlvr eval and TRL
(tests/runners/test_cross_trainer_trl.py), veRL (tests/adapters/test_cross_trainer_verl.py) and
OpenRLHF (tests/adapters/test_cross_trainer_openrlhf.py), each in its own venv.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rlvr.adapters.export import cached_env
from rlvr.core.types import Message, Verdict
from rlvr.runners.parity.records import EPISODE_KINDS, THINK_STRIPPING_TEMPLATE, action_message, record_task

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "episodes.json"
RECORDS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["records"]
BY_KIND = {r["kind"]: r for r in RECORDS}
IM_END = 2  # SmolLM2's <|im_end|>: every scripted model turn ends on it, as a sampled turn would


def _model_turns(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in record["turns"] if t["role"] == "assistant"]


def test_fixture_holds_each_episode_kind_once() -> None:
    assert [r["kind"] for r in RECORDS] == list(EPISODE_KINDS)
    assert all(r["multi_turn"] and r["tools"] for r in RECORDS)
    assert len({r["id"] for r in RECORDS}) == len(RECORDS) and FIXTURE.stat().st_size < 100_000
    statuses = {r["kind"]: (r["expected"]["status"], r["expected"]["reward"]) for r in RECORDS}
    assert statuses["oracle"] == statuses["tool_error"] == ("correct", 1.0)
    assert statuses["wrong_final"][0] == "incorrect"
    # an error verdict is masked (reward None), never a 0
    assert statuses["error_reference"] == statuses["rewrite_template"] == ("error", None)
    assert [r["kind"] for r in RECORDS if r["expected"]["misaligned"] is not None] == ["rewrite_template"]
    assert BY_KIND["rewrite_template"]["chat_template"] == THINK_STRIPPING_TEMPLATE
    assert all("chat_template" not in r for r in RECORDS if r["kind"] != "rewrite_template")


async def _step_through(record: dict[str, Any]) -> tuple[list[Message], Verdict, bool]:
    """Step a fresh copy of the env with the record's model turns until it ends it."""
    env = cached_env(record["env_id"], record["env_args"]).episode_copy()
    await env.reset(record_task(record))
    for turn in _model_turns(record):
        result = await env.step(action_message(env, turn["text"]))
        if result.terminated or result.truncated:
            assert result.verdict is not None
            return list(env.messages), result.verdict, result.truncated
    raise AssertionError(f"{record['id']}: the episode did not end")


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["kind"])
def test_messages_and_verdict_are_the_environments(record: dict[str, Any]) -> None:
    messages, verdict, truncated = asyncio.run(_step_through(record))
    expected = record["expected"]
    observed = [m.to_openai() for m in messages]
    assert truncated == (record["kind"] == "max_turns")
    if record["kind"] == "rewrite_template":
        # the template, not the env, ends this episode: trainers stop after the turn whose rendering was rewritten
        assert observed[: len(expected["messages"])] == expected["messages"]
        assert expected["misaligned"].startswith("the chat template is not prefix-preserving")
        assert "<think>" in expected["misaligned"] and "fixes:" in expected["misaligned"]
        return
    assert observed == expected["messages"]
    assert (verdict.status, verdict.reward) == (expected["status"], expected["reward"])


def test_truncation_runs_the_turn_limit_out() -> None:
    record = BY_KIND["max_turns"]
    env = cached_env(record["env_id"], record["env_args"])
    assert len(_model_turns(record)) == env.spec.max_turns
    assert [m["role"] for m in record["expected"]["messages"]].count("assistant") == env.spec.max_turns


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["kind"])
def test_loss_mask_keeps_exactly_the_sampled_ids(record: dict[str, Any]) -> None:
    expected = record["expected"]
    played = [m for m in expected["messages"] if m["role"] == "assistant"]
    model_ids = [i for t in _model_turns(record)[: len(played)] for i in t["ids"]]
    assert all(t["ids"][-1] == IM_END for t in _model_turns(record))
    ids, mask = expected["response_ids"], expected["loss_mask"]
    assert len(ids) == len(mask) and [i for i, m in zip(ids, mask, strict=True) if m == 1] == model_ids
    # environment turns (masked 0) sit between model turns; none after the last one
    env_turns = sum(1 for t in record["turns"] if t["role"] == "env")
    assert (0 in mask) == (env_turns > 0 and record["kind"] != "rewrite_template") and mask[-1] == 1
