"""Replaying parity records: through TRL's adapters here, through any backend's replay function, compared.

See `rlvr.runners.parity` for the record schema and the replay function signature.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rlvr.adapters.export import cached_env
from rlvr.core.errors import ConfigError
from rlvr.core.types import Message
from rlvr.environments.base import Environment
from rlvr.rollout.batch import clone_factory, rollout_samples
from rlvr.runners.parity.records import (
    ReplayPolicy,
    build_records,
    end_of_turn_id,
    load_tokenizer_for,
    model_turns,
    record_task,
    record_tokenizer,
)

__all__ = ["compare_replay", "trl_replay"]

REPLAY_BACKENDS: dict[str, tuple[str, ...]] = {
    "trl": ("rlvr.runners.parity.replay:trl_replay",),
    "verl": ("rlvr.adapters.verl:verl_replay", "rlvr.adapters.verl.agent:verl_replay"),
    "openrlhf": ("rlvr.adapters.openrlhf:openrlhf_replay",),
}
"""Backend name -> `module:function` candidates of its replay function (the first that exists is used)."""


# -- TRL replay ------------------------------------------------------------------------------------
def _trl_completion_mask(ids: Sequence[int], eos: set[int]) -> list[int]:
    """TRL GRPO's completion mask: 1 up to and including the first EOS, 0 after (grpo_trainer.py)."""
    first = next((i for i, t in enumerate(ids) if t in eos), len(ids) - 1)
    return [1 if i <= first else 0 for i in range(len(ids))]


def _chat_prompt_ids(tokenizer: Any, prompt: list[dict[str, Any]]) -> list[int]:
    out = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True)
    ids = out["input_ids"] if hasattr(out, "keys") else out
    return list(ids)


def trl_replay(record: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Replay one record through rlvr's TRL adapters (TRL 1.16 calling conventions).

    Single-turn: `VerifierReward` called as `GRPOTrainer._calculate_rewards` calls it (the decoded
    completion, special tokens skipped, and the `rlvr_reference` column); prompt ids from the
    tokenizer's own `apply_chat_template(tokenize=True)`; the mask is TRL's completion mask.
    Multi-turn: the `rollout_func` path (`rlvr.adapters.trl.rollout`: the episode driver with a replay
    policy, then the per-sample `env_mask` and `RolloutReward`), and for tool envs also the
    `environment_factory` class driven tool call by tool call, scored by `EpisodeReward`
    (`reward_environment_factory`).

    Returns:
        {"reward", "prompt_ids", "response_ids", "response_mask", "status"[, "reward_environment_factory"]}.
    """
    from rlvr.adapters.trl import REFERENCE_COLUMN, TASK_ID_COLUMN, VerifierReward

    env = cached_env(record["env_id"], record["env_args"])
    turns = model_turns(record)
    if not record["multi_turn"]:
        ids = list(turns[0]["ids"])
        text = tokenizer.decode(ids, skip_special_tokens=True)
        reward = VerifierReward(env, workers=1)
        rewards = reward(prompts=[record["prompt"]], completions=[[{"role": "assistant", "content": text}]],
                         **{REFERENCE_COLUMN: [record["reference"]], TASK_ID_COLUMN: [record["task_id"]]})
        return {"reward": rewards[0], "status": reward.last_verdicts[0].status,
                "prompt_ids": _chat_prompt_ids(tokenizer, record["prompt"]), "response_ids": ids,
                "response_mask": _trl_completion_mask(ids, {end_of_turn_id(tokenizer)})}
    out = _trl_rollout_func_replay(record, env, turns, tokenizer)
    if env.spec.tools:
        out["reward_environment_factory"] = _trl_environment_factory_replay(record, env, turns)
    return out


def _trl_rollout_func_replay(record: dict[str, Any], env: Environment, turns: list[dict[str, Any]],
                             tokenizer: Any) -> dict[str, Any]:
    from rlvr.adapters.trl.rollout import VERDICT_FIELD, RolloutReward, sample_fields

    task = record_task(record)
    (sample,) = asyncio.run(rollout_samples(clone_factory(env), ReplayPolicy(tokenizer, turns), [task], seed=None))
    fields = sample_fields(sample, task, env, tokenizer)
    reward = RolloutReward("rlvr_parity")
    rewards = reward(prompts=[record["prompt"]], completions=[[]], **{VERDICT_FIELD: [sample.verdict.model_dump()]})
    return {"reward": rewards[0], "status": sample.verdict.status, "prompt_ids": fields["prompt_ids"],
            "response_ids": fields["completion_ids"], "response_mask": fields["env_mask"]}


def _trl_environment_factory_replay(record: dict[str, Any], env: Environment, turns: list[dict[str, Any]]) -> Any:
    """Reward of the record through TRL's environment_factory path: tool methods, then `EpisodeReward`."""
    from rlvr.adapters.trl import task_row
    from rlvr.adapters.trl.agent import EpisodeReward, environment_factory
    from rlvr.environments.actions import TextTag, parse_actions

    cls = environment_factory(env)
    instance = cls()
    row = {**task_row(record_task(record)), "rlvr_reference": record["reference"]}
    instance.reset(**row)
    completion: list[dict[str, Any]] = []
    for turn in turns[:-1]:
        calls = parse_actions(Message(role="assistant", content=turn["text"]), [TextTag.hermes()], native=False)
        completion.append({"role": "assistant", "content": turn["text"]})
        for call in calls:
            # TRL answers an unparsable call with an error message, as rlvr does
            answer = getattr(instance, call.name)(**call.arguments) if call.ok else f"Error: {call.error}"
            completion.append({"role": "tool", "content": answer})
    completion.append({"role": "assistant", "content": turns[-1]["text"]})
    return EpisodeReward("rlvr_parity")(prompts=[record["prompt"]], completions=[completion],
                                        environments=[instance])[0]


# -- running replays -------------------------------------------------------------------------------
def _replay_function(backend: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    import importlib

    if backend not in REPLAY_BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; choose one of: {', '.join(REPLAY_BACKENDS)}")
    for target in REPLAY_BACKENDS[backend]:
        module, _, name = target.partition(":")
        fn: Callable[[dict[str, Any], Any], dict[str, Any]] | None = getattr(importlib.import_module(module), name,
                                                                            None)
        if fn is not None:
            return fn
    raise ConfigError(f"no replay function for {backend!r} (looked for {', '.join(REPLAY_BACKENDS[backend])})")


def replay_records(backend: str, records: Sequence[dict[str, Any]], tokenizer: Any) -> list[dict[str, Any]]:
    """Replay every record through `backend`'s replay function in this process.

    Returns:
        One dict per record: the replay's fields plus `id`; a record whose replay raised gets
        `{"id", "error": "<type>: <message>"}` instead (the others still run).
    """
    fn = _replay_function(backend)
    out = []
    for record in records:
        try:
            result = dict(fn(record, record_tokenizer(record, tokenizer)))
        except Exception as exc:  # one broken record must not hide the others' results
            result = {"error": f"{type(exc).__name__}: {exc}"}
        out.append({"id": record["id"], **result})
    return out


def compare_replay(record: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """Differences between a replay result and the record's `expected` (empty when they agree).

    Rewards must be equal (None for None); for multi-turn records the mask over the response must
    equal `expected.loss_mask` and the response ids `expected.response_ids`.
    """
    if "error" in result:
        return [f"replay failed: {result['error']}"]
    expected = record["expected"]
    problems = []
    if result.get("reward") != expected["reward"]:
        problems.append(f"reward {result.get('reward')!r} != expected {expected['reward']!r}")
    if result.get("response_ids") != expected["response_ids"]:
        problems.append("response ids differ")
    if result.get("response_mask") != expected["loss_mask"]:
        problems.append("loss mask differs")
    if result.get("prompt_ids") != expected["prompt_ids"]:
        problems.append("prompt ids differ")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m rlvr.runners.parity record|replay ...` (see `rlvr.runners.parity`)."""
    parser = argparse.ArgumentParser(prog="python -m rlvr.runners.parity",
                                     description="Build parity records or replay them through one backend.")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("replay", help="replay a records file; print one JSON line per record")
    rep.add_argument("--backend", required=True, choices=sorted(REPLAY_BACKENDS))
    rep.add_argument("--records", required=True, type=Path)
    rep.add_argument("--tokenizer", default="smollm2")
    rep.add_argument("--output", type=Path, help="write the results as one JSON list here (default: stdout lines)")
    rec = sub.add_parser("record", help="build records for an env; print them as JSON")
    rec.add_argument("--env", required=True)
    rec.add_argument("--env-args", default="{}", help="JSON object of factory arguments")
    rec.add_argument("--tokenizer", default="smollm2")
    rec.add_argument("--n-tasks", type=int, default=2)
    args = parser.parse_args(argv)
    tokenizer = load_tokenizer_for(args.tokenizer)
    if args.command == "record":
        records = build_records(args.env, json.loads(args.env_args), tokenizer, n_tasks=args.n_tasks)
        print(json.dumps({"tokenizer": args.tokenizer, "records": records}))
        return 0
    data = json.loads(args.records.read_text())
    results = replay_records(args.backend, data["records"], tokenizer)
    if args.output is not None:
        args.output.write_text(json.dumps(results))
    else:
        for line in results:
            print(json.dumps(line))
    return 0
