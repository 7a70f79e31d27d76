"""`rlvr verify`: score every row of a file; the work is `rlvr.runners.verify` (JSONL) or `rlvr.runners.sharded`.

Exit codes: 0 success; 1 bad rows with `--strict`; 2 the command could not run; 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.core.types import STATUSES
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli.app import Command, check_engine, console, err_console, fail, warn

__all__: list[str] = []

_HELP = "\n\n".join([
    "Score every row of INPUT and write it with a `verdict` to OUTPUT (incremental, resumable).",
    "Output columns: each row is the input object plus `_line` (its 1-based input line number) and "
    "`verdict` (status, reward, detail). A row that cannot be verified (not JSON, missing or null key) "
    "also gets `_bad_row: true`, and a line that is not a JSON object is kept as text under `_raw`. "
    "Input rows that already have `verdict`, `_line` or `_bad_row` get them replaced (with a warning).",
    "The run configuration (input, verifier and its options, keys) is recorded in OUTPUT.meta.json. "
    "Rerunning the same command resumes; a rerun with another configuration is refused unless "
    "--overwrite is given.",
    "INPUT may also be a Parquet file, a `datasets` save_to_disk directory (DIR[:SPLIT]) or a Hugging Face "
    "dataset id (ID[:CONFIG]:SPLIT); OUTPUT ending in .parquet is written as Parquet. With --engine ray "
    "(or those formats) finished rows go to order-independent shards in OUTPUT.shards/, merged into OUTPUT "
    "in input order at the end; rerunning after a kill resumes from them.",
])

_BAD_ROWS_SHOWN = 20
"""Bad rows printed one by one; the rest are only counted."""


def verify(
    input: Annotated[Path, typer.Argument(help="Input JSONL: one object per line with a response and a reference "
                                          "(or Parquet, a dataset folder or id: see above).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output JSONL, or .parquet (resumed if it exists).")],
    verifier: Annotated[str, typer.Option(help="Verifier name (math, sql, code, ...) or module:Class.")] = "math",
    verifier_arg: Annotated[
        list[str] | None, typer.Option("--verifier-arg", help="Verifier option KEY=VALUE, e.g. timeout_s=5.")
    ] = None,
    response_key: Annotated[str, typer.Option(help="Key of the response in each row.")] = "response",
    reference_key: Annotated[str, typer.Option(help="Key of the reference answer in each row.")] = "reference",
    prompt_key: Annotated[str | None, typer.Option(help="Key of the question or chat prompt (judge verifiers: "
                                                   "judge, ruler); the reference then is optional.")] = None,
    group_key: Annotated[str | None, typer.Option(help="Rows sharing this key's value are judged together in "
                                                  "one call (group verifiers: ruler).")] = None,
    expected_key: Annotated[str, typer.Option(help="Key of an optional expected status, to report agreement.")] = (
        "expected"
    ),
    workers: Annotated[
        int | None, typer.Option(min=1, help="Verifier worker processes (local, default 1) or Ray actors "
                                 "(ray, default: every CPU of the cluster).")
    ] = None,
    engine: Annotated[str, typer.Option(help="Where to verify: local (this machine) or ray (a Ray cluster).")] = (
        "local"
    ),
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster for --engine ray: auto, HOST:PORT (default: RAY_ADDRESS, else a "
                                 "new local cluster).")
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="Rows per written batch (default: local 4x workers, ray 64).")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Discard an existing output instead of resuming it.")] = False,
    strict: Annotated[bool, typer.Option(help="Exit 1 if any row was bad (not JSON, missing key).")] = False,
) -> None:
    """Score every row of INPUT and write it with a `verdict` to OUTPUT (help text: `_HELP`)."""
    try:
        scorer, source, total = _open(input, output, engine, ray_address, verifier, verifier_arg)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    if not total:
        warn(f"input has no rows: {input} is empty or holds only blank lines")
    options: dict[str, Any] = dict(
        response_key=response_key, reference_key=reference_key, expected_key=expected_key, batch_size=batch_size,
        overwrite=overwrite, on_bad=_BadRows().print, on_warning=warn, prompt_key=prompt_key, group_key=group_key)
    bar = _LazyProgress(total)
    try:
        with scorer:
            stats = _run(input, output, scorer, source, engine, workers, ray_address, {**options,
                                                                                      "on_progress": bar.advance})
    except RlvrError as exc:
        bar.stop()
        raise fail(exc) from exc
    except KeyboardInterrupt:
        bar.stop()
        err_console.print("interrupted; rows written so far are kept. Rerun the same command to resume.")
        raise typer.Exit(130) from None
    bar.stop()
    _report(stats, output, verifier, response_key, reference_key)
    if strict and stats.bad_rows:
        raise typer.Exit(1)


def _open(input: Path, output: Path, engine: str, ray_address: str | None, verifier: str,
          verifier_arg: list[str] | None) -> tuple[Any, Any, int]:
    """The verifier, the row source when the sharded path runs (else None), and the rows to verify.

    Raises:
        ConfigError: an unknown engine or verifier, or a JSONL input that does not exist.
    """
    from rlvr.runners.rowio import count_rows, open_source
    from rlvr.runners.sharded import uses_shards
    from rlvr.verifiers.registry import get_verifier

    check_engine(engine, ray_address)
    sharded = uses_shards(engine, input, output)
    if not sharded and not input.is_file():
        raise ConfigError(f"input file {str(input)!r} does not exist")
    scorer = get_verifier(verifier, **parse_env_args(verifier_arg))
    source = open_source(str(input)) if sharded else None
    return scorer, source, source.total() if source is not None else count_rows(input)


def _run(input: Path, output: Path, scorer: Any, source: Any, engine: str, workers: int | None,
         ray_address: str | None, options: dict[str, Any]) -> Any:
    """Verify through the local JSONL path, or (with a `source`) through an engine and shards."""
    if source is None:
        from rlvr.runners.verify import verify_file

        return verify_file(input, output, scorer, workers=workers or 1, **options)
    from rlvr.runners.engine import make_engine
    from rlvr.runners.sharded import verify_sharded

    if any(options.pop(key) for key in ("prompt_key", "group_key")):
        raise ConfigError("--prompt-key and --group-key need JSONL input and output with --engine local")
    with make_engine(engine, scorer, workers, ray_address) as runner:
        return verify_sharded(source, output, scorer, runner, **options)


class _BadRows:
    """Prints the first `_BAD_ROWS_SHOWN` bad rows' messages."""

    def __init__(self) -> None:
        self.shown = 0

    def print(self, message: str) -> None:
        self.shown += 1
        if self.shown <= _BAD_ROWS_SHOWN:
            err_console.print(f"[yellow]bad row[/yellow] {escape(message)}", highlight=False, soft_wrap=True)


def _rows_per_second() -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RowsPerSecond(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(f"{task.speed:,.0f} rows/s" if task.speed else "- rows/s")

    return RowsPerSecond()


class _LazyProgress:
    """A progress bar that appears on the first advance, so an early error prints alone."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("verifying"), BarColumn(), MofNCompleteColumn(), _rows_per_second(),
                   TimeRemainingColumn())
        self.progress = Progress(*columns, console=err_console)
        self.bar = self.progress.add_task("verify", total=total)
        self.started = False

    def advance(self, k: int) -> None:
        if not self.started:
            self.progress.start()
            self.started = True
        self.progress.advance(self.bar, k)

    def stop(self) -> None:
        if self.started:
            self.progress.stop()


def _report(stats: Any, output: Path, verifier: str, response_key: str, reference_key: str) -> None:
    """The counts table, then a hint when every row lacks a key, or a warning when every verdict is `error`."""
    _print_stats(stats, output)
    hint = stats.key_hint(response_key, reference_key)
    if hint:
        err_console.print(f"[yellow]hint:[/yellow] {escape(hint)}", highlight=False, soft_wrap=True)
    total_rows, errors = stats.total, stats.statuses.get("error", 0)  # bad rows count as error
    if not hint and total_rows > stats.bad_rows and errors == total_rows:
        warn(f"every verified row is `error` (the grader failed, not the responses): read `verdict.detail` in "
             f"{output}; is --verifier {verifier!r} the right one for these references, with its extra installed?")


def _print_stats(stats: Any, output: Path) -> None:
    table = Table(title=f"rlvr verify → {output}")
    table.add_column("status")
    table.add_column("rows", justify="right")
    for status in STATUSES:
        table.add_row(status, str(stats.statuses.get(status, 0)))
    table.add_row("total", str(stats.total), end_section=True)
    table.add_row("of which bad rows", str(stats.bad_rows))
    accuracy = "n/a" if stats.accuracy is None else f"{stats.accuracy:.1%}"
    table.add_row("accuracy (correct / scored)", accuracy)
    if stats.expected_total:
        table.add_row("matches expected", f"{stats.expected_match}/{stats.expected_total}")
    table.add_row("resumed / written now", f"{stats.resumed} / {stats.written}")
    if stats.blank_lines:
        table.add_row("blank input lines skipped", str(stats.blank_lines))
    console.print(table)


COMMAND = Command(verify, "verify", _HELP)
