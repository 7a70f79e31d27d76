"""Scripted policies: validate an environment without a model (`rlvr eval --policy oracle|noop|script:PATH`).

`OraclePolicy` replays `env.reference_actions(task)` (a correct environment scores it correct),
`NoopPolicy` answers "I don't know." (it must not), `ScriptPolicy` replays actions from a JSONL file.
They return no token ids.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Message
from rlvr.environments.base import as_message
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import ChatTokenizer

__all__: list[str] = []

NOOP_ANSWER = "I don't know."


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

