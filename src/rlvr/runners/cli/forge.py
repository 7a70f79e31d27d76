"""`rlvr forge`: repository bug-fix tasks with hidden tests from real Python projects (`rlvr.runners.forge`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rlvr.core.errors import RlvrError
from rlvr.runners.cli.app import Command, EngineOpt, RayAddressOpt, check_engine, console, err_console, fail, warn

__all__: list[str] = []

_HELP = "\n\n".join([
    "Turn pure-Python projects with pytest suites into validated repair tasks: each project's suite runs "
    "twice in the sandbox (tests that pass deterministically are kept), seeded AST bug families propose "
    "bugs in the functions those tests run, and a candidate becomes a task when at least one kept test "
    "fails (FAIL_TO_PASS) and every other kept test still passes (PASS_TO_PASS), twice, within the budget.",
    "Each task is a Harbor task directory OUTPUT/TASK_ID/ (instruction.md, task.toml, environment/ with the "
    "buggy workspace, tests/ withheld from the agent, solution/ with the reverse patch) and a row of "
    "OUTPUT/tasks.jsonl; train on them with `rlvr.make(\"swe/forge-v1\", tasks_dir=OUTPUT)`.",
    "Rerunning the same command resumes (decided candidates are skipped); a larger -n adds only new tasks.",
])


def forge(
    output: Annotated[Path, typer.Option("--output", "-o", help="Tasks folder (resumed if it holds a run).")],
    source: Annotated[list[str] | None, typer.Option(help="A project's source folder or sdist (repeatable).")] = None,
    package: Annotated[list[str] | None, typer.Option(help="NAME==VERSION whose sdist is fetched from the "
                                                      "package index (repeatable).")] = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Tasks wanted per project.")] = 10,
    mutators: Annotated[str | None, typer.Option(help="Comma-separated bug families (default: all).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the candidates' order and the test samples.")] = 0,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    workers: Annotated[int, typer.Option(min=1, help="Candidates validated at once (threads or Ray actors).")] = 1,
    budget_s: Annotated[float, typer.Option(help="Longest one suite run may take, seconds.")] = 300.0,
    max_tests: Annotated[int, typer.Option(min=1, help="Most tests one task's grading runs.")] = 10,
    check: Annotated[bool, typer.Option(help="Grade each task's oracle and a no-op before publishing it.")] = True,
    issue_writer: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL of a model that rewrites "
                                                     "each CI-failure report as an issue (failures fall back).")]
    = None,
    issue_model: Annotated[str, typer.Option(help="The issue writer's model name.")] = "default",
    overwrite: Annotated[bool, typer.Option(help="Start every project over instead of resuming.")] = False,
) -> None:
    """Repository bug-fix tasks from real Python projects (help text: `_HELP`)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from rlvr.runners.forge import ProjectReport
    from rlvr.runners.forge import forge as run_forge

    try:
        check_engine(engine, ray_address)
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=err_console) as progress:
            bar = progress.add_task("candidates: 0 decided, 0 tasks", total=None)
            counts = {"decided": 0, "tasks": 0}

            def on_candidate(row: dict[str, Any]) -> None:
                counts["decided"] += 1
                counts["tasks"] += bool(row.get("task_id"))
                progress.update(bar, description=f"candidates: {counts['decided']} decided, {counts['tasks']} tasks")

            def on_project(report: ProjectReport) -> None:
                if report.error:
                    warn(f"{report.project} refused: {report.error}")

            report = run_forge(source or (), package or (), out=output, n=n, mutators=mutators, seed=seed,
                               engine=engine, workers=workers, ray_address=ray_address, budget_s=budget_s,
                               max_tests=max_tests, check=check, issue_writer=issue_writer, issue_model=issue_model,
                               overwrite=overwrite, on_project=on_project, on_candidate=on_candidate)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt:
        err_console.print("interrupted; decided candidates and written tasks are kept. Rerun to resume.")
        raise typer.Exit(130) from None
    table = Table(title=f"rlvr forge → {output}")
    for column in ("project", "kept tests", "tried", "tasks now", "tasks in all", "dropped", "wall s"):
        table.add_column(column, justify="left" if column in ("project", "dropped") else "right",
                         overflow="fold", no_wrap=column != "dropped")
    for p in report.projects:
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(p.dropped.items())) or ("refused" if p.error else "")
        table.add_row(p.project, str(p.kept_tests), str(p.tried), str(p.validated), str(p.tasks_total), dropped,
                      f"{p.wall_s:.0f}")
    console.print(table)
    if all(p.error for p in report.projects):
        raise typer.Exit(2)


COMMAND = Command(forge, "forge", _HELP)
