"""`rlvr init NAME`: write a pip-installable environment package (the work is `rlvr.runners.init`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rlvr.core.errors import RlvrError
from rlvr.runners.cli.app import Command, console, fail

__all__ = ["COMMAND"]

_HELP = "\n\n".join([
    "Write a pip-installable environment package NAME: pyproject.toml registering it under the "
    "`rlvr.environments` entry point, NAME/env.py with a small task set and a verifier (--kind single), typed "
    "@tool functions (tool) or a multi-turn environment answering each turn (multi), its tests (rlvr's "
    "conformance check, the adversarial audit, the oracle and no-op test policies) and a README.",
    "Then: pip install -e NAME; rlvr check ID; rlvr eval --env ID --policy oracle -o eval.jsonl; "
    "rlvr train --backend trl --env ID.",
    "Refused, with nothing written: a non-empty folder, a NAME that is not a package name or shadows an "
    "importable module, an id that is already registered.",
])


def init(
    name: Annotated[str, typer.Argument(help="Package name, e.g. word-sort (import name: word_sort).")],
    kind: Annotated[str, typer.Option(help="single (a verifier of your own), tool (typed @tool functions) or "
                                      "multi (the environment answers each turn).")] = "single",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Folder to create (default ./NAME); "
                                                "it may exist if empty.")] = None,
    env_id: Annotated[str | None, typer.Option("--id", help="Environment id, family/name-vN (default "
                                               "IMPORT_NAME/default-v1).")] = None,
) -> None:
    """Write a pip-installable environment package (help text: `_HELP`)."""
    from rlvr.runners.init import init_env

    try:
        made = init_env(name, kind, output, env_id)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    where = escape(str(made.directory))
    console.print(f"wrote {made.dist} ({made.kind}: environment {made.env_id}) to {where}:", highlight=False,
                  soft_wrap=True)
    for path in made.files:
        console.print(f"  {escape(str(path))}", highlight=False, soft_wrap=True)
    console.print("next:", highlight=False)
    for line in (f"pip install -e {where}", f"rlvr check {made.env_id}", f"rlvr check {made.env_id} --adversarial",
                 f"rlvr eval --env {made.env_id} --policy oracle --limit 8 -o eval.jsonl",
                 f"pytest {where}/tests"):
        console.print(f"  {line}", highlight=False, soft_wrap=True)


COMMAND = Command(init, "init", _HELP)
