"""OpenRLHF multi-turn agent for rlvr environments, plus a replay generation backend.

OpenRLHF 0.11.2 loads `--train.agent_func_path` with `_load_agent_executor`
(`openrlhf/trainer/ray/vllm_engine.py`): the file must export `AgentExecutor`, a subclass of
`openrlhf.utils.agent.AgentExecutorBase`, which it builds with no arguments; each vLLM Ray actor then
calls `await executor.execute(prompt=, label=, sampling_params=, max_length=, hf_tokenizer=,
llm_engine=self, images=)` once per sample (`RolloutRayActor.generate_responses`), where
`llm_engine.generate(prompt_token_ids, sampling_params)` returns a vLLM `RequestOutput`
(`outputs[0].token_ids / text / finish_reason / logprobs`). The returned dict must hold
`observation_tokens` (prompt + every turn, ids), `action_ranges` ([(start, end)] of the tokens the
policy sampled; `SamplesGenerator._process_response_into_experience` sets `action_mask` 1 there and
0 elsewhere), `reward`, `scores`, `extra_logs`, `rollout_log_probs`, `truncated`, `prompt`, `label`,
`images`, `mm_train_inputs`.

Why rlvr's `AgentExecutor` overrides `MultiTurnAgentExecutor.execute`: the stock loop passes the
`AgentInstance` only the decoded action text (vLLM's text drops the sampled `<|im_end|>`) and
re-tokenises each environment feedback string on its own, so an instance cannot render the template
suffix correctly (end-of-turn text the model did not sample, tokenisation in context). rlvr's
executor keeps OpenRLHF's output contract (same budget rule `max_tokens = max_length - len(context)`,
same dummy 0.0 logprobs on environment tokens) and plays the episode in rlvr's episode driver
(`rlvr.rollout.driver.EpisodeRun`, with a token-in policy over `llm_engine` and
`TokenBudget(max_length, "context")`), whose `rlvr.rollout.tokens.EpisodeTokens` owns the tokens:
sampled ids are kept as returned, each
environment turn is the model's OWN chat template suffix (`hf_tokenizer.apply_chat_template`),
tokenised in context; `action_ranges` cover exactly the sampled ids. The prompt ids are the env's
`reset` messages rendered with the model's template and the env's tool schemas (what rlvr's own
rollouts condition on), not OpenRLHF's re-tokenised prompt text. The `AgentInstance`
(`AgentInstanceBase`, synchronous `__init__` with no arguments) holds the per-episode rlvr env and
its `EpisodeRun`.

Reward: the episode's final Verdict (`env.step` on the last turn, or `EpisodeRun.cut` -- the env's
`final_verdict`, else its last assistant message -- when the token budget runs out first); `error`
gives NaN reward/score (see `rlvr.adapters.openrlhf.reward`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlvr.adapters.export import cached_env
from rlvr.adapters.openrlhf.data import decode_label, task_label
from rlvr.adapters.openrlhf.reward import EXTRA_LOG_KEYS, extra_logs
from rlvr.core.errors import AdapterError, ConfigError, MissingExtraError
from rlvr.core.metrics import EPISODE_METRICS, episode_metrics
from rlvr.core.types import Message, Task, Trajectory, Verdict
from rlvr.rollout.driver import EpisodeRun, TokenBudget
from rlvr.rollout.policy import Episode, Generation

__all__ = ["agent_classes"]


def require_openrlhf() -> None:
    """Raise `MissingExtraError` unless `openrlhf.utils.agent` imports."""
    try:
        import openrlhf.utils.agent  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("openrlhf", "openrlhf") from exc


# -- vLLM-shaped generation records (what OpenRLHF reads from llm_engine.generate) --------------------
@dataclass
class Logprob:
    """vLLM's `Logprob` (only `.logprob` is read)."""

    logprob: float


@dataclass
class CompletionOutput:
    """The fields of vLLM's `CompletionOutput` that OpenRLHF 0.11.2 reads."""

    token_ids: list[int]
    text: str
    finish_reason: str | None
    logprobs: list[dict[int, Logprob]] | None = None


@dataclass
class RequestOutput:
    """The fields of vLLM's `RequestOutput` that OpenRLHF 0.11.2 reads."""

    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]


@dataclass
class SamplingParams:
    """The fields of vLLM's `SamplingParams` that OpenRLHF's executors read (used where vLLM is absent)."""

    max_tokens: int | None = None
    logprobs: int | None = None
    temperature: float = 1.0
    skip_special_tokens: bool = False


@dataclass
class ReplayEngine:
    """An `llm_engine` for OpenRLHF's executors that returns recorded token ids, turn by turn.

    Attributes:
        turns: the ids each policy turn sampled, in order.
        tokenizer: decodes them into `text` (special tokens kept, as OpenRLHF's SamplingParams ask).
        eos_ids: ids that end a turn with finish_reason 'stop' (else 'length').
        prompts: the prompt ids the executor sent, one list per call (for checks).
    """

    turns: list[list[int]]
    tokenizer: Any
    eos_ids: set[int] = field(default_factory=set)
    prompts: list[list[int]] = field(default_factory=list)

    async def generate(self, prompt_token_ids: Sequence[int], sampling_params: Any,
                       multi_modal_data: Any = None) -> RequestOutput:
        """The next recorded turn, cut to `sampling_params.max_tokens` like vLLM would.

        Raises:
            AdapterError: more turns are requested than were recorded.
        """
        if len(self.prompts) >= len(self.turns):
            raise AdapterError(f"replay has {len(self.turns)} recorded turn(s) but the executor asked for another")
        ids = list(self.turns[len(self.prompts)])
        self.prompts.append(list(prompt_token_ids))
        limit = getattr(sampling_params, "max_tokens", None)
        cut = limit is not None and len(ids) > limit
        if cut:
            ids = ids[:limit]
        reason = "stop" if ids and ids[-1] in self.eos_ids and not cut else "length"
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        return RequestOutput(prompt_token_ids=list(prompt_token_ids),
                             outputs=[CompletionOutput(token_ids=ids, text=text, finish_reason=reason)])


# -- the agent --------------------------------------------------------------------------------------------
def _verdict_value(verdict: Verdict) -> float:
    return math.nan if verdict.reward is None else float(verdict.reward)


class _InstanceMixin:
    """rlvr's per-episode state: a copy of the env and its `EpisodeRun`.

    Combined with OpenRLHF's `AgentInstanceBase` in `agent_classes`; rlvr's `AgentExecutor` plays the
    episode in the episode driver.
    """

    _rlvr_env_id: str
    _rlvr_env_args: dict[str, Any]

    def __init__(self) -> None:
        self.env = cached_env(self._rlvr_env_id, self._rlvr_env_args).episode_copy()
        self.task: Task | None = None
        self.run: EpisodeRun | None = None
        self.verdict: Verdict | None = None

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Start the episode of `states["label"]`; `states["hf_tokenizer"]` renders the prompt.

        `states["max_length"]`, when given, is the episode's token budget (prompt included).

        Returns:
            `{"observation": rendered prompt text, "prompt_ids": ids}`; for an undecodable label the
            episode is over at once (`self.verdict` is an error verdict).
        """
        tokenizer = states.get("hf_tokenizer")
        if tokenizer is None:
            raise ConfigError("rlvr's AgentInstance needs states['hf_tokenizer'] (given by rlvr's AgentExecutor)")
        try:
            self.task = decode_label(states["label"])
        except AdapterError as exc:
            self.verdict = Verdict.error(str(exc))
            return {"observation": states.get("observation", ""), "prompt_ids": []}
        limit = states.get("max_length")
        self.run = EpisodeRun(self.env, self.task, tokenizer=tokenizer, layout="auto",
                              budget=TokenBudget(int(limit), "context") if limit else None,
                              stop_on_misalignment=True)
        await self.run.reset()
        assert self.run.tokens is not None
        prompt_ids = self.run.tokens.prompt_ids
        text = tokenizer.decode(prompt_ids, skip_special_tokens=False)
        return {"observation": text, "prompt_ids": list(prompt_ids)}

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Not used: rlvr's `AgentExecutor` plays the episode in the episode driver (`EpisodeRun.play`)."""
        raise AdapterError("rlvr's AgentInstance is driven by rlvr's AgentExecutor (agent_classes), not stepped "
                           "by OpenRLHF's MultiTurnAgentExecutor")


AGENT_LOG_KEYS: tuple[str, ...] = (*EXTRA_LOG_KEYS, *(f"rlvr/{key}" for key in EPISODE_METRICS))
"""Keys of the agent's `extra_logs`: the reward function's (`EXTRA_LOG_KEYS`) and the episode's tool-use
metrics `rlvr/<key>` (`rlvr.core.metrics.EPISODE_METRICS`). OpenRLHF logs the batch mean of each per
step (`train/rlvr/tool_call_rate`, ...); an episode that never started counts 0 calls and 0 turns."""


def _verdict_output(verdict: Verdict, trajectory: Trajectory | None = None) -> dict[str, Any]:
    """`reward`, `scores` and `extra_logs` (`AGENT_LOG_KEYS`) of one episode."""
    value = _verdict_value(verdict)
    logs = {**extra_logs(verdict),
            **{f"rlvr/{k}": v for k, v in episode_metrics([trajectory] if trajectory else []).items()}}
    return {"reward": value, "scores": value, "extra_logs": {k: logs.get(k, 0.0) for k in AGENT_LOG_KEYS}}


class _EnginePolicy:
    """A token-in `Policy` over OpenRLHF's `llm_engine` (a vLLM actor): each turn samples from the episode's ids.

    Budget as OpenRLHF's own executors: `max_tokens = max_length - len(context)` (`Episode.max_tokens`),
    capped by `sampling_params.max_tokens`; logprobs when `sampling_params.logprobs` is set.
    """

    name = "openrlhf-engine"
    accepts_prompt_ids = True

    def __init__(self, llm_engine: Any, tokenizer: Any, sampling_params: Any) -> None:
        self.llm_engine = llm_engine
        self.tokenizer = tokenizer
        self.sampling_params = sampling_params
        self.want_logprobs = getattr(sampling_params, "logprobs", None) is not None

    async def generate(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       prompt_ids: Sequence[int] | None = None, episode: Episode | None = None) -> Generation:
        """Sample one turn conditioned on `prompt_ids` (the driver gives them while the tokens line up)."""
        if prompt_ids is None:
            raise AdapterError("OpenRLHF's engine samples from token ids; the episode's tokens do not line up")
        params = copy.deepcopy(self.sampling_params)
        cap = getattr(self.sampling_params, "max_tokens", None)
        budget = episode.max_tokens if episode is not None else None
        params.max_tokens = budget if cap is None else (cap if budget is None else min(cap, budget))
        output = (await self.llm_engine.generate(list(prompt_ids), params)).outputs[0]
        ids = list(output.token_ids)
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return Generation(message=Message(role="assistant", content=text), prompt_ids=list(prompt_ids),
                          completion_ids=ids, logprobs=_logprobs(output, ids) if self.want_logprobs else None,
                          finish_reason=output.finish_reason)


async def _execute(self: Any, prompt: str, label: str, sampling_params: Any, max_length: int, hf_tokenizer: Any,
                   llm_engine: Any, images: Any = None) -> dict[str, Any]:
    """`AgentExecutor.execute`: one rlvr episode (in the episode driver) in OpenRLHF's output format.

    An episode that cannot run (undecodable label, an environment that raises, a prompt that leaves
    no room to generate within `max_length`) ends with an `error` verdict (NaN reward and score, so
    dynamic filtering drops its group) instead of failing the whole rollout batch; the sample is the
    driver's (`EpisodeRun.training_sample`: a template that rewrote history gives an error verdict
    and the tokens up to the rewrite). Failures of `llm_engine.generate` (the inference engine, not
    the environment) propagate, as in OpenRLHF's own executors.
    """
    if images:
        raise AdapterError("rlvr's OpenRLHF agent is text-only; the row has images")
    instance = self.agent_instance_cls()
    try:
        await instance.reset({"observation": prompt, "label": label, "hf_tokenizer": hf_tokenizer,
                              "max_length": max_length})
    except Exception as exc:  # a broken episode is an error verdict, never a crash of the batch
        instance.verdict = Verdict.error(f"environment reset failed: {type(exc).__name__}: {exc}")
    run: EpisodeRun | None = instance.run if instance.verdict is None else None
    want_logprobs = getattr(sampling_params, "logprobs", None) is not None
    if run is None or run.tokens is None:  # nothing to generate: the prompt as OpenRLHF's executors tokenise it
        ids = list(hf_tokenizer(text=prompt, add_special_tokens=False)["input_ids"])
        return _output(prompt, label, images, instance.verdict or Verdict.error("episode never started"), ids, [],
                       [0.0] * len(ids) if want_logprobs else None, False)
    await run.play(_EnginePolicy(llm_engine, hf_tokenizer, sampling_params), raise_policy_errors=True)
    sample = run.training_sample()
    tokens = sample.tokens
    assert tokens is not None
    start = len(tokens.prompt_ids)
    ranges = [(start + lo, start + hi) for lo, hi in _runs_of_ones(tokens.loss_mask)]
    logprobs = None
    if want_logprobs:
        logprobs = [0.0] * start + (tokens.logprobs or [0.0] * len(tokens.completion_ids))
    truncated = bool(run.finish_reasons) and run.finish_reasons[-1] == "length"
    return _output(prompt, label, images, sample.verdict, [*tokens.prompt_ids, *tokens.completion_ids], ranges,
                   logprobs, truncated, sample.trajectory)


def _runs_of_ones(mask: Sequence[int]) -> list[tuple[int, int]]:
    """`(start, end)` of each run of 1s in a 0/1 mask: the sampled turns, OpenRLHF's `action_ranges`."""
    ranges: list[tuple[int, int]] = []
    for i, m in enumerate(mask):
        if m and ranges and ranges[-1][1] == i:
            ranges[-1] = (ranges[-1][0], i + 1)
        elif m:
            ranges.append((i, i + 1))
    return ranges


def _output(prompt: str, label: str, images: Any, verdict: Verdict, ids: list[int], ranges: list[tuple[int, int]],
            logprobs: list[float] | None, truncated: bool, trajectory: Trajectory | None = None) -> dict[str, Any]:
    """OpenRLHF's executor output dict for one episode."""
    return {"prompt": prompt, "label": label, "images": images, "mm_train_inputs": None,
            **_verdict_output(verdict, trajectory), "observation_tokens": ids, "action_ranges": ranges,
            "rollout_log_probs": logprobs, "truncated": truncated}


def _logprobs(output: Any, ids: list[int]) -> list[float]:
    entries = getattr(output, "logprobs", None) or []
    out = []
    for token, entry in zip(ids, entries, strict=False):
        item = entry.get(token) if isinstance(entry, Mapping) else None
        out.append(float(item.logprob) if item is not None else 0.0)
    return out + [0.0] * (len(ids) - len(out))


def agent_classes(env_id: str, env_args: Mapping[str, Any] | None = None) -> tuple[type, type]:
    """`(AgentInstance, AgentExecutor)` for OpenRLHF's `--train.agent_func_path` file.

    `AgentInstance` subclasses `openrlhf.utils.agent.AgentInstanceBase` (no-argument synchronous
    `__init__`: a per-episode copy of `rlvr.make(env_id, **env_args)`, built once per process);
    `AgentExecutor` subclasses `MultiTurnAgentExecutor` (no-argument `__init__`, as
    `_load_agent_executor` requires) with rlvr's token-exact `execute` (module docstring).

    Raises:
        MissingExtraError: openrlhf is not installed.
        ConfigError: the env cannot be built from `env_id` / `env_args` (see `build_scorer`).
    """
    require_openrlhf()
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

    from rlvr.adapters.openrlhf.reward import build_scorer

    args = dict(env_args or {})
    build_scorer(env_id, args)  # build the env now: a broken setup fails when OpenRLHF loads the file
    instance_cls = type("AgentInstance", (_InstanceMixin, AgentInstanceBase), {
        "_rlvr_env_id": env_id, "_rlvr_env_args": args, "__init__": _InstanceMixin.__init__,
        "__doc__": f"OpenRLHF agent instance for rlvr's {env_id} (rlvr.adapters.openrlhf.agent.agent_classes).",
        "__module__": __name__})

    def executor_init(self: Any) -> None:
        MultiTurnAgentExecutor.__init__(self, instance_cls)

    executor_cls = type("AgentExecutor", (MultiTurnAgentExecutor,), {
        "__init__": executor_init, "execute": _execute, "__module__": __name__,
        "__doc__": f"OpenRLHF agent executor for rlvr's {env_id} (rlvr.adapters.openrlhf.agent.agent_classes)."})
    return instance_cls, executor_cls


# -- parity replay ------------------------------------------------------------------------------------------
def _record_task(record: Mapping[str, Any]) -> Task:
    """The task of a record: its own `prompt`/`reference` (encoded) when given, else looked up in the env."""
    from rlvr.adapters.export import decode_reference

    if "prompt" in record and "reference" in record:
        prompt = tuple(Message.model_validate(m) for m in record["prompt"])
        return Task(id=str(record["task_id"]), prompt=prompt, reference=decode_reference(record["reference"]))
    env = cached_env(record["env_id"], record.get("env_args") or {})
    task = next((t for t in env.tasks if t.id == record["task_id"]), None)
    if task is None:
        raise AdapterError(f"record {record.get('id')!r}: task {record['task_id']!r} not in {record['env_id']}")
    return task


def replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Run one recorded rollout through OpenRLHF's executor machinery with a `ReplayEngine`.

    Single-turn records go through OpenRLHF's own `SingleTurnAgentExecutor` loading rlvr's generated
    `reward_func.py` (written to a temporary folder) with the prompt rendered as OpenRLHF's
    `preprocess_data` does; multi-turn records through the `AgentExecutor` of `agent_classes`.

    Args:
        record: one entry of `rollouts.json` (`env_id`, `env_args`, `task_id`, `multi_turn`, `turns`
            with the assistant turns' `ids`, optional `reference` override).
        tokenizer: the Hugging Face tokenizer the record was made with.

    Returns:
        `{"reward": float | None (None for NaN), "status", "prompt_ids", "response_ids",
        "response_mask"}` where `response_mask` is OpenRLHF's action mask over `response_ids` (1 on
        sampled tokens).
    """
    import asyncio
    import tempfile
    from pathlib import Path

    require_openrlhf()
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    from rlvr.adapters.openrlhf.data import write_reward_file

    task = _record_task(record)
    turns = [list(t["ids"]) for t in record["turns"] if t.get("role") == "assistant"]
    eos = {i for i in (getattr(tokenizer, "eos_token_id", None),) if i is not None}
    engine = ReplayEngine(turns=turns, tokenizer=tokenizer, eos_ids=eos)
    label = task_label(task)
    params = SamplingParams(max_tokens=None, logprobs=None)
    max_length = 1 << 20
    if record.get("multi_turn"):
        _, executor_cls = agent_classes(record["env_id"], record.get("env_args") or {})
        prompt = tokenizer.apply_chat_template([m.to_openai() for m in task.prompt], tokenize=False,
                                               add_generation_prompt=True)
        output = asyncio.run(executor_cls().execute(prompt, label, params, max_length, tokenizer, engine))
    else:
        prompt = tokenizer.apply_chat_template([{"role": m.role, "content": m.content} for m in task.prompt],
                                               tokenize=False, add_generation_prompt=True)
        with tempfile.TemporaryDirectory() as tmp:
            path = write_reward_file(Path(tmp), env_id=record["env_id"], env_args=record.get("env_args") or {},
                                     tokenizer=getattr(tokenizer, "name_or_path", None) or None)
            executor = SingleTurnAgentExecutor(str(path))
            output = asyncio.run(executor.execute(prompt, label, params, max_length, tokenizer, engine))
    return _replay_result(output)


def _replay_result(output: Mapping[str, Any]) -> dict[str, Any]:
    ids = list(output["observation_tokens"])
    ranges = list(output["action_ranges"])
    start = ranges[0][0] if ranges else len(ids)
    mask = [0] * len(ids)
    for lo, hi in ranges:
        mask[lo:hi] = [1] * (hi - lo)
    reward: Any = output.get("reward")
    if reward is not None and hasattr(reward, "reshape"):
        reward = reward.reshape(-1)[0].item()
    value = None if reward is None or math.isnan(float(reward)) else float(reward)
    logs = output.get("extra_logs") or {}
    status = next((k.rsplit("/", 1)[1] for k in logs if k.startswith("rlvr/status/") and _one(logs[k])), None)
    return {"reward": value, "status": status, "prompt_ids": ids[:start], "response_ids": ids[start:],
            "response_mask": mask[start:]}


def _one(value: Any) -> bool:
    if hasattr(value, "reshape"):
        value = value.reshape(-1)[0].item()
    return float(value) == 1.0
