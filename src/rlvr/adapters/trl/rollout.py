"""TRL `rollout_func` backed by the rlvr episode driver: any multi-turn env, token-exact, env tokens masked.

`GRPOTrainer(rollout_func=fn, ...)` (TRL 1.16) calls `fn(prompts, trainer)` once per generation
batch with the per-process prompts -- already repeated `num_generations` times in a row by TRL's
`RepeatSampler` -- and needs one sample per prompt back: `prompt_ids`, `completion_ids`, `logprobs`
(lists of per-sample lists); `env_mask` (1 on model tokens, 0 on environment tokens) becomes TRL's
`tool_mask`, multiplied into the loss mask; every other key is handed to the reward functions
(`grpo_trainer.py`, `_generate` and `_generate_and_score_completions`).

`rollout_func(env)` runs each prompt's episode with `rlvr.rollout.batch.rollout_samples` against
`TrainerPolicy`, which samples with the trainer's current model (token-in: each turn conditions on
the exact ids of the episode so far), under the episode token budget `max_completion_length`
(`TokenBudget(..., "completion")`: model and environment tokens count; when it runs out the episode
is cut and scored by the env's rule for a cut episode, as on the veRL and OpenRLHF paths). Each
episode becomes a sample by the driver's one rule (`EpisodeRun.training_sample`): the episode
layout of `rlvr.rollout.tokens` (sampled ids kept, environment turns rendered as chat-template
suffixes), and for an episode that failed or whose tokens do not line up, a masked one-token
sample (`env_mask` 0) with an error verdict. The final Verdict travels as the extra field
`rlvr_verdict`, read by `RolloutReward` (None for `error`: masked).

Tasks are found by prompt: the rollout function indexes the trainer's `train_dataset` and
`eval_dataset` rows (`rlvr.adapters.trl.to_dataset` columns) by their `prompt`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.adapters.trl.data import task_from_row
from rlvr.adapters.trl.reward import _log
from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.metrics import EPISODE_METRICS, episode_metrics
from rlvr.core.types import Message, Task, ToolCall, Verdict
from rlvr.environments.actions import TextTag, parse_actions
from rlvr.environments.base import Environment
from rlvr.rollout.batch import clone_factory, rollout_samples
from rlvr.rollout.driver import TokenBudget, TrainingSample
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import render_prompt_ids

__all__ = [
    "EPISODE_FIELD",
    "MULTI_TURN_PATHS",
    "VERDICT_FIELD",
    "RolloutReward",
    "TrainerPolicy",
    "multi_turn_hooks",
    "rollout_func",
]

VERDICT_FIELD = "rlvr_verdict"
EPISODE_FIELD = "rlvr_episode"
"""The `rollout_func` output field of each episode's tool-use metrics (`rlvr.core.metrics.episode_metrics`)."""
"""Extra field of rlvr's `rollout_func` output: each episode's final `Verdict.model_dump()`."""


def _prompt_key(prompt: Any) -> str:
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    return json.dumps([{"role": m["role"], "content": m.get("content") or ""} for m in prompt], sort_keys=True)


class TrainerPolicy:
    """A `Policy` that samples with a `GRPOTrainer`'s current model and tokenizer (token-in).

    Sampling settings are the trainer's (`temperature`, `top_p`, `top_k`, ... through
    `trainer.generation_config`); each turn samples at most what is left of the episode's token
    budget (`Episode.max_tokens`, from `max_completion_length`; the whole budget when called
    outside the driver), and at most `max_turn_tokens` if given. Logprobs are those of the
    processed sampling distribution (`generate(output_scores=True)`), one per sampled id.

    When the environment reads native tool calls only, `<tool_call>{json}</tool_call>` text
    (Hermes / Qwen2.5 format, what TRL's tool template teaches) is parsed into `tool_calls`.

    Attributes:
        max_completion_length: the trainer's `max_completion_length`, the episode's token budget.

    Raises:
        ConfigError: the trainer generates with vLLM (use the environment_factory path there).
    """

    name = "trl-trainer"
    accepts_prompt_ids = True

    def __init__(self, trainer: Any, max_turn_tokens: int | None = None) -> None:
        if getattr(trainer, "use_vllm", False):
            raise ConfigError("rlvr's rollout_func samples with the trainer's transformers model; with use_vllm=True "
                              "use the environment_factory path (TRL batches its tool loop through vLLM)")
        self.trainer = trainer
        self.tokenizer: Any = trainer.processing_class
        self.max_completion_length = int(trainer.max_completion_length)
        self.max_turn_tokens = max_turn_tokens
        self._lock = threading.Lock()

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        prompt_ids: Sequence[int] | None = None,
        episode: Episode | None = None,
    ) -> Generation:
        """Sample one assistant turn with the trainer's model (see the class docstring)."""
        ids = list(prompt_ids) if prompt_ids is not None else render_prompt_ids(self.tokenizer, messages, tools=tools)
        left = self.max_completion_length
        if episode is not None and episode.max_tokens is not None:
            left = episode.max_tokens
        if self.max_turn_tokens is not None:
            left = min(left, self.max_turn_tokens)
        sampled, logprobs = self._sample(ids, left)
        stop = bool(sampled) and sampled[-1] in self._eos()
        text = self.tokenizer.decode(sampled, skip_special_tokens=True)
        message = tool_message(text, episode.env if episode is not None else None)
        return Generation(message=message, prompt_ids=ids, completion_ids=sampled, logprobs=logprobs,
                          finish_reason="stop" if stop else "length")

    def _eos(self) -> set[int]:
        eos = self.trainer.generation_config.eos_token_id
        return set(eos) if isinstance(eos, list | tuple) else {eos}

    def _sample(self, ids: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
        import torch
        from trl.models import unwrap_model_for_generation

        trainer = self.trainer
        with self._lock, unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                                     generation_kwargs=trainer.generation_kwargs) as model, \
                torch.no_grad():
            inputs = torch.tensor([ids], device=trainer.accelerator.device)
            out = model.generate(input_ids=inputs, attention_mask=torch.ones_like(inputs),
                                 generation_config=trainer.generation_config, max_new_tokens=max_new_tokens,
                                 return_dict_in_generate=True, output_scores=True)
        sampled: list[int] = out.sequences[0, len(ids):].tolist()
        logprobs = [float(torch.log_softmax(s[0].float(), dim=-1)[t]) for s, t in zip(out.scores, sampled,
                                                                                   strict=False)]
        eos = self._eos()
        stop = next((k for k, t in enumerate(sampled) if t in eos), None)
        if stop is not None:
            sampled, logprobs = sampled[: stop + 1], logprobs[: stop + 1]
        return sampled, logprobs


def tool_message(text: str, env: Environment | None) -> Message:
    """The assistant message; Hermes `<tool_call>` text becomes native calls for native-only tool envs."""
    tags = getattr(env, "text_tags", None)
    if env is None or tags is None or not getattr(env, "native", False) or any(t.kind == "json" for t in tags):
        return Message(role="assistant", content=text)
    plain = Message(role="assistant", content=text)
    calls = [c for c in parse_actions(plain, [TextTag.hermes()], native=False) if c.ok]
    if not calls:
        return plain
    head = text.split("<tool_call>", 1)[0].rstrip("\n")
    return Message(role="assistant", content=head, tool_calls=tuple(
        ToolCall(id=f"call_{i}", name=c.name, arguments=json.dumps(c.arguments)) for i, c in enumerate(calls)))


class _TaskIndex:
    """Dataset rows of a trainer indexed by prompt (built once per dataset object)."""

    def __init__(self) -> None:
        self._by_prompt: dict[str, Task] = {}
        self._indexed: set[int] = set()

    def add(self, dataset: Any) -> None:
        if dataset is None or id(dataset) in self._indexed:
            return
        datasets = dataset.values() if isinstance(dataset, dict) else [dataset]
        for ds in datasets:
            if not hasattr(ds, "__len__"):
                raise AdapterError("rlvr's rollout_func finds tasks by prompt in the trainer's datasets and needs a "
                                   "map-style datasets.Dataset (not an IterableDataset)")
            for row in ds:
                task = task_from_row(row)
                key = _prompt_key(row["prompt"])
                known = self._by_prompt.get(key)
                if known is not None and known.reference != task.reference:
                    raise AdapterError(f"tasks {known.id!r} and {task.id!r} have the same prompt but different "
                                       "references; rlvr's rollout_func identifies tasks by prompt: deduplicate the "
                                       "dataset or use the environment_factory path")
                self._by_prompt.setdefault(key, task)
        self._indexed.add(id(dataset))

    def task(self, prompt: Any) -> Task:
        found = self._by_prompt.get(_prompt_key(prompt))
        if found is None:
            raise AdapterError(f"prompt {str(prompt)[:80]!r} is not in the trainer's datasets; build them with "
                               "rlvr.adapters.trl.to_dataset(env)")
        return found


def _groups(prompts: Sequence[Any], size: int) -> int:
    """`size` if prompts come in consecutive runs of `size` identical prompts (TRL's RepeatSampler), else 1."""
    if size > 1 and len(prompts) % size == 0:
        keys = [_prompt_key(p) for p in prompts]
        if all(len(set(keys[i:i + size])) == 1 for i in range(0, len(keys), size)):
            return size
    return 1


def sample_fields(sample: TrainingSample, task: Task, env: Environment, tokenizer: Any) -> dict[str, Any]:
    """TRL's fields of one episode's training sample (`EpisodeRun.training_sample`).

    A complete sample gives its tokens (logprobs 0.0 where the policy reported none); an episode
    that failed or whose tokens do not line up has no sequence TRL can train on, so it becomes a
    masked placeholder: the task prompt, one EOS token, `env_mask` [0] (its verdict is an error).
    """
    tokens = sample.tokens
    if sample.complete and tokens is not None:
        lps = tokens.logprobs if tokens.logprobs is not None else [0.0] * len(tokens.completion_ids)
        return {"prompt_ids": tokens.prompt_ids, "completion_ids": tokens.completion_ids, "logprobs": lps,
                "env_mask": tokens.loss_mask}
    prompt_ids = render_prompt_ids(tokenizer, list(task.prompt), tools=list(env.spec.tools) or None)
    return {"prompt_ids": prompt_ids, "completion_ids": [tokenizer.eos_token_id], "logprobs": [0.0], "env_mask": [0]}


def rollout_func(env: Environment, *, concurrency: int = 8,
                 max_turn_tokens: int | None = None) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A TRL `rollout_func` that rolls `env` (any rlvr environment) with the trainer's model.

    Args:
        env: the environment; each episode runs in a shallow copy (`clone_factory`).
        concurrency: episodes in flight at once (generation itself runs one sequence at a time).
        max_turn_tokens: most tokens the model samples per turn (None: the rest of the episode's
            `max_completion_length` budget).

    Returns:
        `fn(prompts, trainer) -> {"prompt_ids", "completion_ids", "logprobs", "env_mask",
        "rlvr_verdict", "rlvr_episode"}`, one entry per prompt, in order; `rlvr_verdict` holds
        `Verdict.model_dump()` dicts and `rlvr_episode` each episode's tool-use metrics, for
        `RolloutReward`. `fn.last_trajectories` keeps the latest batch's trajectories.

    Raises:
        AdapterError: (when called) a prompt is not a row of the trainer's datasets, or two rows
            share a prompt with different references.
        ConfigError: (when called) the trainer uses vLLM.
    """
    factory = clone_factory(env)
    index = _TaskIndex()

    def fn(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        index.add(getattr(trainer, "train_dataset", None))
        index.add(getattr(trainer, "eval_dataset", None))
        policy = TrainerPolicy(trainer, max_turn_tokens)
        mode = "train" if trainer.model.training else "eval"
        size = _groups(prompts, trainer.num_generations if mode == "train" else trainer.num_generations_eval)
        tasks = [index.task(p) for p in prompts[::size]]
        budget = TokenBudget(policy.max_completion_length, "completion")
        samples = asyncio.run(rollout_samples(factory, policy, tasks, n=size, concurrency=concurrency, seed=None,
                                              budget=budget))
        fn.last_trajectories = [s.trajectory for s in samples]  # type: ignore[attr-defined]
        out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                     VERDICT_FIELD: [], EPISODE_FIELD: []}
        for sample, task in zip(samples, [t for t in tasks for _ in range(size)], strict=True):
            for key, value in sample_fields(sample, task, env, policy.tokenizer).items():
                out[key].append(value)
            out[VERDICT_FIELD].append(sample.verdict.model_dump())
            out[EPISODE_FIELD].append(episode_metrics([sample.trajectory]))
        return out

    fn.last_trajectories = []  # type: ignore[attr-defined]
    return fn


def _mean_metrics(column: Sequence[dict[str, float]] | None) -> dict[str, float] | None:
    """The batch's episode metrics: the mean of each episode's (`EPISODE_FIELD`); None without the field."""
    if not column:
        return None
    return {key: sum(float(m[key]) for m in column) / len(column) for key in EPISODE_METRICS}


class RolloutReward:
    """The TRL reward function of a `rollout_func` run.

    TRL 1.16 forwards every extra key of the rollout function's output to the reward functions, one
    value per completion; this reads the `rlvr_verdict` field (the episode's final Verdict, scored
    inside the rollout) and returns its reward, None for `error` (masked). Metrics as `VerifierReward`,
    plus the batch's tool-use metrics from the `rlvr_episode` field (`EPISODE_FIELD`).

    Attributes:
        __name__: the name TRL logs the reward under.
        last_verdicts: the verdicts of the latest call.
    """

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self.last_verdicts: list[Verdict] = []
        self.calls = 0

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        """Rewards of the verdicts in the `rlvr_verdict` field (see the class docstring)."""
        column = kwargs.get(VERDICT_FIELD)
        if column is None or len(column) != len(completions):
            raise AdapterError(f"reward function {self.__name__!r} needs the {VERDICT_FIELD!r} field of rlvr's "
                               "rollout_func (pass rollout_func=rlvr.adapters.trl.rollout.rollout_func(env) to "
                               f"GRPOTrainer); got {0 if column is None else len(column)} values for "
                               f"{len(completions)} completions")
        verdicts = [v if isinstance(v, Verdict) else Verdict.model_validate(v) for v in column]
        self.last_verdicts = verdicts
        self.calls += 1
        _log(self.__name__, verdicts, sum(v.elapsed_s for v in verdicts), kwargs.get("log_metric"),
             kwargs.get("log_extra"), _mean_metrics(kwargs.get(EPISODE_FIELD)))
        return [v.reward for v in verdicts]

    def __repr__(self) -> str:
        return f"<RolloutReward {self.__name__}>"


MULTI_TURN_PATHS = ("auto", "environment_factory", "rollout_func")
"""How `rlvr train --backend trl` trains a multi-turn env. `auto`: `environment_factory` for tool
envs (TRL's own tool loop: batched generation, vLLM-ready, TRL parses and masks the tool calls; the
tools of a remote OpenEnv server are methods that step the server), `rollout_func` for other
multi-turn envs (observations that are not tool answers)."""


def multi_turn_hooks(env: Environment, model_path: str, config: Any, path: str = "auto") -> dict[str, Any]:
    """`GRPOTrainer` keyword arguments that train the multi-turn `env` (for `rlvr train`).

    Returns:
        `{"reward_funcs": [...], "processing_class": tokenizer, "environment_factory": cls}` or
        `{..., "rollout_func": fn}`. The tokenizer gets a tool-calling chat template when the
        model's cannot render tools (`tool_calling_tokenizer`); for `environment_factory`,
        `config.max_tool_calling_iterations` defaults to `env.spec.max_turns - 1` (the last turn
        is the answer).

    Raises:
        ConfigError: unknown `path`, `environment_factory` for an env without tools, or a model
            whose chat template cannot render tools.
    """
    from transformers import AutoTokenizer

    from rlvr.adapters.trl.agent import EpisodeReward, environment_factory, is_tool_env, tool_calling_tokenizer
    from rlvr.adapters.trl.reward import reward_name

    if path not in MULTI_TURN_PATHS:
        raise ConfigError(f"multi-turn path must be one of {', '.join(MULTI_TURN_PATHS)}, got {path!r}")
    tools = is_tool_env(env)
    if path == "auto":
        path = "environment_factory" if tools else "rollout_func"
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if tools:
        tokenizer, replaced = tool_calling_tokenizer(tokenizer)
        if replaced:
            print(f"rlvr train: the model's chat template cannot render tool calls; using trl's "
                  f"{TOOL_TEMPLATE_NOTE}", file=sys.stderr)
    name = reward_name(env)
    print(f"rlvr train: {env.spec.id} is multi-turn; training it through TRL's {path}", file=sys.stderr)
    if path == "environment_factory":
        if config.max_tool_calling_iterations is None:
            config.max_tool_calling_iterations = max(0, env.spec.max_turns - 1)
        return {"reward_funcs": [EpisodeReward(name)], "processing_class": tokenizer,
                "environment_factory": environment_factory(env)}
    return {"reward_funcs": [RolloutReward(name)], "processing_class": tokenizer, "rollout_func": rollout_func(env)}


TOOL_TEMPLATE_NOTE = "qwen2_5 chat template (ChatML tokens, <tool_call> JSON), see rlvr.adapters.trl.agent"
