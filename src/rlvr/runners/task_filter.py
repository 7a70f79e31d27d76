"""`--tasks FILE` of `rlvr export` and `rlvr train`: train on exactly the tasks a file lists.

The file is JSONL, one object per line with a string `task_id` — the `rl.jsonl` that `rlvr synth`
writes (tasks whose pass rate lies in a band), or any hand-made list. Rows that also carry `env` and
`env_args` (as `rlvr synth` writes them) must match the environment being exported or trained: task
ids of procedural environments depend on their arguments (`seed`, `size`, `config`), so a file made
for other arguments would name other problems.

`select_tasks` replaces `environment.tasks` by the listed tasks, in the environment's order; every
backend path (TRL in-process, veRL and OpenRLHF exports) then reads the filtered list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.environments.base import Environment

__all__: list[str] = []


@dataclass(frozen=True)
class TaskFilter:
    """The tasks a `--tasks` file names.

    Attributes:
        path: the file.
        task_ids: the task ids, in file order, without repeats.
        envs: the distinct `(env, env_args as sorted JSON)` pairs its rows record (empty when none do).
    """

    path: Path
    task_ids: tuple[str, ...]
    envs: frozenset[tuple[str, str]]


def read_task_filter(path: Path) -> TaskFilter:
    """Read a `--tasks` JSONL file.

    Raises:
        ConfigError: the file does not exist or lists no task.
        DataError: a line is not a JSON object with a string `task_id` (names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--tasks file {str(path)!r} does not exist (write one with `rlvr synth ... -o DIR`: "
                          "DIR/rl.jsonl)")
    ids: dict[str, None] = {}
    envs: set[tuple[str, str]] = set()
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or not isinstance(row.get("task_id"), str):
                raise DataError(f'{path}:{lineno}: each line must be an object with a string "task_id"')
            ids[row["task_id"]] = None
            if "env" in row:
                envs.add((str(row["env"]), json.dumps(row.get("env_args") or {}, sort_keys=True)))
    if not ids:
        raise ConfigError(f"--tasks file {path} lists no task (an empty band? rerun `rlvr synth` with a wider --band)")
    return TaskFilter(path=path, task_ids=tuple(ids), envs=frozenset(envs))


def select_tasks(environment: Environment, path: Path | None, *, env_id: str, env_args: dict[str, Any] | None) -> None:
    """Keep only the tasks `path` lists in `environment.tasks` (environment order); no-op when `path` is None.

    Lazy task lists (procedural environments) are read only up to the last listed task.

    Raises:
        ConfigError: the file was written for another environment or other arguments, or names task
            ids the environment does not have (the message shows some of them and the fix).
        DataError: a malformed line (from `read_task_filter`).
    """
    if path is None:
        return
    wanted = read_task_filter(path)
    mine = (env_id, json.dumps(env_args or {}, sort_keys=True))
    others = sorted(wanted.envs - {mine})
    if others:
        env, args = others[0]
        raise ConfigError(f"{path} lists tasks of --env {env} with arguments {args}, but this run builds --env "
                          f"{env_id} with {mine[1]}; pass the same --env and --env-arg values as the `rlvr synth` "
                          "run that wrote it")
    missing = set(wanted.task_ids)
    kept = []
    for i in range(len(environment.tasks)):
        if not missing:
            break
        task = environment.tasks[i]
        if task.id in missing:
            missing.discard(task.id)
            kept.append(task)
    if missing:
        shown = ", ".join(repr(t) for t in sorted(missing)[:5])
        raise ConfigError(f"{path} names {len(missing)} task id(s) that environment {env_id!r} does not have "
                          f"(e.g. {shown}); build it with the arguments of the run that wrote the file "
                          "(a larger -a size=N?)")
    environment.tasks = kept
