"""`rlvr export`: write the files a veRL or OpenRLHF run needs for an rlvr environment.

`export_command` builds the environment with `rlvr.make` and hands it to the backend adapter's
exporter (`rlvr.adapters.verl.export_verl`, `rlvr.adapters.openrlhf.export_openrlhf`), which writes
the data files, the reward module, the agent files for multi-turn envs, and `rlvr_export.json`
(`rlvr.adapters.export.ExportManifest`). Neither exporter needs the trainer installed: the files are
read later, in the trainer's own environment.

Example:
    $ rlvr export --backend verl --env math/reasoning-gym-v1 -a size=200 -o export/verl --val-size 20
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.adapters.export import MANIFEST_NAME, ExportManifest
from rlvr.core.errors import ConfigError
from rlvr.runners.task_filter import select_tasks

__all__: list[str] = []

_EXPORTERS: dict[str, str] = {
    "verl": "rlvr.adapters.verl:export_verl",
    "openrlhf": "rlvr.adapters.openrlhf:export_openrlhf",
}
"""Backend name -> `module:function` of its exporter (the interface of issue 4)."""

@dataclass(frozen=True)
class ExportResult:
    """What `export_command` wrote.

    Attributes:
        directory: the export folder.
        manifest: its manifest (backend, env id/args, row counts, files by role).
        files: role -> absolute path of every file written, `manifest` included.
    """

    directory: Path
    manifest: ExportManifest
    files: dict[str, Path]


def _exporter(backend: str) -> Callable[..., ExportManifest]:
    """The export function of `backend` (imported lazily).

    Raises:
        ConfigError: an unknown backend (the message lists the known ones).
    """
    if backend not in _EXPORTERS:
        raise ConfigError(f"unknown export backend {backend!r}; choose one of: {', '.join(_EXPORTERS)} "
                          "(TRL reads environments in-process: use `rlvr train --backend trl`)")
    module, _, name = _EXPORTERS[backend].partition(":")
    fn: Callable[..., ExportManifest] = getattr(importlib.import_module(module), name)
    return fn


def export_command(
    backend: str,
    env: str,
    env_args: dict[str, Any] | None,
    output: Path,
    *,
    limit: int | None = None,
    val_size: int = 0,
    overwrite: bool = False,
    tasks: Path | None = None,
) -> ExportResult:
    """Export environment `env` for `backend` into the folder `output`.

    Args:
        backend: 'verl' or 'openrlhf'.
        env: a registered environment id, e.g. 'math/reasoning-gym-v1'.
        env_args: its factory arguments (JSON-serialisable: recorded in the export; multi-turn agents and
            exports without a verifier spec rebuild the env from them in the trainer process).
        output: the export folder (created; a non-empty one needs `overwrite`).
        limit: export only the first `limit` tasks (None: all).
        val_size: tasks held out for the validation file (0: none); taken from the end of the tasks used.
        overwrite: replace the files of a non-empty folder.
        tasks: export only the tasks this JSONL lists (`rlvr synth`'s rl.jsonl; see
            `rlvr.runners.task_filter`); `limit` and `val_size` then apply to those.

    Raises:
        ConfigError: unknown backend or env, bad `limit`/`val_size`, a non-empty folder without
            `overwrite` (from the exporter), a `tasks` file for another env or naming unknown tasks.
        AdapterError: a task cannot be written in the backend's format.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be >= 1 (or unset for every task), got {limit}")
    if val_size < 0:
        raise ConfigError(f"val_size must be >= 0, got {val_size}")
    export = _exporter(backend)
    from rlvr.environments.registry import make

    args = dict(env_args or {})
    environment = make(env, **args)
    try:
        select_tasks(environment, tasks, env_id=env, env_args=args)
        available = len(environment.tasks) if limit is None else min(limit, len(environment.tasks))
        if val_size >= available:
            raise ConfigError(f"val_size ({val_size}) must be smaller than the tasks exported ({available}); "
                              "lower --val-size or raise --limit / the env's size")
        manifest = export(environment, Path(output), env_id=env, env_args=args, limit=limit, val_size=val_size,
                          overwrite=overwrite)
    finally:
        environment.close()
    directory = Path(output).resolve()
    files = {role: manifest.path(directory, role) for role in manifest.files}
    files["manifest"] = directory / MANIFEST_NAME
    return ExportResult(directory=directory, manifest=manifest, files=files)
