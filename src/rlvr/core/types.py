"""The rlvr data contract: pydantic v2 models shared by every layer.

Values (`Message`, `Task`, `Verdict`, `StepResult`, `EnvSpec`) are frozen and reject unknown
fields, so a typo fails loudly and a value can key a cache. `Trajectory` and `TokenSample` are
records of one episode, built by the episode layer (`rlvr.rollout`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "STATUSES",
    "EnvSpec",
    "Message",
    "Status",
    "StepResult",
    "Task",
    "TokenSample",
    "ToolCall",
    "Trajectory",
    "Verdict",
]

Status = Literal["correct", "incorrect", "no_answer", "timeout", "error"]
"""Outcome of one verification. Only `error` (the grader itself broke) has `reward=None`."""

STATUSES: tuple[Status, ...] = get_args(Status)
"""Every `Status`, in the order reports and metric logs list them (derived from the type, never spelled out)."""

Role = Literal["system", "user", "assistant", "tool"]

ENV_ID_PATTERN = re.compile(r"^(?P<family>[a-z0-9_.]+)/(?P<name>[a-z0-9_.-]+)-v(?P<version>\d+)$")
"""Versioned environment ids, `family/name-vN` (e.g. `math/gsm8k-v1`), as in Gymnasium."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ToolCall(BaseModel):
    """One tool call in an assistant message (OpenAI chat-completions format)."""

    model_config = _FROZEN

    id: str = Field(description="Call id; the tool's answer carries it as `tool_call_id`.")
    name: str = Field(description="Name of the tool function to call.")
    arguments: str = Field(default="{}", description="JSON-encoded arguments, as sent by the model.")

    @model_validator(mode="before")
    @classmethod
    def _from_wire_format(cls, data: Any) -> Any:
        """Accept the chat-completions wire format `{"id", "type": "function", "function": {"name", "arguments"}}`."""
        if isinstance(data, dict) and isinstance(data.get("function"), dict):
            function = data["function"]
            arguments = function.get("arguments", "{}")
            return {"id": data.get("id"), "name": function.get("name"),
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}
        return data


class Message(BaseModel):
    """An OpenAI-style chat message."""

    model_config = _FROZEN

    role: Role = Field(description="Who speaks: system, user, assistant or tool.")
    content: str = Field(default="", description="Text content of the message.")
    tool_calls: tuple[ToolCall, ...] | None = Field(
        default=None, description="Tool calls requested by an assistant message."
    )
    tool_call_id: str | None = Field(
        default=None, description="For role='tool': the id of the call this message answers."
    )
    name: str | None = Field(default=None, description="Optional speaker or tool name.")

    def to_openai(self) -> dict[str, Any]:
        """Return the message as a plain dict in the chat-completions wire format."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


class Task(BaseModel):
    """One problem: the prompt a policy sees and the ground truth its verifier needs.

    JSON-serialisable, so a task can be a dataset row in any trainer's format.
    """

    model_config = _FROZEN

    id: str = Field(description="Stable id, unique within its dataset (e.g. 'gsm8k-test-17').")
    prompt: tuple[Message, ...] = Field(description="Chat messages shown to the policy.")
    reference: Any = Field(
        description="Ground truth for the verifier: a string for math (answer or full "
        "reference solution); a JSON object for SQL, unit tests and terminal tasks."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form extra fields.")

    @field_validator("prompt")
    @classmethod
    def _prompt_not_empty(cls, v: tuple[Message, ...]) -> tuple[Message, ...]:
        if not v:
            raise ValueError("prompt must hold at least one message; build it with [Message(role='user', content=...)]")
        return v


class Verdict(BaseModel):
    """The result of verifying one response against one reference."""

    model_config = _FROZEN

    status: Status = Field(description="correct | incorrect | no_answer | timeout | error.")
    reward: float | None = Field(
        description="Scalar reward. None only when status='error': the trainer must mask the "
        "sample rather than learn from a fake 0."
    )
    components: dict[str, float] = Field(
        default_factory=dict, description="Named partial scores (e.g. {'correct': 1.0, 'format': 0.1})."
    )
    extracted: str | None = Field(default=None, description="What was parsed out of the response.")
    detail: str = Field(default="", description="Human-readable reason for the verdict.")
    elapsed_s: float = Field(default=0.0, ge=0.0, description="Wall-clock verification time, seconds.")

    @model_validator(mode="after")
    def _reward_matches_status(self) -> Verdict:
        if self.status == "error":
            if self.reward is not None:
                raise ValueError("a Verdict with status='error' must have reward=None (the sample is masked)")
        elif self.reward is None:
            raise ValueError(f"reward=None is only allowed with status='error', got status={self.status!r}")
        elif not math.isfinite(self.reward):
            raise ValueError(f"reward must be a finite float, got {self.reward!r}")
        return self

    @property
    def is_correct(self) -> bool:
        """True when status is 'correct'."""
        return self.status == "correct"

    @classmethod
    def error(cls, detail: str, *, elapsed_s: float = 0.0, extracted: str | None = None) -> Verdict:
        """A verdict for a grader that broke: status='error', reward=None."""
        return cls(status="error", reward=None, detail=detail, elapsed_s=elapsed_s, extracted=extracted)

    @classmethod
    def timeout(cls, detail: str, *, elapsed_s: float = 0.0, reward: float = 0.0) -> Verdict:
        """A verdict for verification that ran past its time limit (reward 0 by default)."""
        return cls(status="timeout", reward=reward, detail=detail, elapsed_s=elapsed_s)


class StepResult(BaseModel):
    """What an environment returns from `step`."""

    model_config = _FROZEN

    messages: tuple[Message, ...] = Field(default=(), description="Observation: new messages for the policy.")
    reward: float = Field(default=0.0, description="Per-step reward (may be 0).")
    terminated: bool = Field(default=False, description="The episode reached a terminal state.")
    truncated: bool = Field(default=False, description="The episode was cut (turn or time limit).")
    info: dict[str, Any] = Field(default_factory=dict, description="Diagnostics; not for learning.")
    verdict: Verdict | None = Field(default=None, description="The final Verdict, set when the episode ends.")


class TokenSample(BaseModel):
    """One training sample in token ids: a prompt and a completion with its loss mask and logprobs.

    `completion_ids`, `loss_mask` (1 = token sampled by the policy, 0 = environment token) and
    `logprobs` (sampling logprob; 0.0 on environment tokens) all have length T.
    """

    model_config = ConfigDict(extra="forbid")

    prompt_ids: list[int] = Field(description="Prompt token ids the policy conditioned on, length P.")
    completion_ids: list[int] = Field(description="Completion token ids, length T.")
    loss_mask: list[int] = Field(description="1 on policy tokens, 0 on env tokens; length T.")
    logprobs: list[float] | None = Field(default=None, description="Sampling logprob per completion token; length T.")

    @model_validator(mode="after")
    def _lengths_agree(self) -> TokenSample:
        n = len(self.completion_ids)
        for name in ("loss_mask", "logprobs"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise ValueError(f"{name} has length {len(value)} but completion_ids has length {n}; they must match")
        return self


class Trajectory(BaseModel):
    """Messages of one episode, its rewards and final verdict, plus the tokens the episode layer recorded.

    Tokens come in one of two layouts (`rlvr.rollout.tokens`): `tokens`, one sample for the whole
    episode (environment tokens interleaved, `loss_mask` 0 on them), or `samples`, one per model turn.
    """

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="Id of the task this episode solved.")
    messages: list[Message] = Field(description="Full conversation, prompt included.")
    rewards: list[float] = Field(default_factory=list, description="Per-step rewards, in order.")
    verdict: Verdict | None = Field(default=None, description="Final verdict of the episode.")
    tokens: TokenSample | None = Field(
        default=None, description="One-sample-per-episode layout: the first prompt and the interleaved completion."
    )
    samples: list[TokenSample] | None = Field(
        default=None, description="One-sample-per-turn layout: one TokenSample per policy turn, in order."
    )
    error: str | None = Field(default=None, description="Why the episode failed (policy or environment), if it did.")
    info: dict[str, Any] = Field(default_factory=dict, description="Diagnostics: sample index, finish reasons, ...")

    @property
    def reward(self) -> float | None:
        """Trajectory-level reward: the final verdict's reward (None if the grader broke)."""
        if self.verdict is not None:
            return self.verdict.reward
        return sum(self.rewards)


class EnvSpec(BaseModel):
    """Typed manifest of an environment."""

    model_config = _FROZEN

    id: str = Field(description="Versioned id 'family/name-vN', e.g. 'math/gsm8k-v1'.")
    description: str = Field(default="", description="One-line summary.")
    reward_range: tuple[float, float] = Field(default=(0.0, 1.0), description="Inclusive bounds of the final reward.")
    max_turns: int = Field(default=1, ge=1, description="Turn limit of one episode (1 = single-turn).")
    tools: tuple[dict[str, Any], ...] = Field(default=(), description="OpenAI tool JSON schemas offered to the policy.")
    seeding: str = Field(
        default="deterministic",
        description="What `seed` controls: 'deterministic' (fixed dataset order) or 'procedural' "
        "(the seed generates the task).",
    )
    resources: dict[str, Any] = Field(default_factory=dict, description="Needed resources (sandbox, database).")
    dataset: str | None = Field(default=None, description="Where tasks come from (HF id, package or path).")

    @field_validator("id")
    @classmethod
    def _versioned_id(cls, v: str) -> str:
        if not ENV_ID_PATTERN.match(v):
            raise ValueError(f"environment id {v!r} must look like 'family/name-vN' (e.g. 'math/gsm8k-v1')")
        return v

    @model_validator(mode="after")
    def _range_ordered(self) -> EnvSpec:
        lo, hi = self.reward_range
        if lo > hi:
            raise ValueError(f"reward_range {self.reward_range} has low > high; give (low, high)")
        return self
