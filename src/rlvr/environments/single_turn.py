"""Single-turn environment: one prompt, one response, one verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task
from rlvr.environments.base import Environment, as_message
from rlvr.verifiers.base import Verifier

__all__ = ["SingleTurnEnv"]


class SingleTurnEnv(Environment):
    """Pose a task, score the first assistant message with the verifier, end the episode.

    Args:
        tasks: the dataset (an indexable sequence of `Task`).
        verifier: scores the response against `task.reference`.
        spec: the environment manifest (`max_turns` must be 1).

    The final `StepResult.reward` is the verdict's reward, or 0.0 with `info["masked"] = True`
    when the grader broke (verdict status 'error', reward None): a trainer must drop that sample.
    """

    def __init__(self, tasks: Sequence[Task], verifier: Verifier, spec: EnvSpec) -> None:
        super().__init__()
        if spec.max_turns != 1:
            raise ConfigError(f"SingleTurnEnv needs spec.max_turns == 1, got {spec.max_turns}")
        self.tasks = tasks
        self.verifier = verifier
        self.spec = spec

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """Score the response; the episode always terminates."""
        if self.task is None:
            raise ConfigError("step() called before reset(); call `await env.reset()` first")
        message = as_message(action)
        self.messages.append(message)
        self.turn += 1
        verdict = await self.ascore(self.task, message.content)
        masked = verdict.reward is None
        return StepResult(
            reward=0.0 if masked else float(verdict.reward),  # type: ignore[arg-type]
            terminated=True,
            verdict=verdict,
            info={"status": verdict.status, "masked": masked, "task_id": self.task.id},
        )
