"""veRL agent loop for multi-turn rlvr environments, a replay generation backend, and `verl_replay` for parity.

This module imports verl at import time: veRL's `AgentLoopWorker` imports it through the `_target_`
of the `agent_loop.yaml` that `rlvr.adapters.verl.data.export_verl` writes (upstream:
`verl/experimental/agent_loop/agent_loop.py`, `AgentLoopWorker.__init__` loads
`rollout.agent.agent_loop_config_path` into `_agent_loop_registry`; `_run_agent_loop` picks the entry
named by the row's `agent_name` and calls `hydra.utils.instantiate(entry, trainer_config=...,
server_manager=..., tokenizer=..., processor=..., dataset_cls=..., data_config=..., tools=...)`, then
`await loop.run(sampling_params, **row)`).

`RlvrAgentLoop.run` plays one rlvr episode in the episode driver (`rlvr.rollout.driver.EpisodeRun`),
with a policy over veRL's server manager:

1. rebuild the env (`cached_env(env_id, env_args).episode_copy()`) and the `Task` from the row
   (`raw_prompt`, `extra_info.task_id`, `reward_model.ground_truth`) and `reset` it;
2. each model turn: `server_manager.generate(prompt_ids=<prompt + episode so far>)` returns sampled
   ids (veRL's `TokenOutput`); the text (decoded without special tokens) is the assistant message
   the env steps with; the ids are kept as sampled (`rlvr.rollout.tokens.EpisodeTokens`);
3. each env turn: the observation is appended as chat-template suffix ids, `response_mask` 0 on them;
4. the episode's final `Verdict` gives `reward_score` (veRL then skips its reward loop for the
   sample) and `extra_fields["reward_extra_info"]`; an error verdict raises `ErrorVerdict`
   (`on_error: raise`, veRL drops the rollout) or scores NaN (`on_error: nan`), see `rlvr.adapters.verl.reward`.

Prompts and environment turns are rendered with the tokenizer's chat template (veRL's
`actor_rollout_ref.model.custom_chat_template` applies: the worker sets it on the tokenizer) and the
env's tool schemas, as rlvr's own rollouts do; `data.apply_chat_template_kwargs` is not used.

The response budget is veRL's `rollout.response_length` (`TokenBudget(..., "completion")`): each
turn may sample what is left of it (`max_tokens`); when it runs out before the env ends the episode,
the episode is scored by the env's own rule for a cut episode (`EpisodeRun.cut`:
`MultiTurnEnv.final_verdict`, else the last assistant message), as the OpenRLHF agent does, and
`extra_fields["rlvr_truncated"]` is True. The sample is the driver's (`EpisodeRun.training_sample`,
the rule every trainer applies): an environment that raises mid-episode, one that ends without a
verdict, or a chat template that rewrites earlier turns (the episode stops there; its tokens up to
the rewrite are returned) gives an error verdict, which `on_error` turns into a failed rollout or a
NaN score; a failing generation server propagates.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import tempfile
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput
from verl.workers.rollout.replica import TokenOutput

from rlvr.adapters.export import cached_env
from rlvr.adapters.verl.data import export_verl, task_row
from rlvr.adapters.verl.launch import verl_config, verl_overrides
from rlvr.adapters.verl.reward import check_on_error, env_of, episode_extra_info, row_reference, score_result
from rlvr.core.errors import AdapterError
from rlvr.core.types import Message, Task, Verdict
from rlvr.rollout.driver import EpisodeRun, TokenBudget
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import TokenAlignmentError

__all__ = ["RlvrAgentLoop", "verl_replay"]


def row_task(row: Mapping[str, Any]) -> tuple[str, dict[str, Any], Task, Verdict | None]:
    """(env id, env args, task, error verdict or None) of one veRL dataset row (as the agent loop gets it).

    The prompt is the row's `raw_prompt` (veRL's `RLHFDataset` copies `prompt` there), the task id
    and env come from `extra_info`, the reference from `reward_model.ground_truth` (plain text or JSON,
    `extra_info["reference_format"]`). A JSON reference that does not decode gives an error verdict
    (the raw value is kept as reference).

    Raises:
        AdapterError: the row lacks `raw_prompt`/`prompt`, or does not name its environment.
    """
    extra_info = row.get("extra_info")
    env_id, env_args, task_id = env_of(row.get("data_source"), extra_info)
    messages = row.get("raw_prompt", row.get("prompt"))
    if messages is None:
        raise AdapterError(f"row of task {task_id!r} has no 'raw_prompt'/'prompt'; write it with rlvr export")
    reward_model = row.get("reward_model") or {}
    raw = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
    error: Verdict | None = None
    try:
        reference = row_reference(raw, extra_info)
    except AdapterError as exc:
        reference, error = raw, Verdict.error(str(exc))
    prompt = tuple(Message(role=m["role"], content=m.get("content") or "") for m in list(messages))
    return env_id, env_args, Task(id=task_id, prompt=prompt, reference=reference), error


class RlvrAgentLoop(AgentLoopBase):  # type: ignore[misc]
    """An rlvr environment episode as a veRL agent loop (see the module docstring).

    Args:
        *args: veRL's `AgentLoopBase` arguments (trainer_config, server_manager, tokenizer, ...).
        on_error: 'raise' or 'nan', what an error verdict becomes (from `agent_loop.yaml`); the run's
            `reward.custom_reward_function.reward_kwargs.on_error`, when set, wins.
        **kwargs: veRL's keyword arguments (`tools`, `name`, ... are accepted and unused).
    """

    def __init__(self, *args: Any, on_error: str = "raise", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        reward_kwargs = OmegaConf.select(self.config, "reward.custom_reward_function.reward_kwargs") or {}
        # the per-run setting (`verl_overrides` sets it for the legacy trainer) wins over the YAML's
        self.on_error = check_on_error(reward_kwargs.get("on_error", on_error))
        self.prompt_length = int(self.rollout_config.prompt_length)
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play one episode of the row in `kwargs`; return veRL's `AgentLoopOutput`.

        Returns:
            `prompt_ids` (length P <= rollout.prompt_length), `response_ids`/`response_mask`
            (length T <= rollout.response_length; mask 1 on sampled ids, 0 on env ids),
            `response_logprobs` (when every turn reported them), `reward_score`, `num_turns`, and
            `extra_fields` with `reward_extra_info`, `turn_scores` (per-step rewards),
            `tool_rewards` ([]), `rlvr_truncated`.

        Raises:
            ErrorVerdict: an error verdict with on_error='raise' (veRL marks the rollout failed); a
                chat template that rewrites earlier turns (no single sequence exists) gives one.
            AdapterError: the prompt is longer than rollout.prompt_length, or a bad row.
        """
        env_id, env_args, task, error = row_task(kwargs)
        policy = _ServerPolicy(self.server_manager, self.tokenizer, sampling_params)
        run = EpisodeRun(cached_env(env_id, env_args).episode_copy(), task, tokenizer=self.tokenizer,
                         layout="auto", budget=TokenBudget(self.response_length, "completion"),
                         stop_on_misalignment=True)
        await run.reset()
        assert run.tokens is not None
        if len(run.tokens.prompt_ids) > self.prompt_length:
            raise AdapterError(f"task {task.id!r}: the prompt has {len(run.tokens.prompt_ids)} tokens, more than "
                               f"rollout.prompt_length={self.prompt_length}; raise data.max_prompt_length")
        start = time.perf_counter()
        await run.play(policy, raise_policy_errors=True)
        sample = run.training_sample()  # a template that rewrote history: an error verdict, tokens up to there
        assert sample.tokens is not None
        score, info = score_result(error or sample.verdict, on_error=self.on_error,
                                   where=f"task {task.id!r} ({env_id})")
        info.update(episode_extra_info(sample.trajectory))
        tokens, n = sample.tokens, self.response_length
        timing = {"generate_sequences": policy.seconds,
                  "tool_calls": time.perf_counter() - start - policy.seconds}
        return AgentLoopOutput(
            prompt_ids=tokens.prompt_ids,
            response_ids=tokens.completion_ids[:n],
            response_mask=tokens.loss_mask[:n],
            response_logprobs=tokens.logprobs[:n] if tokens.logprobs is not None else None,
            reward_score=score,
            num_turns=len(sample.trajectory.messages),
            metrics=timing,
            extra_fields={**policy.extra_fields, "reward_extra_info": info,
                          "turn_scores": list(sample.trajectory.rewards), "tool_rewards": [],
                          "rlvr_truncated": run.was_cut},
        )


class _ServerPolicy:
    """A token-in `Policy` over veRL's server manager: each turn samples from the episode's exact ids.

    `server_manager.generate(request_id, prompt_ids=, sampling_params=)` returns veRL's `TokenOutput`;
    the turn may sample what is left of `rollout.response_length` (`Episode.max_tokens`); the
    assistant message is the sampled text decoded without special tokens.

    Attributes:
        seconds: time spent waiting for the server, summed over the episode.
        extra_fields: the server's `TokenOutput.extra_fields` for the episode, merged as veRL's own
            `ToolAgentLoop` merges them: the first turn's fields, then each later turn's
            `max_global_steps`. veRL's v1 trainer tags every trajectory with the weight versions
            `min_global_steps`/`max_global_steps` from them (and fails on a trajectory without).
    """

    name = "verl-server"
    accepts_prompt_ids = True

    def __init__(self, server_manager: Any, tokenizer: Any, sampling_params: Mapping[str, Any]) -> None:
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.sampling_params = dict(sampling_params)
        self.request_id = uuid4().hex
        self.seconds = 0.0
        self.extra_fields: dict[str, Any] = {}

    async def generate(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       prompt_ids: Sequence[int] | None = None, episode: Episode | None = None) -> Generation:
        """Sample one turn conditioned on `prompt_ids` (the driver always gives them while the tokens line up)."""
        if prompt_ids is None:
            raise TokenAlignmentError("veRL's server samples from token ids; the episode's tokens do not line up")
        params = dict(self.sampling_params)
        if episode is not None and episode.max_tokens is not None:
            params["max_tokens"] = episode.max_tokens
        start = time.perf_counter()
        out = await self.server_manager.generate(request_id=self.request_id, prompt_ids=list(prompt_ids),
                                                 sampling_params=params)
        self.seconds += time.perf_counter() - start
        fields = dict(getattr(out, "extra_fields", None) or {})
        if not self.extra_fields:
            self.extra_fields.update(fields)
        elif fields.get("max_global_steps") is not None:
            self.extra_fields["max_global_steps"] = fields["max_global_steps"]
        ids = [int(t) for t in out.token_ids]
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return Generation(message=Message(role="assistant", content=text), prompt_ids=list(prompt_ids),
                          completion_ids=ids, logprobs=out.log_probs or None,
                          finish_reason="length" if getattr(out, "stop_reason", None) == "length" else "stop")


class ReplayServerManager:
    """A veRL server manager (`generate(request_id, *, prompt_ids, sampling_params, ...)`) that replays ids.

    Stands in for veRL's `LLMServerClient` in tests and parity checks: each `generate` call returns
    the next recorded model turn (cut to `sampling_params["max_tokens"]`) as a `TokenOutput`.

    Args:
        turns: the model turns' token ids, in order.
        global_steps: the weight version of each turn (None: no version), stamped into the output's
            `extra_fields` as veRL's `LLMServerClient.generate` does (`global_steps`, `min_global_steps`,
            `max_global_steps`).

    Attributes:
        prompts: the `prompt_ids` of each call, for checks.
    """

    def __init__(self, turns: Sequence[Sequence[int]], global_steps: Sequence[int] | None = None) -> None:
        self._turns = deque([int(t) for t in turn] for turn in turns)
        self._steps = deque(global_steps or ())
        self.prompts: list[list[int]] = []

    async def generate(self, request_id: str, *, prompt_ids: Sequence[int], sampling_params: Mapping[str, Any],
                       **kwargs: Any) -> TokenOutput:
        """The next recorded turn.

        Raises:
            AdapterError: no recorded turn is left (the agent loop asked for more turns than recorded).
        """
        if not self._turns:
            raise AdapterError(f"replay request {request_id}: no recorded model turn left "
                               f"(replayed {len(self.prompts)})")
        self.prompts.append([int(t) for t in prompt_ids])
        ids = self._turns.popleft()
        limit = sampling_params.get("max_tokens")
        stop = "completed"
        if limit is not None and len(ids) > int(limit):
            ids, stop = ids[: int(limit)], "length"
        step = self._steps.popleft() if self._steps else None
        fields = {} if step is None else {"global_steps": step, "min_global_steps": step, "max_global_steps": step}
        return TokenOutput(token_ids=ids, log_probs=None, stop_reason=stop, extra_fields=fields)


# -- parity ---------------------------------------------------------------------------------------
def _record_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The veRL dataset row of a parity record: its prompt and its (possibly broken) encoded reference.

    Raises:
        AdapterError: the record lacks `task_id`, `prompt` or `reference`.
    """
    try:
        prompt = tuple(Message(role=m["role"], content=m.get("content") or "") for m in record["prompt"])
        task = Task(id=str(record["task_id"]), prompt=prompt, reference=None)
        reference = record["reference"]
    except (KeyError, TypeError, ValueError) as exc:
        raise AdapterError(f"parity record {record.get('id')!r} needs task_id, prompt and reference: {exc}") from exc
    row = task_row(task, env_id=record["env_id"], env_args=record.get("env_args") or {}, index=0, split="train",
                   multi_turn=bool(record.get("multi_turn")))
    row["reward_model"]["ground_truth"] = reference
    row["raw_prompt"] = row["prompt"]  # what veRL's RLHFDataset adds
    return row


def _instantiate_loop(config: Any, agent_name: str, server: Any, tokenizer: Any) -> Any:
    """Build an agent loop exactly as veRL's `AgentLoopWorker` does (registry entry + hydra instantiate)."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry
    from verl.utils.dataset.rl_dataset import get_dataset_class

    path = config.actor_rollout_ref.rollout.agent.agent_loop_config_path
    if path:
        for entry in OmegaConf.load(path):
            _agent_loop_registry[entry.name] = entry
    return hydra.utils.instantiate(
        config=_agent_loop_registry[agent_name], trainer_config=DictConfigWrap(config=config),
        server_manager=server, tokenizer=tokenizer, processor=None, hf_model_type=None,
        dataset_cls=get_dataset_class(config.data), data_config=DictConfigWrap(config.data), tools=ToolListWrap([]))


async def _reward_via_manager(config: Any, tokenizer: Any, row: Mapping[str, Any], output: Any) -> tuple[Any, Any]:
    """Score one agent-loop output with veRL's reward manager, as `AgentLoopWorker._compute_score` feeds it."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from verl import DataProto
    from verl.trainer.ppo.reward import load_reward_manager

    prompts = torch.tensor([output.prompt_ids], dtype=torch.int64)
    responses = torch.tensor([output.response_ids], dtype=torch.int64)
    input_ids = torch.cat([prompts, responses], dim=1)
    batch = TensorDict({"prompts": prompts, "responses": responses, "input_ids": input_ids,
                        "attention_mask": torch.ones_like(input_ids)}, batch_size=1)
    non_tensor = {k: np.array([v], dtype=object) for k, v in row.items()}
    non_tensor["__num_turns__"] = np.array([output.num_turns])
    manager = load_reward_manager(config, tokenizer)  # inside the running loop: it keeps the loop for executors
    result = await manager.run_single(DataProto(batch=batch, non_tensor_batch=non_tensor))
    return result["reward_score"], result["reward_extra_info"]


_REPLAY_DIRS: list[tempfile.TemporaryDirectory[str]] = []


@functools.lru_cache(maxsize=8)
def _replay_config(env_id: str, env_args_json: str, model: str) -> Any:
    """The veRL config over a one-row export of the env (kept for the process: the reward module lives there)."""
    env_args = json.loads(env_args_json)
    tmp = tempfile.TemporaryDirectory(prefix="rlvr-verl-replay-")
    _REPLAY_DIRS.append(tmp)
    export_verl(cached_env(env_id, env_args), tmp.name, env_id=env_id, env_args=env_args, limit=1, overwrite=True,
                on_error="nan")
    overrides = verl_overrides(tmp.name, model=model, steps=1,
                               trainer_args=["data.max_prompt_length=2048", "data.max_response_length=2048"])
    return verl_config(overrides)


def verl_replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Run one recorded rollout through veRL's own machinery; return its reward and token fields.

    The record (shape: `tests/data/parity/rollouts.json`) names `env_id`, `env_args`, `task_id`,
    `multi_turn` and its model `turns` (`{"role": "assistant", "ids": [...]}`; env turns come from the
    env), its `prompt` and its encoded `reference` (possibly broken, the `error` case). They become a
    veRL row (`task_row`); veRL's config is composed with `verl_overrides` over a one-row export of
    the env (cached per env and process); the agent loop the row names (`single_turn_agent` or rlvr's) is
    instantiated the way `AgentLoopWorker` does it, with a `ReplayServerManager` as generation
    backend. Single-turn rewards then come from veRL's reward manager (`load_reward_manager`, which
    imports the exported `reward.py`), multi-turn rewards from `RlvrAgentLoop`. Error verdicts are
    replayed with on_error='nan' so their tokens are returned; their reward is None.

    Args:
        record: one recorded rollout.
        tokenizer: the policy's Hugging Face tokenizer (its `name_or_path` goes into the config).

    Returns:
        {"reward": float | None, "status": str, "prompt_ids": list[int], "response_ids": list[int],
        "response_mask": list[int]}.

    Raises:
        AdapterError: the record lacks prompt/reference, or the replay ran out of recorded turns.
    """
    row = _record_row(record)
    turns = [t["ids"] for t in record["turns"] if t.get("role") == "assistant"]
    config = _replay_config(record["env_id"], json.dumps(record.get("env_args") or {}, sort_keys=True),
                            str(getattr(tokenizer, "name_or_path", "") or "model"))
    agent_name = row.get("agent_name", config.actor_rollout_ref.rollout.agent.default_agent_loop)

    async def replay() -> dict[str, Any]:
        loop = _instantiate_loop(config, agent_name, ReplayServerManager(turns), tokenizer)
        sampling = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": False}
        output = await loop.run(sampling, **row)
        score, info = output.reward_score, output.extra_fields.get("reward_extra_info")
        if score is None:
            score, info = await _reward_via_manager(config, tokenizer, row, output)
        return {"reward": None if math.isnan(float(score)) else float(score), "status": info["rlvr_status"],
                "prompt_ids": list(output.prompt_ids), "response_ids": list(output.response_ids),
                "response_mask": list(output.response_mask)}

    return asyncio.run(replay())


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a parity fixture file (`{"tokenizer": ..., "records": [...]}`)."""
    data = json.loads(Path(path).read_text())
    return list(data["records"])
