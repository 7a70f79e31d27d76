"""`rlvr compare`: several trainer backends on one environment, one report; the work is `rlvr.runners.compare`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from rlvr.core.errors import RlvrError
from rlvr.runners.args import parse_env_args, parse_flat_args
from rlvr.runners.cli.app import Command, EnvArgs, console, fail

__all__: list[str] = []

_HELP = "\n\n".join([
    "Compare trainer backends on one environment: one HTML report (plots) and summary.json in OUTPUT.",
    "Per backend, in its own Python (--trl-python/--verl-python/--openrlhf-python, else $RLVR_TRL_PYTHON, "
    "$RLVR_VERL_PYTHON, $RLVR_OPENRLHF_PYTHON, else this Python): a parity check (recorded rollouts of this "
    "env replayed through the backend's adapter must give rlvr's rewards and loss masks), then training: TRL "
    "anywhere; veRL and OpenRLHF on a CUDA GPU where that Python sees one, else in rlvr's CPU mode with settings "
    "aligned to TRL's (a backend without a CPU mode gets a dry run: export and command). A backend that is not "
    "installed there is reported as unavailable.",
    "Exit code 1 when a parity check disagrees or a training run fails; 2 when the command cannot run.",
])


def compare(
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")],
    env_arg: EnvArgs = None,
    backends: Annotated[str, typer.Option(help="Comma-separated backends: trl, verl, openrlhf.")] = "trl,verl,openrlhf",
    output: Annotated[Path, typer.Option("--output", "-o", help="Output folder (report.html, summary.json).")] = Path(
        "rlvr-compare"
    ),
    steps: Annotated[int, typer.Option(min=1, help="Training steps per backend.")] = 2,
    model: Annotated[str, typer.Option(help="Model folder, Hub id or smollm2 (its tokenizer builds the parity "
                                       "records).")] = "smollm2",
    train: Annotated[bool, typer.Option(help="Train (--no-train: parity checks and dry-run commands only).")] = True,
    trl_python: Annotated[Path | None, typer.Option(help="Python of the TRL environment.")] = None,
    verl_python: Annotated[Path | None, typer.Option(help="Python of the veRL environment.")] = None,
    openrlhf_python: Annotated[Path | None, typer.Option(help="Python of the OpenRLHF environment.")] = None,
    trl_arg: Annotated[list[str] | None, typer.Option("--trl-arg", help="TRL option KEY=VALUE; repeatable.")] = None,
    verl_arg: Annotated[list[str] | None, typer.Option("--verl-arg", help="veRL hydra override KEY=VALUE.")] = None,
    openrlhf_arg: Annotated[list[str] | None, typer.Option("--openrlhf-arg", help="OpenRLHF flag KEY=VALUE.")] = None,
    n_tasks: Annotated[int, typer.Option(min=1, help="Tasks the parity records are built from.")] = 2,
    train_timeout: Annotated[float | None, typer.Option(min=1, help="Time limit of each backend's training run, "
                                                        "seconds (stopped runs are reported as failed).")] = None,
) -> None:
    """Compare trainer backends on one environment (help text: `_HELP`)."""
    from rlvr.runners.compare.command import compare_command, parse_backends

    pythons = {"trl": trl_python, "verl": verl_python, "openrlhf": openrlhf_python}
    try:
        names = parse_backends(backends)
        extra = {"trl": parse_flat_args(trl_arg), "verl": parse_flat_args(verl_arg),
                 "openrlhf": parse_flat_args(openrlhf_arg)}
        summary = compare_command(env, parse_env_args(env_arg), names, output, steps=steps, model=model,
                                  pythons={k: str(v) if v else None for k, v in pythons.items()},
                                  trainer_args=extra, n_tasks=n_tasks, train=train,
                                  train_timeout_s=train_timeout)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt as exc:
        raise typer.Exit(130) from exc
    console.print(_table(summary, env))
    if any(b.status == "failed" or "error" in (b.parity or {}) or (b.parity or {}).get("mismatches")
           for b in summary.backends):
        raise typer.Exit(1)


def _table(summary: Any, env: str) -> Table:
    """One row per backend: status, parity agreement, steps, final reward, time, throughput, memory."""
    table = Table(title=f"rlvr compare {env} → {summary.report}")
    for col in ("backend", "status", "parity", "steps", "final reward", "wall s", "s/step", "tokens/s", "peak MiB"):
        table.add_column(col)
    for b in summary.backends:
        parity = b.parity or {}
        agree = "failed" if "error" in parity else f"{parity['agree']}/{parity['records']}" if parity else "-"
        t = b.train or {}
        table.add_row(b.backend, escape(b.status + (f": {b.reason}" if b.reason else "")), agree,
                      str(t.get("steps", "-")), _fmt(t.get("final_reward")), _fmt(t.get("wall_s"), "{:.1f}"),
                      _fmt(t.get("step_s"), "{:.1f}"), _fmt(t.get("tokens_per_s"), "{:,.0f}"),
                      _fmt(t.get("peak_mb"), "{:,.0f}"))
    return table


def _fmt(value: Any, fmt: str = "{:.3g}") -> str:
    return "-" if value is None else fmt.format(value)


COMMAND = Command(compare, "compare", _HELP)
