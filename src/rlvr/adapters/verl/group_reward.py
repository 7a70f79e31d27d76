"""veRL group rewards (LLM judges such as RULER): a batch `compute_score` and a reward-loop manager.

Two entry points, for veRL's two reward paths (verl 0.9.1, read in its wheel):

- `compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **reward_kwargs)`:
  the signature `verl.workers.reward_manager.batch.BatchRewardManager.verify` calls over the whole
  batch (`reward_model.reward_manager=batch`, `custom_reward_function.name=compute_score_batch`).
  Rows of one prompt (same `data_source` and `extra_info` task id / index, as `rlvr export --backend
  verl` writes them) are judged together in one call. Returns one dict per row: `score` plus the
  `rlvr_*` keys of `rlvr.adapters.verl.reward.reward_extra_info`. An error verdict scores NaN here
  (`on_error="nan"`, default: raising would fail the whole batch), so veRL's GRPO gives that
  group NaN advantages and skips the step rather than learning a 0.
- `RlvrGroupRewardManager` (built lazily from `verl.experimental.reward_loop.reward_manager.base
  .RewardManagerBase`): the reward-loop manager of veRL 0.9's default trainer, loaded with
  `reward.reward_manager.source=importlib`, `reward.reward_manager.module.path=<this file>`,
  `reward.reward_manager.name=RlvrGroupRewardManager`. The loop calls `run_single` once per sample,
  all samples of a worker's chunk as concurrent asyncio tasks (`RewardLoopWorker.compute_score_batch`);
  members of one prompt (non-tensor `uid`, else the task id) meet in a `GroupBatcher` of
  `actor_rollout_ref.rollout.n` and are judged in one call. An error verdict raises by default
  (`on_error="raise"`: veRL's v1 trainer drops that rollout, see `rlvr.adapters.verl.reward`).

Both read the judge from the reward kwargs: `judge` = `{"verifier": "ruler", "base_url": ...,
"model": ..., ...}` (a mapping or its JSON; `+reward.custom_reward_function.reward_kwargs.judge.model=...`),
and the question from `extra_info["prompt"]`/`raw_prompt` when present, else from the task
(`rlvr.make(env_id, **env_args)`, found by `task_id`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rlvr.adapters.export import cached_env, decode_reference
from rlvr.adapters.group_reward import GroupBatcher, group_verifier
from rlvr.adapters.verl.reward import row_reference, score_result
from rlvr.core.errors import AdapterError
from rlvr.core.types import Verdict
from rlvr.verifiers.judge.config import judge_reference

__all__ = ["compute_score_batch"]  # + RlvrGroupRewardManager, built on access

_TASKS: dict[str, dict[str, Any]] = {}
_TASKS_LOCK = threading.Lock()


def _info(extra_info: Any) -> Mapping[str, Any]:
    return extra_info if isinstance(extra_info, Mapping) else {}


def group_key(data_source: Any, extra_info: Any, uid: Any = None) -> str:
    """The group of one row: veRL's `uid` when given, else data source + task id (or index)."""
    if uid is not None:
        return f"uid:{uid}"
    info = _info(extra_info)
    return json.dumps([str(data_source), info.get("task_id", info.get("index"))], default=str)


def question_of(extra_info: Any, raw_prompt: Any = None) -> Any:
    """The question for the judge: `raw_prompt`, `extra_info["prompt"]`, else the exported task's prompt.

    Raises:
        AdapterError: none of them is available (the row was not written by `rlvr export --backend verl`).
    """
    if raw_prompt is not None:
        return [dict(m) for m in raw_prompt]
    info = _info(extra_info)
    if info.get("prompt") is not None:
        return info["prompt"]
    env_id, task_id = info.get("env_id"), info.get("task_id")
    if not env_id or task_id is None:
        raise AdapterError("the judge needs the question: the row has no raw_prompt, extra_info.prompt or "
                           "extra_info env_id + task_id (export the data with rlvr export --backend verl)")
    env_args = decode_reference(info.get("env_args") or "{}")
    key = json.dumps([env_id, env_args], sort_keys=True)
    with _TASKS_LOCK:
        if key not in _TASKS:
            env = cached_env(str(env_id), env_args)
            _TASKS[key] = {t.id: [m.to_openai() for m in t.prompt] for t in env.tasks}
        prompts = _TASKS[key]
    if task_id not in prompts:
        raise AdapterError(f"task {task_id!r} is not in env {env_id!r}; re-export the data")
    return prompts[task_id]


def compute_score_batch(
    data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None, *, judge: Mapping[str, Any] | str | None = None,
    on_error: str = "nan", **kwargs: Any,
) -> list[dict[str, Any]]:
    """Group-judge a veRL batch (the `BatchRewardManager` signature); one result dict per row, in order.

    Args:
        data_sources: N data sources (env ids).
        solution_strs: N decoded responses.
        ground_truths: N references (`reward_model.ground_truth`: plain text or JSON, as each row's
            `extra_info["reference_format"]` says).
        extra_infos: N `extra_info` dicts (task id, env id and args, optional prompt).
        judge: the group verifier's options, `{"verifier": "ruler", "base_url", "model", ...}`.
        on_error: 'nan' (default) or 'raise', what an error verdict becomes (module docstring).
        **kwargs: other reward kwargs veRL passes (ignored).

    Returns:
        `[{"score": float, "rlvr_status": str, "rlvr_<status>": 0/1, "rlvr_elapsed_s": float}, ...]`.

    Raises:
        AdapterError: no `judge` options, lists of different lengths, or a row without its question.
    """
    if judge is None:
        raise AdapterError("compute_score_batch needs reward_kwargs.judge = {verifier: ruler, base_url, model, ...}")
    infos = list(extra_infos) if extra_infos is not None else [{}] * len(solution_strs)
    if not len(data_sources) == len(solution_strs) == len(ground_truths) == len(infos):
        raise AdapterError(f"compute_score_batch got {len(data_sources)} data sources, {len(solution_strs)} "
                           f"responses, {len(ground_truths)} ground truths and {len(infos)} extra infos")
    verifier = group_verifier(judge)
    members: dict[str, list[int]] = {}
    for i, (source, info) in enumerate(zip(data_sources, infos, strict=True)):
        members.setdefault(group_key(source, info), []).append(i)
    groups = []
    for rows in members.values():
        first = rows[0]
        reference = judge_reference(question_of(infos[first]), row_reference(ground_truths[first], infos[first]))
        groups.append(([solution_strs[i] for i in rows], reference))
    results = verifier.verify_groups(groups)  # type: ignore[attr-defined]
    out: list[dict[str, Any]] = [{} for _ in solution_strs]
    for rows, verdicts in zip(members.values(), results, strict=True):
        for i, verdict in zip(rows, verdicts, strict=True):
            score, info = score_result(verdict, on_error=on_error, where=f"row {i}")
            out[i] = {"score": score, **info}
    return out


def _manager_class() -> type:
    """Build `RlvrGroupRewardManager` on veRL's `RewardManagerBase` (imports verl only when asked for)."""
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

    class RlvrGroupRewardManager(RewardManagerBase):  # type: ignore[misc]
        """veRL 0.9 reward-loop manager judging each prompt's `rollout.n` responses in one call."""

        def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **kwargs: Any) -> None:
            super().__init__(config, tokenizer, compute_score)
            reward_kwargs = dict(config.reward.custom_reward_function.get("reward_kwargs") or {})
            judge = reward_kwargs.get("judge")
            if judge is None:
                raise AdapterError("RlvrGroupRewardManager needs "
                                   "+reward.custom_reward_function.reward_kwargs.judge.model=... (and base_url)")
            options = judge if isinstance(judge, str) else {k: judge[k] for k in judge}
            self.on_error = str(reward_kwargs.get("on_error", "raise"))
            size = int(config.actor_rollout_ref.rollout.n)
            self.batcher = GroupBatcher(group_verifier(options), size, float(reward_kwargs.get("group_wait_s", 30)))

        async def run_single(self, data: Any) -> dict[str, Any]:
            item = data[-1:][0]
            response_ids = item.batch["responses"]
            valid = int(item.batch["attention_mask"][-response_ids.shape[-1]:].sum())
            text = self.tokenizer.decode(response_ids[:valid], skip_special_tokens=True)
            extras = item.non_tensor_batch
            info = extras.get("extra_info", {})
            reference = judge_reference(question_of(info, extras.get("raw_prompt")),
                                        row_reference(extras["reward_model"]["ground_truth"], info))
            key = group_key(extras.get("data_source"), info, extras.get("uid"))
            verdict: Verdict = await self.batcher.asubmit(key, text, reference)
            score, extra = score_result(verdict, on_error=self.on_error, where=f"group {key}")
            return {"reward_score": score, "reward_extra_info": extra}

    return RlvrGroupRewardManager


_CLASS: list[type] = []


def __getattr__(name: str) -> Any:
    if name == "RlvrGroupRewardManager":
        if not _CLASS:
            _CLASS.append(_manager_class())
        return _CLASS[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
