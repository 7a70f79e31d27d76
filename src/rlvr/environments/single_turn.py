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

    Attributes:
        done: True once `step` has ended the episode; a further `step` raises ConfigError
            until `reset` starts a new one.
    """

    def __init__(self, tasks: Sequence[Task], verifier: Verifier, spec: EnvSpec) -> None:
        super().__init__()
        if spec.max_turns != 1:
            raise ConfigError(f"SingleTurnEnv needs spec.max_turns == 1, got {spec.max_turns}")
        self.tasks = tasks
        self.verifier = verifier
        self.spec = spec
        self.done = False

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Start an episode (see `Environment.reset`)."""
        result = await super().reset(task, seed)
        self.done = False
        return result

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """Score the response; the episode always terminates.

        Raises:
            ConfigError: no episode was started (`reset` not called) or it is already over.
        """
        if self.task is None:
            raise ConfigError("step() called before reset(); call env.reset() (or env.reset_sync()) first")
        if self.done:
            raise ConfigError("episode is over; call reset() (or reset_sync()) to start a new one")
        message = as_message(action)
        self.messages.append(message)
        self.turn += 1
        verdict = await self.ascore(self.task, message.content)
        self.done = True
        masked = verdict.reward is None
        return StepResult(
            reward=0.0 if masked else float(verdict.reward),  # type: ignore[arg-type]
            terminated=True,
            verdict=verdict,
            info={"status": verdict.status, "masked": masked, "task_id": self.task.id},
        )
