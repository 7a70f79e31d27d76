"""The `rlvr` app and what its commands share: consoles, options spelled alike, error and progress printing.

`app` is the typer application with its root options (`--version`); the commands are added to it
in one place, `rlvr.runners.cli` (its `COMMANDS`), each from its own module's `COMMAND`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from rlvr.core.errors import ConfigError

__all__: list[str] = []

console = Console()
"""Results (tables, summaries) go to stdout."""
err_console = Console(stderr=True)
"""Errors, warnings and progress bars go to stderr."""


@dataclass(frozen=True)
class Command:
    """One `rlvr` command: the function typer turns into it (its parameters are the options), its name and help.

    Attributes:
        function: the command's body; its annotated parameters are the command's arguments and options.
        name: the command as typed (`rlvr NAME`).
        help: the help text (paragraphs joined by blank lines); None: the function's docstring.
    """

    function: Callable[..., None]
    name: str
    help: str | None = None


app = typer.Typer(
    name="rlvr",
    help="Verifiers and environments for RL with verifiable rewards.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        from rlvr import __version__

        console.print(f"rlvr {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Show the rlvr version and exit.")
    ] = False,
) -> None:
    """Verifiers and environments for RL with verifiable rewards."""


# -- options several commands spell the same way ---------------------------------------------------
EnvArgs = Annotated[
    list[str] | None,
    typer.Option("--env-arg", "-a", help="Environment factory argument KEY=VALUE (JSON-decoded); repeatable."),
]
# options that rlvr eval and rlvr synth (and verify, for the engine) spell the same way
ModelOpt = Annotated[str | None, typer.Option(help="Served model name (with --base-url) or local model / smollm2.")]
BaseUrlOpt = Annotated[str | None, typer.Option(help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")]
PolicyOpt = Annotated[str | None, typer.Option(help="Scripted policy: oracle, noop or script:PATH.")]
LimitOpt = Annotated[int | None, typer.Option(min=1, help="Use only the first LIMIT tasks.")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")]
MaxTokensOpt = Annotated[int, typer.Option(min=1, help="Most tokens per model turn.")]
TemperatureOpt = Annotated[float, typer.Option(min=0.0, help="Sampling temperature (0 = greedy).")]
TopPOpt = Annotated[float, typer.Option(help="Nucleus sampling mass.")]
SeedOpt = Annotated[int, typer.Option(help="Base seed (environment resets, sampling).")]
GeneratorOpt = Annotated[str, typer.Option(help="What generates with a local model (no --base-url): transformers "
                                           "(model.generate) or vllm (vllm.LLM).")]
EngineOpt = Annotated[str, typer.Option(help="Where verification runs: local (worker processes) or ray.")]
RayAddressOpt = Annotated[str | None, typer.Option(help="With --engine ray: auto, HOST:PORT, or unset.")]
WorkersOpt = Annotated[int | None, typer.Option(min=1, help="Verifier workers (local) or Ray actors (ray).")]

TasksFile = Annotated[
    Path | None,
    typer.Option("--tasks", help="Only the tasks this JSONL lists (one {\"task_id\": ...} a line), e.g. the "
                 "rl.jsonl of `rlvr synth` (same --env and --env-arg values)."),
]


# -- printing ---------------------------------------------------------------------------------------
def fail(exc: Exception) -> typer.Exit:
    """Print `exc` as one `error:` line on stderr; return the exit (code 2) for the caller to raise."""
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def warn(message: str) -> None:
    """Print one `warning:` line on stderr."""
    err_console.print(f"[yellow]warning:[/yellow] {escape(message)}", highlight=False, soft_wrap=True)


def check_engine(engine: str, ray_address: str | None) -> None:
    """Refuse an unknown `--engine` or a `--ray-address` without `--engine ray`.

    Raises:
        ConfigError: naming the engines to choose from, or the missing `--engine ray`.
    """
    from rlvr.runners.engine import ENGINES

    if engine not in ENGINES:
        raise ConfigError(f"unknown --engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if ray_address is not None and engine != "ray":
        raise ConfigError("--ray-address needs --engine ray")


class EpisodeProgress:
    """A rich progress bar on stderr over the episodes left to run (`rlvr eval`, `rlvr synth`).

    Used as a context manager; `start(total)` sets the total once the resumed episodes are known,
    `advance(k)` counts finished ones.
    """

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 console=err_console)
        self.bar = self.progress.add_task("eval", total=None)

    def __enter__(self) -> EpisodeProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, total: int) -> None:
        """Set the number of episodes to run."""
        self.progress.update(self.bar, total=total)

    def advance(self, k: int) -> None:
        """Count `k` finished episodes."""
        self.progress.advance(self.bar, k)

