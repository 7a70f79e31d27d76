"""`rlvr sft`: warm-start a model on verified demonstrations with TRL's SFTTrainer (`rlvr.runners.sft`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from rlvr.core.errors import RlvrError
from rlvr.runners.cli.app import Command, console, err_console, fail

if TYPE_CHECKING:
    from rlvr.runners.sft import SftResult

__all__ = ["COMMAND"]

_HELP = "\n\n".join([
    "Fine-tune a model on the verified demonstrations that `rlvr synth` writes (--data: its sft.jsonl) with "
    "TRL's SFTTrainer and save it to the folder OUTPUT, which `rlvr eval/train/compare --model OUTPUT` take.",
    "The loss is on the tokens the model samples (each assistant turn through its end-of-turn token); the "
    "prompt and the tool answers are masked. The chat template that renders tool calls (the model's own, or "
    "TRL's qwen2_5 for models such as SmolLM2 whose template cannot) is saved with the model, so SFT, eval "
    "and GRPO render tool calls identically.",
    "Bad rows (no assistant turn, a tool call the template cannot render, longer than --max-length, ...) are "
    "skipped, each printed with its line number and counted (OUTPUT/sft_data.json); none is truncated.",
    "Rerunning the same command resumes from the last checkpoint in OUTPUT/checkpoints; another "
    "configuration in the same OUTPUT is refused unless --overwrite.",
])


def sft(
    data: Annotated[Path, typer.Option("--data", "-d", help="The demonstrations: an sft.jsonl of rlvr synth.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Model folder to write (resumed if it holds "
                                         "this run).")],
    model: Annotated[str | None, typer.Option(help="Model folder, Hub id, or smollm2 (the embedded "
                                              "SmolLM2-135M-Instruct, the default).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Train on the first LIMIT usable rows.")] = None,
    max_length: Annotated[int, typer.Option(help="Most tokens per row; longer rows are skipped.")] = 1024,
    chat_template: Annotated[Path | None, typer.Option(help="File holding a chat template (Jinja) to render "
                                                       "with, instead of the model's own / TRL's qwen2_5.")] = None,
    epochs: Annotated[float, typer.Option(help="Passes over the rows (ignored with --max-steps).")] = 3.0,
    max_steps: Annotated[int | None, typer.Option(help="Optimizer steps; wins over --epochs.")] = None,
    batch_size: Annotated[int, typer.Option(help="Rows per batch.")] = 8,
    gradient_accumulation_steps: Annotated[int, typer.Option(help="Batches per optimizer step.")] = 1,
    learning_rate: Annotated[float, typer.Option("--learning-rate", "--lr", help="Peak learning rate (AdamW).")] = (
        5e-5
    ),
    lr_scheduler: Annotated[str, typer.Option(help="transformers scheduler name (cosine, linear, constant, ...).")] = (
        "cosine"
    ),
    warmup_steps: Annotated[int, typer.Option(help="Linear warm-up steps.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the row shuffling and of the trainer.")] = 0,
    save_steps: Annotated[int, typer.Option(help="Save a checkpoint every this many steps.")] = 50,
    overwrite: Annotated[bool, typer.Option(help="Discard an earlier run in OUTPUT instead of resuming it.")] = False,
) -> None:
    """Fine-tune a model on verified demonstrations (help text: `_HELP`)."""
    from rlvr.runners.sft import SftConfig, run_sft

    try:
        template = _read_template(chat_template)
        config = SftConfig.build(
            data=data, model=model, output=output, limit=limit, max_length=max_length, chat_template=template,
            epochs=epochs, max_steps=max_steps, batch_size=batch_size,
            gradient_accumulation_steps=gradient_accumulation_steps, learning_rate=learning_rate,
            lr_scheduler_type=lr_scheduler, warmup_steps=warmup_steps, seed=seed, save_steps=save_steps,
            overwrite=overwrite,
        )
        with _TrainProgress() as progress:
            result = run_sft(config, callbacks=[progress.callback()])
    except RlvrError as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt:
        err_console.print(f"interrupted; checkpoints in {output}/checkpoints are kept. Rerun the same command to "
                          "resume.")
        raise typer.Exit(130) from None
    console.print(_table(result))


def _read_template(path: Path | None) -> str | None:
    """The text of `--chat-template PATH` (None: none given).

    Raises:
        ConfigError: the file cannot be read.
    """
    from rlvr.core.errors import ConfigError

    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--chat-template {str(path)!r} cannot be read ({exc.strerror}); give a file holding a "
                          "Jinja chat template") from None


class _TrainProgress:
    """A rich progress bar on stderr over optimizer steps, with the last logged loss (a `TrainerCallback`)."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(TextColumn("steps"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 TextColumn("{task.description}"), console=err_console)
        self.bar = self.progress.add_task("", total=None)

    def __enter__(self) -> _TrainProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def callback(self) -> Any:
        """A `transformers.TrainerCallback` moving this bar (steps done of the run's max steps), showing the loss."""
        from transformers import TrainerCallback

        progress, bar = self.progress, self.bar

        class _Callback(TrainerCallback):  # type: ignore[misc]  # transformers is untyped here
            def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                progress.update(bar, total=state.max_steps, completed=state.global_step)

            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                progress.update(bar, completed=state.global_step)

            def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
                if logs and "loss" in logs:
                    progress.update(bar, description=f"loss {float(logs['loss']):.4f}")

        return _Callback()


def _table(result: SftResult) -> Table:
    table = Table(title=f"rlvr sft → {result.output}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    losses = [r["loss"] for r in result.log_history if "loss" in r]
    table.add_row("rows trained on / skipped", f"{result.examples} / {len(result.bad_rows)}")
    table.add_row("optimizer steps", str(result.steps))
    table.add_row("resumed from", result.resumed_from.name if result.resumed_from else "-")
    table.add_row("loss first / last", f"{losses[0]:.4f} / {losses[-1]:.4f}" if losses else "n/a")
    table.add_row("wall s", f"{result.wall_s:.1f}")
    return table


COMMAND = Command(sft, "sft", _HELP)
