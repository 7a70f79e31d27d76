"""OpenRLHF's multi-turn agent over rlvr's episode driver (`rlvr.adapters.openrlhf.agent`).

The `ReplayEngine` (recorded ids as vLLM would return them) and the missing-extra error need no
OpenRLHF (core venv); the tests marked `openrlhf` run the generated agent file's `AgentExecutor`
(OpenRLHF 0.11.2's `MultiTurnAgentExecutor` with rlvr's `execute`) in the `openrlhf` venv.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _generated_files import import_by_path

import rlvr
from rlvr.adapters.openrlhf import export_openrlhf
from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams, agent_classes
from rlvr.core.errors import AdapterError, ConfigError, MissingExtraError

MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 2, "seed": 5}


class _Chars:
    """A tokenizer's `decode` over a fixed vocabulary (id -> character), for the replay engine."""

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return "".join("abcdefghij"[i] for i in ids)


def test_replay_engine_returns_the_recorded_turns_in_order_cut_like_vllm() -> None:
    engine = ReplayEngine(turns=[[1, 2, 9], [3, 4, 5, 9], [1, 9, 3]], tokenizer=_Chars(), eos_ids={9})
    first = asyncio.run(engine.generate([7, 7], SamplingParams()))
    assert first.prompt_token_ids == [7, 7]
    assert (first.outputs[0].token_ids, first.outputs[0].text, first.outputs[0].finish_reason) == ([1, 2, 9], "bcj",
                                                                                                    "stop")
    second = asyncio.run(engine.generate([7, 7, 1, 2, 9, 8], SamplingParams(max_tokens=2)))
    assert (second.outputs[0].token_ids, second.outputs[0].finish_reason) == ([3, 4], "length")  # cut by max_tokens
    third = asyncio.run(engine.generate([0], SamplingParams(max_tokens=2)))
    assert (third.outputs[0].token_ids, third.outputs[0].finish_reason) == ([1, 9], "length")  # cut, even on an EOS
    assert engine.prompts == [[7, 7], [7, 7, 1, 2, 9, 8], [0]]
    with pytest.raises(AdapterError, match=r"replay has 3 recorded turn\(s\) but the executor asked for another"):
        asyncio.run(engine.generate([0], SamplingParams()))


def test_agent_classes_without_openrlhf_name_the_extra() -> None:
    if importlib.util.find_spec("openrlhf") is not None:
        pytest.skip("openrlhf is installed")
    with pytest.raises(MissingExtraError, match=r"rlvr\[openrlhf\]"):
        agent_classes(MT_ID, MT_ARGS)


# -- the generated agent file's executor, in OpenRLHF ----------------------------------------------------------
def _openrlhf() -> tuple[Any, Any, Any, Path]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch on the deprecated pynvml that openrlhf requires
        torch = pytest.importorskip("torch")
    openrlhf = pytest.importorskip("openrlhf")
    agent = pytest.importorskip("openrlhf.utils.agent")
    return torch, openrlhf, agent, Path(openrlhf.__file__).parent


@pytest.fixture(scope="module")
def tokenizer(smollm2_tokenizer: Any) -> Any:
    _openrlhf()
    return smollm2_tokenizer


def _turn(tokenizer: Any, text: str) -> list[int]:
    return [*tokenizer.encode(text, add_special_tokens=False), tokenizer.convert_tokens_to_ids("<|im_end|>")]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _prompt(tokenizer: Any, row: dict[str, Any]) -> str:
    from openrlhf.datasets.prompts_dataset import preprocess_data

    return str(preprocess_data(row, None, "input", "label", tokenizer.apply_chat_template)[0])


@pytest.mark.openrlhf
def test_multi_turn_prompt_longer_than_max_length_is_an_error(tokenizer: Any, tmp_path: Path) -> None:
    # Bug: an episode prompt that left no room to generate became a 0-reward `no_answer` (no action
    # tokens, counted in the group baseline); it is an error verdict now, so its group is dropped.
    from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams

    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    env.close()
    executor = import_by_path(manifest.path(tmp_path, "agent"), "agent_module").AgentExecutor()
    row = _rows(tmp_path / "train.jsonl")[0]
    engine = ReplayEngine(turns=[_turn(tokenizer, "\\boxed{1}")], tokenizer=tokenizer)
    out = asyncio.run(executor.execute(_prompt(tokenizer, row), row["label"], SamplingParams(), 64, tokenizer, engine))
    assert math.isnan(out["reward"]) and math.isnan(out["scores"]) and out["extra_logs"]["rlvr/status/error"] == 1.0
    assert out["action_ranges"] == [] and not engine.prompts


@pytest.mark.openrlhf
def test_multi_turn_engine_failure_propagates(tokenizer: Any, tmp_path: Path) -> None:
    # Bug: an exception of llm_engine.generate (vLLM, not the environment) became an error verdict, so
    # a dead engine silently filtered every group instead of failing the rollout as OpenRLHF does.
    from rlvr.adapters.openrlhf.agent import SamplingParams

    class DeadEngine:
        async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
                           ) -> Any:
            raise RuntimeError("engine is dead")

    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    env.close()
    executor = import_by_path(manifest.path(tmp_path, "agent"), "agent_module").AgentExecutor()
    row = _rows(tmp_path / "train.jsonl")[0]
    with pytest.raises(RuntimeError, match="engine is dead"):
        asyncio.run(executor.execute(_prompt(tokenizer, row), row["label"], SamplingParams(), 2048, tokenizer,
                                     DeadEngine()))


@pytest.mark.openrlhf
def test_agent_file_fails_at_import_for_an_unbuildable_env(tmp_path: Path) -> None:
    _openrlhf()
    from rlvr.adapters.openrlhf import write_agent_file

    path = write_agent_file(tmp_path, env_id="math/no-such-env-v1", env_args={})
    with pytest.raises(ConfigError, match="cannot build env 'math/no-such-env-v1'"):
        import_by_path(path, "agent_module")
