"""`rlvr sample`: a verify input from an environment's tasks, each row with the status it should get.

The rows are `rlvr.runners.verify.sample_rows`; `rlvr verify` on them should agree with `expected`.

Example:
    $ rlvr sample --env math/reasoning-gym-v1 -n 20 -o sample.jsonl   # 20 tasks, 3-4 rows each
    $ rlvr verify --verifier math sample.jsonl -o verdicts.jsonl
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlvr.core.errors import RlvrError
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli.app import Command, EnvArgs, console, fail, warn

__all__: list[str] = []


def sample(
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")] = "math/reasoning-gym-v1",
    env_arg: EnvArgs = None,
    n: Annotated[
        int,
        typer.Option("-n", min=1, help="Number of TASKS to sample; each gives 3-4 rows (reference, off-by-one "
                     "when the answer is a number, empty, no answer), so -n 20 writes 60-80 rows."),
    ] = 20,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output JSONL for `rlvr verify`.")] = Path(
        "sample.jsonl"
    ),
) -> None:
    """Write a verify input from N tasks of an environment (3-4 rows per task).

    Per task: the reference answer plus known-wrong responses, each with the status it should get.
    """
    import json

    from rlvr.environments.registry import make
    from rlvr.runners.verify import sample_rows

    try:
        environment = make(env, **parse_env_args(env_arg))
    except RlvrError as exc:
        raise fail(exc) from exc
    per_task: dict[str, int] = {}
    try:
        with output.open("w", encoding="utf-8") as f:
            for row in sample_rows(environment, n):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                per_task[row["task_id"]] = per_task.get(row["task_id"], 0) + 1
    except OSError as exc:
        raise fail(exc) from exc
    finally:
        environment.close()
    console.print(f"wrote {_sample_summary(per_task)} from {env} to {output}", highlight=False)
    if len(per_task) < n:
        warn(f"the environment has only {len(per_task)} tasks (asked for {n}); raise its size with -a size=N")


def _sample_summary(per_task: dict[str, int]) -> str:
    """'20 tasks × 4 responses = 80 rows' (or '× 3-4 responses' when tasks differ)."""
    counts = sorted(set(per_task.values())) or [0]
    each = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    tasks = len(per_task)
    return f"{tasks} task{'s' * (tasks != 1)} × {each} responses = {sum(per_task.values())} rows"


COMMAND = Command(sample, "sample")
