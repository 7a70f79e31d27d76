"""The rlvr-over-OpenEnv wire contract: the Action and Observation models `rlvr serve` speaks.

Shared by the server (`rlvr serve`, `rlvr.adapters.openenv.server`) and the client environment
`openenv/remote-v1`. A client with no rlvr code (OpenEnv's `GenericEnvClient`) sees plain JSON:

- action (one assistant message): `{"content": str, "tool_calls": [...] | None, "metadata": {}}`,
  `tool_calls` in the OpenAI chat-completions format
  `{"id", "type": "function", "function": {"name", "arguments": JSON string}}`. The action's JSON
  schema (`/schema` -> "action") carries `"x-rlvr-env"` (the rlvr env id, so a client can tell an
  rlvr server), `"x-rlvr-max-turns"` and `"x-rlvr-reward-range"` (its `EnvSpec.max_turns` and
  `reward_range`) and, when the environment has tools, `"tools"` (its OpenAI tool schemas). The
  keys are defined once, in `rlvr.environments.openenv_remote` (the client side reads them).
- observation: `messages` (OpenAI message dicts: after reset the prompt, after a step what the
  environment answered, possibly none), `task_id`, `verdict` (`Verdict.model_dump(mode="json")`,
  only when the episode is done; its `detail` is withheld unless the status is `error` or
  `timeout`, since a scored verdict's detail can quote the reference), and OpenEnv's `done`, `reward` (per step, rlvr's
  `StepResult.reward`, so the rewards sum to the trajectory reward; None on the last step when the
  verdict is masked, a broken grader, never 0) and `metadata` (`turn`, `truncated`, and `status`
  on the last step).
- reset keywords: `seed`, `episode_id`, `task_id` (start that task; an unknown id is an error
  naming it), or OpenEnv's task-API selection `split` + `index`.
- task API entries: `{"id", "index", "prompt"}`, never the task's reference.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation
from pydantic import ConfigDict, Field

from rlvr.core.types import EnvSpec
from rlvr.environments.openenv_remote import ENV_ID_KEY, MAX_TURNS_KEY, REWARD_RANGE_KEY, TOOLS_KEY

__all__: list[str] = []


class ChatAction(Action):  # type: ignore[misc]
    """One assistant message (OpenEnv's `metadata` is accepted and never used for scoring)."""

    content: str = Field(default="", description="Text of the assistant message.")
    tool_calls: list[dict[str, Any]] | None = Field(
        default=None, description="OpenAI chat-completions tool calls: "
                                  '{"id", "type": "function", "function": {"name", "arguments": JSON string}}.')


class ChatObservation(Observation):  # type: ignore[misc]
    """What the environment shows: chat messages, the task id and, at the end, the verdict."""

    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="OpenAI message dicts: the prompt after reset; after a step the "
                                          "messages the environment answered (possibly none).")
    task_id: str = Field(default="", description="Id of the episode's task.")
    verdict: dict[str, Any] | None = Field(
        default=None, description="The episode's Verdict as a JSON dict, only when the episode is done.")


def action_model(spec: EnvSpec) -> type[ChatAction]:
    """`ChatAction` whose JSON schema names the served env (`x-rlvr-env`), its turn limit, reward range and tools.

    OpenEnv's `/schema` publishes `action_cls.model_json_schema()`, so these keys live on a subclass.
    """
    extra: dict[str, Any] = {ENV_ID_KEY: spec.id, MAX_TURNS_KEY: spec.max_turns,
                             REWARD_RANGE_KEY: list(spec.reward_range)}
    if spec.tools:
        extra[TOOLS_KEY] = [dict(t) for t in spec.tools]

    class ServedChatAction(ChatAction):
        model_config = ConfigDict(title="ChatAction", json_schema_extra=extra)

    return ServedChatAction


def served_name(env_id: str) -> str:
    """The OpenEnv environment name of rlvr env `env_id` (task-API paths `/{name}/tasks`: no '/').

    >>> served_name("math/gsm8k-v1")
    'math--gsm8k-v1'
    """
    return env_id.replace("/", "--")
