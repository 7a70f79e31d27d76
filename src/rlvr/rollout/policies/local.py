"""Model policies in this process: a transformers model and vLLM, sharing a request batcher.

Concurrent episodes share one generator without a server: requests that arrive while the model is
busy form its next batch (`RequestBatcher`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import Message
from rlvr.rollout.policies.sampling import Sampling, load_tokenizer, request_seed, require_package
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import ChatTokenizer, render_prompt_ids

__all__: list[str] = []


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
        require_package("torch", "trl")
        require_package("transformers", "trl")
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
        require_package("vllm", "vllm")
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

