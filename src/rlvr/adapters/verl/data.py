"""veRL data: the parquet rows, the generated `reward.py` and `agent_loop.yaml`, and `export_verl`.

`export_verl(env, dir, ...)` writes what `python -m verl.trainer.main_ppo` reads (upstream files read:
`verl/trainer/main_ppo.py`, `verl/trainer/config/ppo_trainer.yaml` and its `data/`, `reward/`,
`rollout/` defaults, `verl/utils/dataset/rl_dataset.py`, `verl/trainer/ppo/reward.py`,
`verl/experimental/reward_loop/{reward_loop.py,reward_manager/naive.py}`,
`verl/experimental/agent_loop/{agent_loop.py,single_turn_agent_loop.py,tool_agent_loop.py}`,
`verl/trainer/ppo/v1/{agent_loop_tq.py,replay_buffer.py}`):

```
train.parquet / val.parquet   rows: data_source (env id), prompt (chat messages), ability (env family),
                              reward_model {style: "rule", ground_truth: the reference, a plain string
                              or JSON (`reference_format`)},
                              extra_info {index, split, task_id, env_id, env_args (JSON),
                              verifier (the verifier spec as JSON, "" when the env has none),
                              reference_format ("text" or "json"), export_format (`EXPORT_FORMAT`)},
                              agent_name ("rlvr_agent", multi-turn envs only)
reward.py                     compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw)
agent_loop.yaml               multi-turn only: [{name: rlvr_agent, _target_: rlvr.adapters.verl.agent.RlvrAgentLoop}]
rlvr_export.json              the manifest (`rlvr.adapters.export`)
```

`compute_score` (`rlvr.adapters.verl.reward`) builds the verifier from the row's spec (once per process)
and never the environment; rows without a spec (envs whose verifier has none) rebuild the environment
and score identically; rows of another export format are refused (re-run `rlvr export`).
`rlvr.adapters.verl.launch.verl_overrides` points veRL's config at these files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import (
    EXPORT_FORMAT,
    MANIFEST_NAME,
    ExportManifest,
    absolute_paths,
    encode_reference,
    export_spec,
    is_multi_turn,
    prepare_folder,
    reference_format,
    write_manifest,
)
from rlvr.adapters.verl.reward import check_on_error
from rlvr.core.errors import AdapterError, ConfigError, MissingExtraError
from rlvr.core.types import Task

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__: list[str] = []

AGENT_NAME = "rlvr_agent"
"""`agent_name` of multi-turn rows; the name `agent_loop.yaml` registers `RlvrAgentLoop` under."""

AGENT_LOOP_TARGET = "rlvr.adapters.verl.agent.RlvrAgentLoop"
"""Hydra `_target_` of the agent loop (instantiated by veRL's `AgentLoopWorker._run_agent_loop`)."""

REWARD_FILE = "reward.py"
AGENT_CONFIG_FILE = "agent_loop.yaml"


def task_row(task: Task, *, env_id: str, env_args: Mapping[str, Any], index: int, split: str,
             multi_turn: bool, verifier: Mapping[str, Any] | None = None, fmt: str = "json") -> dict[str, Any]:
    """One veRL dataset row for `task` (schema in the module docstring).

    `extra_info` holds only scalars and strings (env args and verifier spec as JSON) so that every row
    has the same parquet struct type; `index` is what veRL's `RLHFDataset` reads as the sample index.

    Args:
        task: the task.
        env_id: its env's id (`data_source`, `extra_info.env_id`).
        env_args: the env's factory arguments (`extra_info.env_args`, for multi-turn agents and rows
            without a verifier spec).
        index: the row's index in its split.
        split: 'train' or 'val'.
        multi_turn: name rlvr's agent loop (`agent_name`).
        verifier: the env's verifier spec (`rlvr.adapters.export.export_spec`), None when it has none.
        fmt: how the reference is stored, 'text' (a plain string) or 'json' (`encode_reference`).

    Raises:
        AdapterError: the reference or the env args are not JSON-serialisable.
    """
    try:
        args_json = json.dumps(dict(env_args), sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"env_args are not JSON-serialisable ({exc}); pass plain values") from exc
    row: dict[str, Any] = {
        "data_source": env_id,
        "prompt": [{"role": m.role, "content": m.content} for m in task.prompt],
        "ability": env_id.split("/", 1)[0],
        "reward_model": {"style": "rule", "ground_truth": encode_reference(task, fmt)},
        "extra_info": {"index": index, "split": split, "task_id": task.id, "env_id": env_id, "env_args": args_json,
                       "verifier": json.dumps(verifier, sort_keys=True) if verifier else "",
                       "reference_format": fmt, "export_format": EXPORT_FORMAT},
    }
    if multi_turn:
        row["agent_name"] = AGENT_NAME
    return row


def _write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pyarrow comes with datasets (a core dependency)
        raise MissingExtraError("pyarrow", "verl") from exc
    pq.write_table(pa.Table.from_pylist(rows), str(path))


def _select(env: Environment, limit: int | None, val_size: int) -> tuple[list[Task], list[Task]]:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a positive integer or None, got {limit!r}")
    if isinstance(val_size, bool) or not isinstance(val_size, int) or val_size < 0:
        raise ConfigError(f"val_size must be an integer >= 0, got {val_size!r}")
    total = len(env.tasks)
    wanted = total if limit is None else min(total, limit + val_size)
    if wanted - val_size < 1:
        raise ConfigError(f"environment {env.spec.id!r} has {total} task(s): not enough for val_size={val_size} "
                          "plus at least one training row; lower val_size or raise the env's size")
    tasks = [env.tasks[i] for i in range(wanted)]
    return tasks[: wanted - val_size], tasks[wanted - val_size :]


EXPORT_FILES: tuple[str, ...] = ("train.parquet", "val.parquet", REWARD_FILE, AGENT_CONFIG_FILE, MANIFEST_NAME)
"""Every file `export_verl` may write; `overwrite` replaces exactly these (stale ones included)."""


def reward_module_source(directory: Path, on_error: str = "raise") -> str:
    """Text of the generated `reward.py` (imported by veRL from `reward.custom_reward_function.path`)."""
    return f'''"""veRL reward module written by `rlvr export --backend verl` (edit ON_ERROR to change error handling).

veRL loads `compute_score` from this file (reward.custom_reward_function.path/name) and calls it once
per sample; it delegates to `rlvr.adapters.verl.reward.compute_score`, which builds the verifier
from each row's extra_info (its spec; the environment of {directory.name}/rlvr_export.json when the
row has none) and scores the response with it. Rows of another `rlvr export` format are refused.
"""

from typing import Any

from rlvr.adapters.verl.reward import compute_score as _rlvr_compute_score

ON_ERROR = {on_error!r}
"""What an error verdict becomes: 'raise' (veRL drops the rollout) or 'nan'. See rlvr.adapters.verl.reward."""


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    """veRL reward function: a dict with `score` and rlvr's verdict fields (`reward_extra_info`)."""
    kwargs.setdefault("on_error", ON_ERROR)
    return _rlvr_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
'''


def agent_loop_config_source(on_error: str = "raise") -> str:
    """Text of the generated `agent_loop.yaml` (veRL's `rollout.agent.agent_loop_config_path` format).

    veRL's `AgentLoopWorker` loads the list and registers each entry under its `name`; a row's
    `agent_name` picks the entry, and `hydra.utils.instantiate(entry, trainer_config=..., ...)` builds
    the loop, so extra keys (`on_error`) become constructor arguments.
    """
    return (f"# written by `rlvr export --backend verl`: the rlvr environment as a veRL agent loop\n"
            f"- name: {AGENT_NAME}\n  _target_: {AGENT_LOOP_TARGET}\n  on_error: {on_error}\n")


def export_verl(
    env: Environment,
    directory: str | Path,
    *,
    env_id: str,
    env_args: Mapping[str, Any] | None = None,
    limit: int | None = None,
    val_size: int = 0,
    overwrite: bool = False,
    on_error: str = "raise",
) -> ExportManifest:
    """Write the veRL files for `env` into `directory` (layout in the module docstring).

    Args:
        env: the environment (built with `rlvr.make(env_id, **env_args)`).
        directory: output folder; created if missing.
        env_id: registered id veRL's processes rebuild the env from.
        env_args: factory keyword arguments (JSON-serialisable).
        limit: number of training rows (default: all tasks minus `val_size`).
        val_size: rows for `val.parquet`, the tasks after the training rows (0: no validation file).
        overwrite: write into a non-empty folder, replacing the files of a previous export (other files,
            e.g. veRL checkpoints under `checkpoints/`, stay).
        on_error: 'raise' or 'nan', what an error verdict becomes (`rlvr.adapters.verl.reward`).

    Returns:
        The manifest (also written as `rlvr_export.json`); files roles: train, val, reward, agent_config.

    Raises:
        ConfigError: the folder is not empty and `overwrite` is False; bad limit/val_size/on_error.
        AdapterError: a reference or env args are not JSON-serialisable.
        MissingExtraError: pyarrow is missing.
    """
    on_error = check_on_error(on_error)
    args = absolute_paths(env_args or {})  # veRL's workers import the reward module from another folder
    directory = Path(directory)
    train, val = _select(env, limit, val_size)
    multi = is_multi_turn(env)
    prepare_folder(directory, overwrite, EXPORT_FILES)
    spec, fmt = export_spec(env.verifier), reference_format([*train, *val])
    files = {"train": "train.parquet", "reward": REWARD_FILE}

    def rows(tasks: list[Task], split: str) -> list[dict[str, Any]]:
        return [task_row(t, env_id=env_id, env_args=args, index=i, split=split, multi_turn=multi, verifier=spec,
                         fmt=fmt) for i, t in enumerate(tasks)]

    _write_parquet(rows(train, "train"), directory / files["train"])
    if val:
        files["val"] = "val.parquet"
        _write_parquet(rows(val, "val"), directory / files["val"])
    (directory / REWARD_FILE).write_text(reward_module_source(directory.resolve(), on_error))
    if multi:
        files["agent_config"] = AGENT_CONFIG_FILE
        (directory / AGENT_CONFIG_FILE).write_text(agent_loop_config_source(on_error))
    manifest = ExportManifest(backend="verl", env_id=env_id, env_args=args, multi_turn=multi,
                              n_train=len(train), n_val=len(val), files=files, verifier=spec, reference_format=fmt)
    write_manifest(directory, manifest)
    return manifest
