"""`rlvr export`: the files a veRL or OpenRLHF run needs for an environment; the work is `rlvr.runners.export`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rlvr.core.errors import RlvrError
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli.app import Command, EnvArgs, TasksFile, console, fail

__all__: list[str] = []


def export_(
    backend: Annotated[str, typer.Option(help="Backend to export for: verl or openrlhf.")],
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Export folder (created).")],
    env_arg: EnvArgs = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Export only the first LIMIT tasks.")] = None,
    val_size: Annotated[int, typer.Option(min=0, help="Tasks held out for a validation file.")] = 0,
    overwrite: Annotated[bool, typer.Option(help="Replace the files of a non-empty folder.")] = False,
    tasks: TasksFile = None,
) -> None:
    """Write the data, reward and agent files a veRL or OpenRLHF run needs for an environment."""
    from rlvr.runners.export import export_command

    try:
        result = export_command(backend, env, parse_env_args(env_arg), output, limit=limit, val_size=val_size,
                                overwrite=overwrite, tasks=tasks)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    manifest = result.manifest
    kind = ", multi-turn" if manifest.multi_turn else ""
    console.print(f"exported {manifest.env_id} for {backend} ({manifest.n_train} train, {manifest.n_val} val rows"
                  f"{kind}) to {escape(str(result.directory))}:", highlight=False, soft_wrap=True)
    for role, path in result.files.items():
        size = f"{path.stat().st_size:,} bytes" if path.is_file() else "missing"
        console.print(f"  {role:<13} {escape(str(path))}  ({size})", highlight=False, soft_wrap=True)


COMMAND = Command(export_, "export")
