"""The parity fixture (tests/data/parity/rollouts.json) still matches rlvr: verdicts, env turns, token layout.

Runs in the core venv (no tokenizer): every verdict is re-derived with the environment's own verifier
or by stepping the environment with the recorded model turns, and the token fields are checked for
the episode layout's invariants. The token ids themselves are re-derived in test_parity_trl.py.
Regenerate the fixture with `python scripts/record_parity.py` after a deliberate change.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rlvr.adapters.export import cached_env, decode_reference
from rlvr.runners.parity.records import action_message, record_task
from rlvr.runners.parity.replay import compare_replay

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "rollouts.json"
RECORDS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["records"]
IM_END = 2  # SmolLM2's <|im_end|>: every recorded model turn ends on it, as a sampled turn would


def test_fixture_covers_the_cases_every_backend_must_agree_on() -> None:
    single = {r["kind"] for r in RECORDS if not r["multi_turn"]}
    multi = {r["kind"] for r in RECORDS if r["multi_turn"]}
    assert {"reference", "off_by_one", "empty", "no_answer", "error_reference"} <= single
    assert {"oracle", "wrong_final", "tool_error", "two_calls", "direct_answer"} <= multi
    statuses = {r["expected"]["status"] for r in RECORDS}
    assert statuses == {"correct", "incorrect", "no_answer", "error"}
    assert [r["expected"]["reward"] for r in RECORDS if r["expected"]["status"] == "error"] == [None]
    assert len({r["id"] for r in RECORDS}) == len(RECORDS)
    assert FIXTURE.stat().st_size < 100_000


@pytest.mark.parametrize("record", [r for r in RECORDS if not r["multi_turn"]], ids=lambda r: r["id"])
def test_single_turn_verdict_is_the_verifiers(record: dict[str, Any]) -> None:
    env = cached_env(record["env_id"], record["env_args"])
    (turn,) = record["turns"]
    verdict = env.verifier.verify(turn["text"], decode_reference(record["reference"]))
    assert (verdict.status, verdict.reward) == (record["expected"]["status"], record["expected"]["reward"])
    expected = record["expected"]
    assert expected["response_ids"] == turn["ids"] and turn["ids"][-1] == IM_END
    assert expected["loss_mask"] == [1] * len(turn["ids"])


async def _episode(record: dict[str, Any]) -> tuple[Any, list[list[dict[str, Any]]]]:
    env = cached_env(record["env_id"], record["env_args"]).episode_copy()
    await env.reset(record_task(record))
    observed = []
    for turn in [t for t in record["turns"] if t["role"] == "assistant"]:
        result = await env.step(action_message(env, turn["text"]))
        if result.terminated or result.truncated:
            return result.verdict, observed
        observed.append([m.to_openai() for m in result.messages])
    raise AssertionError(f"{record['id']}: the episode did not end")


@pytest.mark.parametrize("record", [r for r in RECORDS if r["multi_turn"]], ids=lambda r: r["id"])
def test_multi_turn_episode_replays_in_the_environment(record: dict[str, Any]) -> None:
    verdict, observed = asyncio.run(_episode(record))
    expected = record["expected"]
    assert (verdict.status, verdict.reward) == (expected["status"], expected["reward"])
    assert observed == [t["messages"] for t in record["turns"] if t["role"] == "env"]
    # episode layout: the model's own ids, in order, are exactly the masked-in tokens; env tokens are masked out
    model_ids = [i for t in record["turns"] if t["role"] == "assistant" for i in t["ids"]]
    kept = [i for i, m in zip(expected["response_ids"], expected["loss_mask"], strict=True) if m == 1]
    assert kept == model_ids
    assert expected["loss_mask"][: len(record["turns"][0]["ids"])] == [1] * len(record["turns"][0]["ids"])
    env_turns = sum(1 for t in record["turns"] if t["role"] == "env")
    assert (0 in expected["loss_mask"]) == (env_turns > 0)


def test_compare_replay_names_each_difference() -> None:
    record = next(r for r in RECORDS if r["kind"] == "oracle")
    expected = record["expected"]
    same = {"reward": expected["reward"], "prompt_ids": expected["prompt_ids"],
            "response_ids": expected["response_ids"], "response_mask": expected["loss_mask"]}
    assert compare_replay(record, same) == []
    flipped = [1 - m for m in expected["loss_mask"]]
    assert compare_replay(record, {**same, "reward": 0.0, "response_mask": flipped}) == [
        "reward 0.0 != expected 1.0", "loss mask differs"]
    assert compare_replay(record, {"error": "ValueError: boom"}) == ["replay failed: ValueError: boom"]
