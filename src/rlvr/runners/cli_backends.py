"""`rlvr export`, `rlvr compare` and the veRL/OpenRLHF path of `rlvr train` (registered on `rlvr.runners.cli.app`).

Kept apart from `cli.py` so each file stays readable; `cli.py` imports this module once, at its end,
which adds the two commands to the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli import EnvArgs, TasksFile, _fail, _warn, app, console, err_console

__all__ = ["EXTERNAL", "compare", "export_", "train_external"]

EXTERNAL = ("verl", "openrlhf")
"""Backends trained in their own Python by `rlvr train`."""


def _flat_args(items: list[str] | None) -> dict[str, Any]:
    """`KEY=VALUE` trainer options with dotted keys kept whole (hydra paths) and values as typed."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"trainer argument {item!r} must look like KEY=VALUE (e.g. trainer.save_freq=10)")
        out[key.strip()] = raw
    return out


def train_external(backend: str, env: str, env_arg: list[str] | None, model: str | None, steps: int,
                    output: Path, trainer_arg: list[str] | None, backend_python: Path | None, dry_run: bool,
                    n_gpus: int, tasks: Path | None = None, *, device: str = "auto",
                    timeout_s: float | None = None) -> None:
    """`rlvr train --backend verl|openrlhf`: export, command, launch (exit code = the trainer's)."""
    import shlex

    from rlvr.runners.train import train_backend  # type: ignore[import-not-found,unused-ignore]  # lazy

    try:
        run = train_backend(backend, env, parse_env_args(env_arg), model, steps, output, _flat_args(trainer_arg),
                            backend_python=backend_python, dry_run=dry_run, n_gpus=n_gpus, tasks=tasks,
                            device=device, timeout_s=timeout_s)
    except (RlvrError, OSError) as exc:
        raise _fail(exc) from exc
    except KeyboardInterrupt as exc:
        err_console.print(f"interrupted; the {backend} run was stopped (log: {output}/train.log)")
        raise typer.Exit(130) from exc
    if run.dry_run:
        console.print(f"dry run: export in {run.export_dir}; command in {run.output / 'command.sh'}:",
                      highlight=False)
        console.print(escape(shlex.join(run.command)), highlight=False, soft_wrap=True)
        for note in run.notes:
            _warn(note)
        return
    if run.exit_code != 0:
        err_console.print(f"[red]error:[/red] {backend} exited with code {run.exit_code} after {run.wall_s:.0f} s; "
                          f"log: {escape(str(run.log_path))}", highlight=False, soft_wrap=True)
        raise typer.Exit(run.exit_code or 1)
    console.print(f"training finished ({run.wall_s:.0f} s); results in {output}", highlight=False)


@app.command(name="export")
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
        raise _fail(exc) from exc
    manifest = result.manifest
    kind = ", multi-turn" if manifest.multi_turn else ""
    console.print(f"exported {manifest.env_id} for {backend} ({manifest.n_train} train, {manifest.n_val} val rows"
                  f"{kind}) to {escape(str(result.directory))}:", highlight=False, soft_wrap=True)
    for role, path in result.files.items():
        size = f"{path.stat().st_size:,} bytes" if path.is_file() else "missing"
        console.print(f"  {role:<13} {escape(str(path))}  ({size})", highlight=False, soft_wrap=True)


_COMPARE_HELP = "\n\n".join([
    "Compare trainer backends on one environment: one HTML report (plots) and summary.json in OUTPUT.",
    "Per backend, in its own Python (--trl-python/--verl-python/--openrlhf-python, else $RLVR_TRL_PYTHON, "
    "$RLVR_VERL_PYTHON, $RLVR_OPENRLHF_PYTHON, else this Python): a parity check (recorded rollouts of this "
    "env replayed through the backend's adapter must give rlvr's rewards and loss masks), then training: TRL "
    "anywhere; veRL and OpenRLHF on a CUDA GPU where that Python sees one, else in rlvr's CPU mode with settings "
    "aligned to TRL's (a backend without a CPU mode gets a dry run: export and command). A backend that is not "
    "installed there is reported as unavailable.",
    "Exit code 1 when a parity check disagrees or a training run fails; 2 when the command cannot run.",
])


@app.command(help=_COMPARE_HELP)
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
    """Compare trainer backends on one environment (help text: `_COMPARE_HELP`)."""
    from rlvr.runners.compare import compare_command, parse_backends

    pythons = {"trl": trl_python, "verl": verl_python, "openrlhf": openrlhf_python}
    try:
        names = parse_backends(backends)
        extra = {"trl": _flat_args(trl_arg), "verl": _flat_args(verl_arg), "openrlhf": _flat_args(openrlhf_arg)}
        summary = compare_command(env, parse_env_args(env_arg), names, output, steps=steps, model=model,
                                  pythons={k: str(v) if v else None for k, v in pythons.items()},
                                  trainer_args=extra, n_tasks=n_tasks, train=train,
                                  train_timeout_s=train_timeout)
    except (RlvrError, OSError) as exc:
        raise _fail(exc) from exc
    except KeyboardInterrupt as exc:
        raise typer.Exit(130) from exc
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
    console.print(table)
    if any(b.status == "failed" or "error" in (b.parity or {}) or (b.parity or {}).get("mismatches")
           for b in summary.backends):
        raise typer.Exit(1)


def _fmt(value: Any, fmt: str = "{:.3g}") -> str:
    return "-" if value is None else fmt.format(value)
