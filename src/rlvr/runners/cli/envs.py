"""`rlvr envs`: list the registered environment ids (`rlvr.environments.registry`)."""

from __future__ import annotations

from rich.table import Table

from rlvr.runners.cli.app import Command, console

__all__: list[str] = []


def envs() -> None:
    """List the registered environment ids."""
    from rlvr.environments.registry import registry

    table = Table(title="registered environments")
    table.add_column("id")
    table.add_column("description")
    for env_id in registry.ids():
        table.add_row(env_id, registry.spec(env_id).description)
    console.print(table)


COMMAND = Command(envs, "envs")
