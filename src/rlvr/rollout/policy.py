"""The policy protocol: what the episode driver asks a model (or a script) for each turn.

A `Policy` turns a conversation into the next assistant message (`Generation`). Model policies also
return the exact token ids they sampled (and the ids they conditioned on), so the token layer
(`rlvr.rollout.tokens`) never re-encodes the model's text. Trainer adapters implement a policy over
their trainer's generation server (vLLM engine, veRL server manager, TRL's model); rlvr's own
policies (OpenAI-compatible, vLLM, transformers, scripted) live in `rlvr.rollout.policies`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rlvr.core.types import Message, Task
from rlvr.environments.base import Environment
from rlvr.rollout.tokens import ChatTokenizer

__all__ = ["Episode", "Generation", "Policy"]


@dataclass(frozen=True)
class Generation:
    """One policy turn.

    Attributes:
        message: the assistant message (content and, for native tool calling, `tool_calls`).
        prompt_ids: the token ids the policy conditioned on (length P), if it reports them.
        completion_ids: the token ids it sampled (length T), including a sampled EOS/end-of-turn
            token; None for scripted policies.
        logprobs: the sampling logprob of each completion id (length T), or None.
        finish_reason: 'stop' (EOS or stop string), 'length' (token limit), or None if unknown.
    """

    message: Message
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class Episode:
    """Where a turn belongs (scripted policies replay by it; model policies may ignore it).

    Attributes:
        env: the environment instance running the episode.
        task: the episode's task.
        sample: index of this episode among the samples of the task (0-based).
        turn: number of policy turns already taken in the episode (0 for the first).
        max_tokens: most tokens this turn may sample (what is left of the trainer's episode
            budget, `rlvr.rollout.driver.TokenBudget`), or None when only the policy's own limit holds.
    """

    env: Environment
    task: Task
    sample: int = 0
    turn: int = 0
    max_tokens: int | None = None


@runtime_checkable
class Policy(Protocol):
    """Turns a conversation into the next assistant message.

    Attributes:
        name: short label for reports.
        tokenizer: the policy's tokenizer (with its chat template) when it returns token ids, else
            None; the rollout driver uses it to render environment turns.
        accepts_prompt_ids: True if `generate` conditions on `prompt_ids` when given (token-in),
            which keeps a multi-turn episode token-exact whatever the template does to text.

    A policy may also define `async aclose()`: the rollout driver awaits it at the end of each
    `rollout` call, inside the same event loop, to release per-loop resources (HTTP connections);
    the policy must stay usable afterwards.
    """

    name: str
    tokenizer: ChatTokenizer | None
    accepts_prompt_ids: bool

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        prompt_ids: Sequence[int] | None = None,
        episode: Episode | None = None,
    ) -> Generation:
        """Return the next assistant turn for `messages` (tools: OpenAI tool schemas offered)."""
        ...


async def aclose_policy(policy: Policy) -> None:
    """Release a policy's per-event-loop resources (HTTP connections) if it has any (`aclose`)."""
    closer = getattr(policy, "aclose", None)
    if closer is not None:
        await closer()
