"""A small multi-turn environment for rollout tests: guess a number, the environment says higher or lower."""

from __future__ import annotations

from typing import Any

from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.base import Environment, as_message
from rlvr.verifiers.registry import get_verifier


class GuessEnv(Environment):
    """Each turn the policy names a number; the env answers 'higher' / 'lower' until it is right.

    The verdict is the math verifier's on the last answer (inline, no worker processes). The reference
    solution probes once with 50, then answers the target: a two-turn oracle.
    """

    def __init__(self, size: int = 6, max_turns: int = 4) -> None:
        super().__init__()
        self.spec = EnvSpec(id="test/guess-v1", max_turns=max_turns, description="guess a number")
        self.verifier = get_verifier("math", scoring="inline")
        self.tasks = [
            Task(id=f"guess-{i}", prompt=(Message(role="user", content="Guess my number between 1 and 100."),),
                 reference=str(7 + 13 * i))
            for i in range(size)
        ]

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        return await super().reset(task, seed)

    async def step(self, action: Message | str) -> StepResult:
        assert self.task is not None
        message = as_message(action)
        self.messages.append(message)
        self.turn += 1
        target = int(self.task.reference)
        try:
            guess = int(message.content.strip().split()[-1].strip("."))
        except (ValueError, IndexError):
            guess = None
        if guess == target or self.turn >= self.spec.max_turns:
            verdict: Verdict = await self.ascore(self.task, message.content)
            reward = 0.0 if verdict.reward is None else verdict.reward
            return StepResult(reward=reward, terminated=guess == target, truncated=guess != target, verdict=verdict)
        hint = "higher" if guess is None or guess < target else "lower"
        observation = Message(role="user", content=f"No, {hint}.")
        self.messages.append(observation)
        return StepResult(messages=(observation,), reward=-0.1)

    def reference_actions(self, task: Task) -> list[Message] | None:
        return [Message(role="assistant", content="50"), Message(role="assistant", content=str(task.reference))]
