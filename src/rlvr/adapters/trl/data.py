"""TRL data: an rlvr environment's tasks as a `datasets.Dataset` for `GRPOTrainer`, and back.

Columns: conversational `prompt`, `task_id`, and `rlvr_reference` (the reference as JSON, so any ground
truth survives Arrow's column typing; `rlvr.adapters.export.encode_reference`). TRL passes every column
except `prompt` to the reward functions (`rlvr.adapters.trl.reward`) and, on the multi-turn path, the
whole row to `reset` (`rlvr.adapters.trl.agent`), which rebuilds the `Task` with `task_from_row`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import encode_reference
from rlvr.core.errors import AdapterError, MissingExtraError
from rlvr.core.types import Message, Task

if TYPE_CHECKING:
    from datasets import Dataset

    from rlvr.environments.base import Environment

__all__ = ["require_trl", "task_row"]

REFERENCE_COLUMN = "rlvr_reference"
"""Dataset column holding each task's JSON-encoded reference (namespaced so it cannot clash with a
column another reward function reads)."""
TASK_ID_COLUMN = "task_id"


def require_trl() -> None:
    """Raise `MissingExtraError` (naming `pip install 'rlvr[trl]'`) unless trl and datasets import."""
    for package in ("trl", "datasets"):
        try:
            __import__(package)
        except ImportError as exc:
            raise MissingExtraError(package, "trl") from exc


def task_row(task: Task) -> dict[str, Any]:
    """One dataset row for `task`: conversational `prompt`, `task_id`, JSON-encoded `rlvr_reference`.

    The reference is stored as a JSON string so any ground truth (a string, a dict, a list of
    tests) survives Arrow's column typing; `reward_funcs` decodes it.

    Raises:
        AdapterError: if a prompt message carries tool calls (not representable in a
            single-turn TRL prompt) or the reference is not JSON-serialisable.
    """
    prompt = []
    for message in task.prompt:
        if message.tool_calls or message.tool_call_id is not None:
            raise AdapterError(f"task {task.id!r}: single-turn TRL prompts hold role/content only; "
                               "tool-call messages need the multi-turn adapter")
        prompt.append({"role": message.role, "content": message.content})
    return {"prompt": prompt, TASK_ID_COLUMN: task.id, REFERENCE_COLUMN: encode_reference(task)}


def to_dataset(env: Environment, *, limit: int | None = None) -> Dataset:
    """The environment's tasks as a TRL dataset (conversational `prompt` + `task_id` + `rlvr_reference`).

    Args:
        env: an environment with a `tasks` sequence.
        limit: keep only the first `limit` tasks (procedural envs generate tasks lazily, so a
            limit avoids generating rows a short run never reads).

    Raises:
        MissingExtraError: if `datasets`/`trl` are not installed.
        AdapterError: if the environment has no tasks or a task cannot be a row.
    """
    require_trl()
    from datasets import Dataset

    n = len(env.tasks) if limit is None else min(limit, len(env.tasks))
    if n <= 0:
        raise AdapterError(f"environment {env.spec.id!r} gave no tasks (limit={limit}); check its arguments")
    rows = [task_row(env.tasks[i]) for i in range(n)]
    return Dataset.from_list(rows)


def task_from_row(row: Mapping[str, Any]) -> Task:
    """The `Task` of one dataset row written by `rlvr.adapters.trl.to_dataset`.

    Uses the `prompt` (list of `{"role", "content"}` dicts), `task_id` and `rlvr_reference`
    (JSON) columns; other columns are ignored. Task metadata is not in the row, so it is empty.

    Raises:
        AdapterError: a column is missing or not decodable (the message names the column and
            `to_dataset`).
    """
    missing = [c for c in ("prompt", TASK_ID_COLUMN, REFERENCE_COLUMN) if c not in row]
    if missing:
        raise AdapterError(f"dataset row lacks column(s) {', '.join(missing)} (got: {', '.join(sorted(row))}); "
                           "build the dataset with rlvr.adapters.trl.to_dataset(env)")
    try:
        reference = json.loads(row[REFERENCE_COLUMN])
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"the {REFERENCE_COLUMN!r} value {str(row[REFERENCE_COLUMN])[:60]!r} is not a JSON "
                           f"string written by to_dataset: {exc}") from exc
    prompt = row["prompt"]
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    try:
        messages = tuple(Message(role=m["role"], content=m.get("content") or "") for m in prompt)
        return Task(id=str(row[TASK_ID_COLUMN]), prompt=messages, reference=reference)
    except (TypeError, KeyError, ValueError) as exc:
        raise AdapterError(f"row {row.get(TASK_ID_COLUMN)!r}: the 'prompt' column is not a list of "
                           f"{{'role', 'content'}} messages: {exc}") from exc


# -- tool methods -----------------------------------------------------------------------------
