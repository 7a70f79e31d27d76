"""The environment protocol: async-first `reset`/`step` over chat messages.

An environment is built from a dataset of `Task`s, a `Verifier` (called as
`verify(response, task.reference)`) and optional tools. Environments speak messages only;
tokens belong to the episode layer (`rlvr.rollout`, see DESIGN.md).

The environment owns the episode's history: `messages` is the conversation (`reset` sets it to
the prompt; `step` appends the action and then the observation it returns). The episode driver
(`rlvr.rollout.driver`) shows it to the policy, the token layer reads it, the trajectory copies it.
"""

from __future__ import annotations

import asyncio
import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.verifiers.base import Verifier

__all__ = ["Environment", "as_message"]


def as_message(action: Message | str | dict[str, Any]) -> Message:
    """Coerce an action (a Message, a plain string, or an OpenAI message dict) to an assistant Message."""
    if isinstance(action, Message):
        return action
    if isinstance(action, str):
        return Message(role="assistant", content=action)
    if isinstance(action, dict):
        data = dict(action)
        data.setdefault("role", "assistant")
        if data.get("content") is None:
            data["content"] = ""
        return Message.model_validate(data)
    raise ConfigError(f"action must be a Message, str or message dict, got {type(action).__name__}")


class Environment(ABC):
    """Base of every rlvr environment.

    Subclasses set `spec`, `verifier` and `tasks`, and implement `step`. One instance runs one
    episode at a time; make one instance per concurrent episode (they are cheap: the task list
    and the verifier's worker pool are shared objects).

    Attributes:
        spec: the typed manifest (id, reward range, max turns, tools, ...).
        verifier: scores the final response against `task.reference`.
        tasks: the dataset, an indexable sequence of `Task`.
        messages: the current episode's conversation, the one copy of it (`reset` starts it with
            the prompt; `step` appends the action, then its observation messages, in place: the
            token layer holds this list).
    """

    spec: EnvSpec
    verifier: Verifier
    tasks: Sequence[Task]
    episode_shared: ClassVar[frozenset[str]] = frozenset({"tasks", "verifier", "spec"})
    """Attributes an `episode_copy` shares with its original (configuration, not episode state)."""

    def __init__(self) -> None:
        self.task: Task | None = None
        self.messages: list[Message] = []
        self.turn = 0
        self._rng = random.Random()

    # -- episode API -------------------------------------------------------------------
    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Start an episode and return the prompt messages and an info dict.

        Args:
            task: the task to pose; if None, one is drawn from `tasks` with `seed`
                (deterministic: the same seed gives the same task).
            seed: seeds the task draw and any randomness of the episode.

        Raises:
            ConfigError: if no task is given and the dataset is empty.
        """
        if seed is not None:
            self._rng.seed(seed)
        if task is None:
            if len(self.tasks) == 0:
                raise ConfigError(f"environment {self.spec.id!r} has no tasks; check its dataset arguments")
            task = self.tasks[self._rng.randrange(len(self.tasks))]
        self.task = task
        self.messages = list(task.prompt)
        self.turn = 0
        return list(task.prompt), {"task_id": task.id, "env_id": self.spec.id}

    @abstractmethod
    async def step(self, action: Message | str) -> StepResult:
        """Apply the policy's action (an assistant message) and return the result."""

    def episode_copy(self) -> Environment:
        """A cheap copy for one concurrent episode, sharing tasks, verifier and spec (`episode_shared`).

        A shallow copy (`copy.copy`, so subclasses' `__copy__` applies) whose other list/dict/set
        attributes are copied too, so episode state never leaks between concurrent episodes, and
        whose random generator is fresh. Used by the rollout driver and the TRL adapter: building
        an environment per episode with `make()` would reload the dataset and start a verifier
        worker pool per episode.
        """
        clone = copy.copy(self)
        for key, value in vars(clone).items():
            if key not in self.episode_shared and isinstance(value, list | dict | set):
                setattr(clone, key, copy.copy(value))
        clone._rng = random.Random()
        return clone

    def reference_actions(self, task: Task) -> list[Message] | None:
        """Assistant messages that solve `task` when replayed in order (the `oracle` policy).

        The default replays the verifier's reference response as one final answer, which is
        right for single-turn environments. Multi-turn environments override it (e.g. a tool
        call, then the answer). Returns None when the environment has no reference solution.
        """
        try:
            response = self.verifier.reference_response(task.reference)
        except (ValueError, TypeError, KeyError):
            return None
        return [Message(role="assistant", content=response)]

    # -- scoring (used directly by single-turn adapters) -------------------------------
    def score(self, task: Task, response: str) -> Verdict:
        """Verify one final response for `task` (no episode state involved)."""
        return self.verifier.verify(response, task.reference)

    async def ascore(self, task: Task, response: str) -> Verdict:
        """Async `score`."""
        return await self.verifier.averify(response, task.reference)

    def score_batch(
        self, tasks: Sequence[Task], responses: Sequence[str], workers: int | None = None
    ) -> list[Verdict]:
        """Verify `responses[i]` against `tasks[i]`, in parallel worker processes; same order."""
        if len(tasks) != len(responses):
            raise ConfigError(f"score_batch got {len(tasks)} tasks but {len(responses)} responses; pass one each")
        pairs = [(r, t.reference) for t, r in zip(tasks, responses, strict=True)]
        return self.verifier.verify_batch(pairs, workers=workers)

    # -- sync wrappers -----------------------------------------------------------------
    def reset_sync(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Blocking `reset` (not for use inside a running event loop)."""
        return asyncio.run(self.reset(task, seed))

    def step_sync(self, action: Message | str) -> StepResult:
        """Blocking `step` (not for use inside a running event loop)."""
        return asyncio.run(self.step(action))

    def close_episode(self) -> None:
        """Release this episode's own resources (e.g. its sandbox), never the shared ones (`episode_shared`).

        For a server that ends an episode copy early (`rlvr serve` closing a session); `close`
        releases the shared verifier too.
        """
        return None  # the default has no resources of its own

    def close(self) -> None:
        """Release resources (the verifier's worker processes)."""
        self.verifier.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec.id} tasks={len(self.tasks)}>"
