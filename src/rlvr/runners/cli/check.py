"""`rlvr check ENV_ID`: an environment's conformance checks, or with `--adversarial` its verifier's audit.

The checks are `rlvr.rollout.check`; the hack-resistance audit is `rlvr.environments.audit`.

Exit codes: 0 every check passed (no false pass); 1 a check failed (a wrong response scored correct);
2 the command could not run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli.app import Command, EnvArgs, console, fail, warn

__all__: list[str] = []


def check(
    env_id: Annotated[str, typer.Argument(help="Registered environment id, e.g. math/gsm8k-v1.")],
    env_arg: EnvArgs = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Number of tasks to check.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed for the reset checks.")] = 0,
    time_budget: Annotated[float, typer.Option(help="Per-verification time budget, seconds.")] = 5.0,
    adversarial: Annotated[bool, typer.Option("--adversarial", help="Instead: the hack-resistance audit (wrong "
                                              "responses by families of mutation for the verifier's domain; exit 1 "
                                              "on any that scores correct).")] = False,
    report_file: Annotated[Path | None, typer.Option("--report", help="With --adversarial: write the audit as "
                                                     "JSON here.")] = None,
) -> None:
    """Run the conformance checks on an environment; exit 1 if any fails (--adversarial: the audit)."""
    from rlvr.rollout.check import check as run_check

    if adversarial:
        _audit(env_id, env_arg, n, report_file)
        return
    if report_file is not None:
        raise fail(ConfigError("--report is written by the audit: add --adversarial"))
    try:
        report = run_check(env_id, n=n, seed=seed, time_budget_s=time_budget, env_kwargs=parse_env_args(env_arg))
    except RlvrError as exc:
        raise fail(exc) from exc
    table = Table(title=f"rlvr check {report.env_id} (n={report.n}, {report.elapsed_s:.1f} s)")
    for col in ("check", "result", "items", "detail"):
        table.add_column(col)
    for r in report.results:
        mark = "[green]pass[/green]" if r.passed else "[red]FAIL[/red]"
        table.add_row(r.name, mark, str(r.items), escape(_check_detail(r)))
    console.print(table)
    if not report.passed:
        raise typer.Exit(1)


def _audit(env_id: str, env_arg: list[str] | None, n: int, report_path: Path | None) -> None:
    """`rlvr check --adversarial`: the audit, a row per family, the JSON report; exit 1 on a false pass."""
    import json

    from rlvr.environments.audit import audit

    try:
        with console.status(f"auditing {env_id}") as status:
            report = audit(env_id, n=n, env_kwargs=parse_env_args(env_arg), on_task=lambda task, k, fp: status.update(
                f"auditing {env_id}: {task.id} ({k} probes), {fp} false passes so far"))
    except RlvrError as exc:
        raise fail(exc) from exc
    table = Table(title=f"rlvr check --adversarial {report.env_id} ({report.domain}, n={report.n}, "
                  f"{report.elapsed_s:.1f} s)")
    for col in ("family", "tried", "false passes", "errors", "first false pass"):
        table.add_column(col)
    rows = [(name, f, f.false_passes) for name, f in report.families.items()] + [
        ("controls (must pass)", report.controls, report.controls.failed)]
    for name, fam, bad in rows:
        first = fam.examples[0] if fam.examples else None
        shown = f"{first['task_id']} {first['probe']}: {first['status']} ← {first['response'][:80]!r}" if first else ""
        table.add_row(name, str(fam.tried), f"[red]{bad}[/red]" if bad else "0", str(fam.errors), escape(shown))
    console.print(table)
    for line in report.skipped:
        warn(f"skipped {line}")
    console.print(f"{report.tried} wrong responses tried, {report.false_passes} scored correct; "
                  f"{report.controls.tried} controls, {report.controls_failed} failed")
    if report_path is not None:
        report_path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if report.false_passes:
        raise typer.Exit(1)


def _check_detail(result: Any) -> str:
    """A check's detail: its summary, or the failure count and the first failing items, one a line."""
    if result.passed or not result.failed_items:
        return str(result.detail)
    lines = [f"{result.failed} of {result.items} failed:", *(f"- {item}" for item in result.failed_items)]
    if result.failed > len(result.failed_items):
        lines.append(f"(+{result.failed - len(result.failed_items)} more)")
    return "\n".join(lines)


COMMAND = Command(check, "check")
