"""Policies the rollout driver talks to: inference clients that return sampled token ids, and scripted ones.

The protocol itself (`Policy`, `Generation`, `Episode`) lives in the episode layer,
`rlvr.rollout.policy`, and is re-exported here.

A `Policy` turns a conversation into the next assistant message. Model policies also return the
exact token ids they sampled and their logprobs, so `rlvr.rollout.tokens` never re-encodes the
model's text:

- `OpenAIPolicy` — any OpenAI-compatible chat-completions server. From vLLM it requests the
  extensions `return_token_ids` (ids of the prompt and the completion) and `logprobs`, with
  `return_tokens_as_token_ids` as a second source of ids (vLLM `entrypoints/openai/protocol.py`).
  With `token_in=True` it sends the prompt as token ids to `/v1/completions` instead.
- `VLLMPolicy` — vLLM in-process (`vllm.LLM`); ids and logprobs from `RequestOutput`.
- `TransformersPolicy` — a local transformers model; `generate(output_scores=True)` gives the
  sampled ids and the logprob of each under the sampling distribution.

Scripted policies validate environments without a model (`rlvr eval --policy ...`):
`OraclePolicy` replays `env.reference_actions(task)` (must score correct), `NoopPolicy` answers
"I don't know." (must not), `ScriptPolicy` replays actions from a JSONL file.
"""

from __future__ import annotations

import asyncio
import json
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import BackendError, ConfigError, DataError, MissingExtraError
from rlvr.core.types import Message, ToolCall
from rlvr.environments.base import as_message
from rlvr.rollout.policy import Episode, Generation, Policy, aclose_policy
from rlvr.rollout.tokens import ChatTokenizer, render_prompt_ids

__all__ = [
    "Episode",
    "Generation",
    "NoopPolicy",
    "OpenAIPolicy",
    "OraclePolicy",
    "Policy",
    "RequestBatcher",
    "Sampling",
    "ScriptPolicy",
    "TransformersPolicy",
    "VLLMPolicy",
    "aclose_policy",
    "load_tokenizer",
    "request_seed",
    "scripted_policy",
]

NOOP_ANSWER = "I don't know."


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters shared by the model policies.

    Attributes:
        max_tokens: most tokens per turn.
        temperature: softmax temperature (0 = greedy).
        top_p: nucleus sampling mass.
        seed: base sampling seed, or None; each request gets `request_seed` (distinct per task,
            sample and turn) where the backend takes a per-request seed (vLLM, OpenAI API), and
            the transformers policy reseeds torch with it before each request, so seeded
            rollouts do not depend on `concurrency` or on the order episodes reach the model.
    """

    max_tokens: int = 512
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.temperature < 0:
            raise ConfigError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"top_p must be in (0, 1], got {self.top_p}")


def request_seed(sampling: Sampling, episode: Episode | None) -> int | None:
    """Seed of one request: `sampling.seed` mixed with (task id, sample, turn), or None when unseeded.

    A fixed seed per request would make the n samples of a task identical; this keeps each
    (task, sample, turn) reproducible and the samples distinct. Range: [0, 2**31).
    """
    if sampling.seed is None:
        return None
    if episode is None:
        return sampling.seed
    key = f"{sampling.seed}:{episode.task.id}:{episode.sample}:{episode.turn}".encode()
    return zlib.crc32(key) & 0x7FFFFFFF


# -- scripted policies ---------------------------------------------------------------------
class _Scripted:
    tokenizer: ChatTokenizer | None = None
    accepts_prompt_ids = False
    name = "scripted"

    def actions(self, episode: Episode) -> Sequence[Message | str | dict[str, Any]]:
        raise NotImplementedError

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        prompt_ids: Sequence[int] | None = None,
        episode: Episode | None = None,
    ) -> Generation:
        """Return the scripted action for `episode.turn` (no tokens)."""
        if episode is None:
            raise ConfigError(f"the {self.name} policy replays actions per task; pass episode=Episode(env, task, ...)")
        actions = self.actions(episode)
        if episode.turn >= len(actions):
            raise ConfigError(f"{self.name} policy: task {episode.task.id!r} has {len(actions)} scripted action(s) "
                              f"but the environment asked for turn {episode.turn + 1}")
        return Generation(message=as_message(actions[episode.turn]), finish_reason="stop")


class OraclePolicy(_Scripted):
    """Replays `env.reference_actions(task)`: a correct environment must score it correct."""

    name = "oracle"

    def actions(self, episode: Episode) -> Sequence[Message | str | dict[str, Any]]:
        """The environment's reference actions for the episode's task.

        Raises:
            ConfigError: the environment has no reference solution for this task.
        """
        actions = episode.env.reference_actions(episode.task)
        if not actions:
            raise ConfigError(f"environment {episode.env.spec.id!r} has no reference solution for task "
                              f"{episode.task.id!r}; the oracle policy cannot run on it")
        return actions


class NoopPolicy(_Scripted):
    """Answers "I don't know." every turn: a correct environment must not reward it."""

    name = "noop"

    def actions(self, episode: Episode) -> Sequence[Message | str | dict[str, Any]]:
        """One non-answer per turn."""
        return [NOOP_ANSWER] * (episode.turn + 1)


class ScriptPolicy(_Scripted):
    """Replays actions from a JSONL file: one object per line, `{"task_id": ..., "actions": [...]}`.

    Each action is a string (assistant content) or an OpenAI message dict (for tool calls). An
    optional integer `sample` key gives different scripts to the samples of one task (rows without
    it apply to every sample).

    Raises:
        DataError: a line is not such an object (the message names the line and the fix).
    """

    name = "script"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise ConfigError(f"script file {str(self.path)!r} does not exist")
        self.scripts: dict[tuple[str, int | None], list[Message]] = {}
        with self.path.open(encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line.strip():
                    self._add(lineno, line)

    def _add(self, lineno: int, line: str) -> None:
        where = f"{self.path}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("task_id"), str):
            raise DataError(f'{where}: each line must be an object with a string "task_id" and a list "actions"')
        actions, sample = row.get("actions"), row.get("sample")
        if not isinstance(actions, list) or not actions:
            raise DataError(f'{where}: "actions" must be a non-empty list of strings or message dicts')
        if sample is not None and not isinstance(sample, int):
            raise DataError(f'{where}: "sample" must be an integer (0-based) or absent')
        try:
            self.scripts[(row["task_id"], sample)] = [as_message(a) for a in actions]
        except (ValueError, ConfigError) as exc:
            raise DataError(f"{where}: an action is not a string or assistant message dict: {exc}") from exc

    def actions(self, episode: Episode) -> Sequence[Message | str | dict[str, Any]]:
        """The script of the episode's task (and sample, if the file has per-sample rows)."""
        task_id = episode.task.id
        script = self.scripts.get((task_id, episode.sample)) or self.scripts.get((task_id, None))
        if script is None:
            raise ConfigError(f"script {str(self.path)!r} has no actions for task {task_id!r}")
        return script


def scripted_policy(spec: str) -> OraclePolicy | NoopPolicy | ScriptPolicy:
    """Build a scripted policy from its command-line name: `oracle`, `noop` or `script:PATH`.

    Raises:
        ConfigError: any other name.
    """
    if spec == "oracle":
        return OraclePolicy()
    if spec == "noop":
        return NoopPolicy()
    if spec.startswith("script:") and spec[len("script:") :]:
        return ScriptPolicy(spec[len("script:") :])
    raise ConfigError(f"unknown policy {spec!r}; use oracle, noop or script:PATH")


# -- model policies ------------------------------------------------------------------------
def _require(package: str, extra: str) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is None:
        raise MissingExtraError(package, extra)


def load_tokenizer(name_or_path: str | Path) -> ChatTokenizer:
    """Load a Hugging Face tokenizer (local folder or cached Hub id) for rendering chat turns.

    Raises:
        MissingExtraError: transformers is not installed.
    """
    _require("transformers", "trl")
    from transformers import AutoTokenizer

    tokenizer: ChatTokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
    return tokenizer


def _eos_ids(tokenizer: Any, generation_config: Any = None) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(generation_config, "eos_token_id", None), getattr(tokenizer, "eos_token_id", None)):
        if isinstance(source, int):
            ids.add(source)
        elif isinstance(source, list | tuple):
            ids.update(int(i) for i in source)
    return ids


class RequestBatcher:
    """Requests that arrive while a batch is running form the next batch: one `run` call per batch.

    Used by the in-process model policies (`VLLMPolicy`, `TransformersPolicy`): concurrent episodes
    share one generator (the model in this process) without a server. `run(prompts, seeds)` gets up
    to `max_batch` prompts (token ids) and their per-request seeds and returns one `Generation` per
    prompt, in order; it runs in a worker thread, never two at once. An exception in `run` is given
    to every request of that batch (no hang); the next batch still runs.

    Args:
        run: the generator call, `(list[list[int]], list[int | None]) -> list[Generation]`.
        max_batch: most requests per call (None: all that are waiting).
    """

    def __init__(self, run: Callable[[list[list[int]], list[int | None]], list[Generation]],
                 max_batch: int | None = None) -> None:
        if max_batch is not None and max_batch < 1:
            raise ConfigError(f"max_batch must be >= 1 or None, got {max_batch}")
        self._run = run
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._pending: list[tuple[list[int], int | None, asyncio.Future[Generation]]] = []
        self._running = False

    async def submit(self, ids: list[int], seed: int | None) -> Generation:
        """Queue one request and wait for its generation."""
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        with self._lock:
            self._pending.append((ids, seed, future))
            start = not self._running
            self._running = True
        if start:
            asyncio.get_running_loop().run_in_executor(None, self._drain)
        return await future

    def _drain(self) -> None:
        """Worker thread: run the pending requests batch by batch, until none is left."""
        while True:
            with self._lock:
                size = len(self._pending) if self.max_batch is None else self.max_batch
                batch, self._pending = self._pending[:size], self._pending[size:]
                if not batch:
                    self._running = False
                    return
            try:
                results = self._run([ids for ids, _, _ in batch], [seed for _, seed, _ in batch])
            except Exception as exc:  # every waiting episode gets the error, not a hang
                for _, _, future in batch:
                    future.get_loop().call_soon_threadsafe(_set_exception, future, exc)
                continue
            for (_, _, future), gen in zip(batch, results, strict=True):
                future.get_loop().call_soon_threadsafe(_set_result, future, gen)


@dataclass
class TransformersPolicy:
    """A local transformers causal LM (CPU or one GPU); concurrent requests are generated in batches.

    The logprob of each sampled id is taken from `generate(output_scores=True)`: the scores after
    the logits processors (temperature, top-p), i.e. under the distribution actually sampled from
    (transformers `GenerationMixin.generate`, `return_dict_in_generate=True`).

    Batching: requests that arrive while the model is busy (`rlvr eval --concurrency N`) form the
    next batch of up to `max_batch` prompts, left-padded with an attention mask (one `generate`
    call; a batch of 8 greedy prompts costs about as much as two single ones on a CPU). Seeded
    sampling (temperature > 0 with `sampling.seed`) runs one request at a time instead, so each
    request's samples are the same whatever the concurrency. Greedy decoding in a batch can differ
    from unbatched decoding only where two logits tie within float rounding.

    Args:
        model: a local model folder or a cached Hub id (see `rlvr.runners.models.resolve_model`).
        sampling: sampling parameters.
        device: torch device string.
        max_batch: most prompts per `generate` call.
    """

    model: str
    sampling: Sampling = field(default_factory=Sampling)
    device: str = "cpu"
    max_batch: int = 16
    name: str = "transformers"
    accepts_prompt_ids: bool = True

    def __post_init__(self) -> None:
        _require("torch", "trl")
        _require("transformers", "trl")
        import torch
        from transformers import AutoModelForCausalLM

        self.tokenizer: ChatTokenizer | None = load_tokenizer(self.model)
        self._model = AutoModelForCausalLM.from_pretrained(self.model, dtype=torch.float32).to(self.device).eval()
        self._eos = _eos_ids(self.tokenizer, self._model.generation_config)
        tokenizer: Any = self.tokenizer
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(self._eos, default=0)
        self._pad = int(pad)
        seeded_sampling = self.sampling.temperature > 0 and self.sampling.seed is not None
        self._batcher = RequestBatcher(self._generate, max_batch=1 if seeded_sampling else self.max_batch)
        if self.sampling.seed is not None:
            torch.manual_seed(self.sampling.seed)

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        prompt_ids: Sequence[int] | None = None,
        episode: Episode | None = None,
    ) -> Generation:
        """Sample one assistant turn (token-in when `prompt_ids` is given)."""
        assert self.tokenizer is not None
        ids = list(prompt_ids) if prompt_ids is not None else render_prompt_ids(self.tokenizer, messages, tools=tools)
        seed = request_seed(self.sampling, episode) if episode is not None else None
        return await self._batcher.submit(ids, seed)

    def _generate(self, prompts: list[list[int]], seeds: list[int | None]) -> list[Generation]:
        """One `generate` call over `prompts` (left-padded); seeds apply to a batch of one."""
        import torch

        s = self.sampling
        tokenizer: Any = self.tokenizer
        width = max(len(ids) for ids in prompts)
        with torch.no_grad():
            if len(prompts) == 1 and seeds[0] is not None:  # per request: the same samples whatever the concurrency
                torch.manual_seed(seeds[0])
            inputs = torch.tensor([[self._pad] * (width - len(ids)) + ids for ids in prompts], device=self.device)
            mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=self.device)
            out = self._model.generate(
                inputs, attention_mask=mask, max_new_tokens=s.max_tokens,
                do_sample=s.temperature > 0, temperature=s.temperature if s.temperature > 0 else None,
                top_p=s.top_p if s.temperature > 0 else None, top_k=None,
                return_dict_in_generate=True, output_scores=True, pad_token_id=self._pad,
            )
            new = out.sequences[:, width:]  # [B, T]
            chosen = torch.stack([score.float().log_softmax(dim=-1).gather(-1, new[:, t : t + 1]).squeeze(-1)
                                  for t, score in enumerate(out.scores)], dim=1)  # [B, T]: logprob of each sampled id
        generations = []
        for row, ids in enumerate(prompts):
            sampled = new[row].tolist()
            logprobs = [float(v) for v in chosen[row].tolist()]
            stop = next((k for k, t in enumerate(sampled) if t in self._eos), None)
            if stop is not None:  # a row stops at its first EOS; what follows is padding
                sampled, logprobs = sampled[: stop + 1], logprobs[: stop + 1]
            text = tokenizer.decode(sampled, skip_special_tokens=True)
            generations.append(Generation(message=Message(role="assistant", content=text), prompt_ids=ids,
                                          completion_ids=sampled, logprobs=logprobs,
                                          finish_reason="stop" if stop is not None else "length"))
        return generations


@dataclass
class VLLMPolicy:
    """vLLM in-process (`vllm.LLM`), prompts given as token ids rendered with the model's chat template.

    Ids and logprobs come from `RequestOutput.outputs[0]` (`token_ids`; `logprobs` with
    `SamplingParams(logprobs=0)` holds the sampled token's logprob at each position).
    Generation runs in a worker thread; requests that arrive while vLLM is busy form the
    next batch (one `LLM.generate` call), so concurrent episodes share it. vLLM starts its engine in a spawned
    process: a script that builds this policy needs the `if __name__ == "__main__":` guard.

    Args:
        model: a local model folder or cached Hub id.
        sampling: sampling parameters.
        engine_args: extra `vllm.LLM` keyword arguments (e.g. `max_model_len=2048`).
    """

    model: str
    sampling: Sampling = field(default_factory=Sampling)
    engine_args: dict[str, Any] = field(default_factory=dict)
    name: str = "vllm"
    accepts_prompt_ids: bool = True

    def __post_init__(self) -> None:
        _require("vllm", "vllm")
        from vllm import LLM

        self._llm = LLM(model=self.model, **self.engine_args)
        self.tokenizer: ChatTokenizer | None = self._llm.get_tokenizer()
        self._batcher = RequestBatcher(self._generate)

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        prompt_ids: Sequence[int] | None = None,
        episode: Episode | None = None,
    ) -> Generation:
        """Sample one assistant turn (token-in when `prompt_ids` is given).

        Requests that arrive while the model is busy are batched into its next `generate` call.
        """
        assert self.tokenizer is not None
        ids = list(prompt_ids) if prompt_ids is not None else render_prompt_ids(self.tokenizer, messages, tools=tools)
        return await self._batcher.submit(ids, request_seed(self.sampling, episode))

    def _generate(self, prompts: list[list[int]], seeds: list[int | None]) -> list[Generation]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        s = self.sampling
        params = [SamplingParams(max_tokens=s.max_tokens, temperature=s.temperature, top_p=s.top_p, seed=seed,
                                 logprobs=0) for seed in seeds]
        outputs = self._llm.generate([TokensPrompt(prompt_token_ids=ids) for ids in prompts], params, use_tqdm=False)
        generations = []
        for ids, result in zip(prompts, outputs, strict=True):
            out = result.outputs[0]
            sampled = list(out.token_ids)
            logprobs = [float(lp[t].logprob) for lp, t in zip(out.logprobs or [], sampled, strict=True)]
            generations.append(Generation(message=Message(role="assistant", content=out.text), prompt_ids=ids,
                                          completion_ids=sampled, logprobs=logprobs or None,
                                          finish_reason=out.finish_reason))
        return generations

    def close(self) -> None:
        """Shut vLLM's engine worker processes down (the policy is unusable afterwards)."""
        engine = getattr(getattr(self._llm, "llm_engine", None), "engine_core", None)
        if engine is not None:
            engine.shutdown()


def _set_result(future: asyncio.Future[Generation], value: Generation) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: asyncio.Future[Generation], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _token_id(token: str) -> int:
    """Parse vLLM's `return_tokens_as_token_ids` token string 'token_id:1234'."""
    prefix = "token_id:"
    if not token.startswith(prefix):
        raise BackendError(f"expected a token string like 'token_id:1234' (return_tokens_as_token_ids), got {token!r}")
    return int(token[len(prefix) :])


def _extra(obj: Any, name: str) -> Any:
    """A non-standard response field (kept by the openai SDK in `model_extra`)."""
    value = getattr(obj, name, None)
    if value is None and getattr(obj, "model_extra", None):
        value = obj.model_extra.get(name)
    return value


@dataclass
class OpenAIPolicy:
    """An OpenAI-compatible server (vLLM, SGLang, `transformers serve`, ...), via the `openai` SDK.

    From vLLM it gets token-exact turns: the request carries the vLLM extensions
    `return_token_ids=True` (response: `prompt_token_ids`, and `token_ids` per choice) and
    `logprobs=True` with `return_tokens_as_token_ids=True` (each logprob entry's token is
    'token_id:N'). A server without them yields messages only (no token fields).

    Args:
        base_url: the server's `/v1` URL, e.g. `http://127.0.0.1:8000/v1`.
        model: the model name the server serves.
        sampling: sampling parameters.
        tokenizer: the model's tokenizer (object, folder or Hub id) for rendering environment
            turns; None: messages only, unless `token_in`.
        token_in: send the prompt as token ids to `/v1/completions` (token-exact multi-turn with
            any template; the assistant message is the completion text, tool calls are parsed
            by the environment from text).
        api_key: sent as the bearer token (vLLM ignores it unless started with --api-key).
        timeout_s: per-request timeout, seconds.
        extra_body: more request fields (e.g. `{"top_k": 20}`).
    """

    base_url: str
    model: str
    sampling: Sampling = field(default_factory=Sampling)
    tokenizer: Any = None
    token_in: bool = False
    api_key: str = "EMPTY"
    timeout_s: float = 600.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    name: str = "openai"

    def __post_init__(self) -> None:
        _require("openai", "openai")
        from openai import AsyncOpenAI

        if isinstance(self.tokenizer, str | Path):
            self.tokenizer = load_tokenizer(self.tokenizer)
        if self.token_in and self.tokenizer is None:
            raise ConfigError("token_in=True renders prompts to ids and needs the model's tokenizer; pass tokenizer=")
        self.accepts_prompt_ids = self.token_in
        self._client_class = AsyncOpenAI
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> Any:
        """The `AsyncOpenAI` client of the running event loop (made on first use; `aclose` releases it)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._client_class(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s)
            self._loop = loop
        return self._client

    def _body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"return_token_ids": True, "return_tokens_as_token_ids": True}
        body.update(self.extra_body)
        return body

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        prompt_ids: Sequence[int] | None = None,
        episode: Episode | None = None,
    ) -> Generation:
        """Request one assistant turn (chat-completions, or completions with token ids if `token_in`).

        Raises:
            BackendError: the server answered with no choice or malformed token fields.
        """
        if self.token_in:
            assert self.tokenizer is not None
            ids = list(prompt_ids) if prompt_ids is not None else render_prompt_ids(self.tokenizer, messages,
                                                                                     tools=tools)
            return await self._complete(ids, request_seed(self.sampling, episode))
        return await self._chat(messages, tools, request_seed(self.sampling, episode))

    async def _chat(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None,
                    seed: int | None) -> Generation:
        s = self.sampling
        kwargs: dict[str, Any] = {"tools": list(tools)} if tools else {}
        if seed is not None:
            kwargs["seed"] = seed
        response = await self.client.chat.completions.create(
            model=self.model, messages=[m.to_openai() for m in messages],
            max_tokens=s.max_tokens, temperature=s.temperature, top_p=s.top_p, logprobs=True,
            extra_body=self._body(), **kwargs,
        )
        if not response.choices:
            raise BackendError(f"{self.base_url}: chat completion with no choices")
        choice = response.choices[0]
        calls = tuple(ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "{}")
                      for c in (choice.message.tool_calls or []) if getattr(c, "function", None) is not None)
        message = Message(role="assistant", content=choice.message.content or "", tool_calls=calls or None)
        entries = choice.logprobs.content if choice.logprobs and choice.logprobs.content else None
        ids = _extra(choice, "token_ids")
        if ids is None and entries is not None:
            ids = [_token_id(e.token) for e in entries]
        logprobs = [float(e.logprob) for e in entries] if entries is not None else None
        prompt = _extra(response, "prompt_token_ids")
        return self._generation(message, prompt, ids, logprobs, choice.finish_reason)

    async def _complete(self, ids: list[int], seed: int | None) -> Generation:
        s = self.sampling
        kwargs: dict[str, Any] = {"seed": seed} if seed is not None else {}
        response = await self.client.completions.create(
            model=self.model, prompt=ids, max_tokens=s.max_tokens, temperature=s.temperature, top_p=s.top_p,
            logprobs=0, extra_body=self._body(), **kwargs,
        )
        if not response.choices:
            raise BackendError(f"{self.base_url}: completion with no choices")
        choice = response.choices[0]
        lp = choice.logprobs
        sampled = _extra(choice, "token_ids")
        if sampled is None and lp is not None and lp.tokens is not None:
            sampled = [_token_id(t) for t in lp.tokens]
        logprobs = [float(x) if x is not None else 0.0 for x in lp.token_logprobs] if lp and lp.token_logprobs else None
        message = Message(role="assistant", content=choice.text or "")
        return self._generation(message, ids, sampled, logprobs, choice.finish_reason)

    def _generation(self, message: Message, prompt: Any, ids: Any, logprobs: list[float] | None,
                    finish_reason: str | None) -> Generation:
        if ids is not None and logprobs is not None and len(ids) != len(logprobs):
            raise BackendError(f"{self.base_url}: {len(ids)} token ids but {len(logprobs)} logprobs in one choice")
        return Generation(message=message, prompt_ids=list(prompt) if prompt is not None else None,
                          completion_ids=list(ids) if ids is not None else None, logprobs=logprobs,
                          finish_reason=finish_reason)

    async def aclose(self) -> None:
        """Close the HTTP connections of this event loop (the rollout driver calls it at the end of a rollout).

        The policy stays usable: the next request opens a new client.
        """
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()
