"""`OpenAIPolicy`: any OpenAI-compatible server (vLLM, SGLang, `transformers serve`, ...), token-exact from vLLM."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import BackendError, ConfigError
from rlvr.core.types import Message, ToolCall
from rlvr.rollout.policies.sampling import Sampling, load_tokenizer, request_seed, require_package
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import render_prompt_ids

__all__: list[str] = []


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
        require_package("openai", "openai")
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
