"""`rlvr verify` through an engine: any input format, sharded output, exactly-once and resumable.

Used for `--engine ray`, for Parquet or dataset inputs, for Parquet outputs, and to finish a
run that left shards. Output rows are those of the local JSONL path (`rlvr.runners.verify`):
the input row plus `_line` (its 1-based input position) and `verdict`.

How a run goes:

1. The run configuration is checked against `OUTPUT.meta.json` (as the local path does) and
   recorded. A finished output of the same configuration is not verified again.
2. Rows already in `OUTPUT.shards/` are skipped (after a `kill -9` of the driver); a JSONL
   output left by the local path is moved into the shards first, so runs can switch engines.
3. The remaining rows stream from the input in batches to the engine, which keeps a bounded
   number in flight; finished batches are appended to the shards in completion order.
4. The shards are merged into OUTPUT in input order, one row per id (see `rlvr.runners.shards`),
   written to a temporary file and renamed; the record is marked complete; the shards are removed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.files import atomic_open, atomic_path
from rlvr.runners.engine import engine_class
from rlvr.runners.engine.base import Engine, drive
from rlvr.runners.resumable import RunRecord
from rlvr.runners.rowio import RowSource, infer_schema, is_parquet, write_parquet
from rlvr.runners.rows import VerifyStats, batched
from rlvr.runners.shards import ShardStore, shards_dir
from rlvr.runners.verify import VERIFIER_LABELS, run_config, scan_output
from rlvr.verifiers.base import Verifier

__all__: list[str] = []


def uses_shards(engine: str, input_spec: Path, output_path: Path) -> bool:
    """True when `rlvr verify` takes this path rather than the local JSONL one.

    That is: an engine that yields batches out of input order (`Engine.in_order` False: ray), an
    input that is not a plain file or is Parquet, a Parquet output, or shards left by an unfinished
    sharded run.

    Raises:
        ConfigError: unknown engine name.
    """
    return (not engine_class(engine).in_order or not input_spec.is_file() or is_parquet(input_spec)
            or is_parquet(output_path) or shards_dir(output_path).is_dir())


def verify_sharded(
    source: RowSource,
    output_path: Path,
    verifier: Verifier,
    engine: Engine,
    *,
    response_key: str = "response",
    reference_key: str = "reference",
    expected_key: str = "expected",
    batch_size: int | None = None,
    overwrite: bool = False,
    on_progress: Callable[[int], None] | None = None,
    on_bad: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> VerifyStats:
    """Verify every row of `source` into `output_path` (JSONL, or Parquet by suffix) with `engine`.

    Args:
        source: the input rows (`rlvr.runners.rowio.open_source`).
        output_path: the merged output; `.parquet` writes Parquet, anything else JSONL.
        verifier: the verifier the engine runs (its configuration is recorded).
        engine: where verification runs (`rlvr.runners.engine.make_engine`).
        response_key: key of the response.
        reference_key: key of the reference.
        expected_key: optional key of an expected status, compared in the stats.
        batch_size: rows per batch (default: the engine's).
        overwrite: start over, discarding an existing output and its shards.
        on_progress: called with the number of rows just finished (resumed rows first).
        on_bad: called with the message of each bad row.
        on_warning: called once when input rows carry the output's own keys.

    Returns:
        `VerifyStats` over the whole output (resumed rows included).

    Raises:
        ConfigError: the output is the input, or was written with another configuration.
        DataError: the existing output or shards hold rows the input does not have, or the
            output cannot be written as Parquet.
    """
    keys = (response_key, reference_key)
    record = RunRecord(output_path, {**run_config(Path(), verifier, *keys), "input": source.description},
                       labels=VERIFIER_LABELS)
    store = ShardStore(shards_dir(output_path))
    finished = _prepare(source, output_path, store, record, overwrite, expected_key, keys)
    if finished is not None:
        if on_progress and finished.resumed:
            on_progress(finished.resumed)
        return finished
    done = store.scan()
    if len(done):
        record.check()
    if done.max > source.max_id():
        raise DataError(f"{store.directory} has a row for input row {done.max}, but the input has only "
                        f"{source.max_id()}: is this output from another input? Pass --overwrite to start over")
    record.write()
    if on_progress and len(done):
        on_progress(len(done))
    counts = VerifyStats()
    todo = (item for item in source.rows(counts) if item[0] not in done)
    written = _run(engine, batched(todo, batch_size or engine.default_batch_size), keys, store,
                   (on_progress, on_bad, on_warning))
    stats = _merge(store, output_path, expected_key, keys)
    stats.resumed, stats.written, stats.blank_lines = len(done), written, counts.blank_lines
    record.write(complete=True, rows=stats.total)
    store.remove()
    return stats


def _prepare(source: RowSource, output_path: Path, store: ShardStore, record: RunRecord, overwrite: bool,
             expected_key: str, keys: tuple[str, str]) -> VerifyStats | None:
    """Check paths; on --overwrite clear; return the stats of an already finished output, else None."""
    if source.path is not None and output_path.exists() and source.path.resolve() == output_path.resolve():
        raise ConfigError("the output file must differ from the input file")
    if overwrite:
        output_path.unlink(missing_ok=True)
        record.remove()
        store.remove()
    output_path.parent.mkdir(parents=True, exist_ok=True)
    if not output_path.exists() or store.exists():
        return None
    old = record.read() or {}
    if old.get("complete") is True:
        record.check()
        if old.get("rows") == source.total():  # finished, and the input has not grown since
            stats = _output_stats(output_path, expected_key, keys)
            stats.resumed = sum(stats.statuses.values())
            return stats
    if is_parquet(output_path):
        raise DataError(f"{output_path} exists but does not cover the input (unfinished, or the input changed); "
                        "pass --overwrite to start over")
    _adopt(output_path, store, record)
    return None


def _adopt(output_path: Path, store: ShardStore, record: RunRecord) -> None:
    """Move the rows of a JSONL output written by the local path into shards, then delete it.

    Safe against a kill at any point: rows are in the output, the shards, or both (kept once).
    """
    done, _ = scan_output(output_path)  # validates the rows and cuts a torn last line
    if not done:
        output_path.unlink()
        return
    record.check()  # raises, naming the differences
    with output_path.open(encoding="utf-8") as f:
        chunk: list[tuple[int, str]] = []
        for raw in f:
            if raw.strip():
                line = raw.rstrip("\n")
                chunk.append((json.loads(line)["_line"], line))
            if len(chunk) >= 1024:
                store.append([i for i, _ in chunk], [t for _, t in chunk])
                chunk = []
        store.append([i for i, _ in chunk], [t for _, t in chunk])
    store.close()
    output_path.unlink()


_Callbacks = tuple[Callable[[int], None] | None, Callable[[str], None] | None, Callable[[str], None] | None]


def _run(engine: Engine, batches: Iterator[list[tuple[int, str]]], keys: tuple[str, str], store: ShardStore,
         callbacks: _Callbacks) -> int:
    """Feed `batches` to `engine` (`drive`), appending each finished batch to `store`; return the rows written."""
    on_progress, on_bad, on_warning = callbacks
    try:
        return drive(engine, batches, keys, lambda result: store.append(result.ids, result.lines),
                     on_progress=on_progress, on_bad=on_bad, on_warning=on_warning)
    finally:
        store.close()


def _merge(store: ShardStore, output_path: Path, expected_key: str, keys: tuple[str, str]) -> VerifyStats:
    """Merge the shards into `output_path` (via a temporary file); return stats over every row."""
    stats = VerifyStats()

    def parsed() -> Iterator[list[dict[str, Any]]]:
        for shard in store.merged():
            yield [json.loads(line) for _, line in shard]

    if is_parquet(output_path):
        schema = infer_schema(parsed())

        def counted() -> Iterator[list[dict[str, Any]]]:
            for rows in parsed():
                for row in rows:
                    stats.add(row, expected_key, keys)
                yield rows

        with atomic_path(output_path) as tmp:
            write_parquet(tmp, counted(), schema)
    else:
        with atomic_open(output_path) as out:
            for shard in store.merged():
                for _, line in shard:
                    stats.add(json.loads(line), expected_key, keys)
                    out.write(line + "\n")
    return stats


def _output_stats(output_path: Path, expected_key: str, keys: tuple[str, str]) -> VerifyStats:
    """Stats of a finished output file."""
    if not is_parquet(output_path):
        return scan_output(output_path, expected_key, keys)[1]
    import pyarrow.parquet as pq

    stats = VerifyStats()
    for batch in pq.ParquetFile(output_path).iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            stats.add(row, expected_key, keys)
    return stats
