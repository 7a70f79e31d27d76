"""Resumable output: the one primitive behind `rlvr verify`, `rlvr eval`, `rlvr synth` and the sharded path.

An output is an append-only JSONL file (the sharded path: a folder of them, `rlvr.runners.shards`)
plus its run record, `OUTPUT.meta.json`. What makes a run resumable, and where it is done:

- **run record** (`RunRecord`): the configuration the rows depend on, written atomically at the
  start; a rerun whose configuration differs is refused with a `ConfigError` that names every
  changed field and its old and new value (`--overwrite` starts over), so rows of two
  configurations never mix in one file. State keys (`complete`, `rows`) are not configuration.
- **torn tail** (`complete_lines`): a `kill -9` can only tear the last line of an append-only file
  (no trailing newline); it is cut off once every complete line has been read, so a file that
  turns out not to be ours is left untouched.
- **resume by key** (`ResumableOutput.resume`): every complete row's key goes into the done set;
  rows to run again (a broken episode) are dropped and the file is rewritten atomically without them.
- **appends** (`AppendWriter`): each write is flushed at once (a killed process loses nothing
  written), the file is fsynced every `FSYNC_EVERY_S` seconds and at the end (against power loss).
- **atomic whole-file writes**: `rlvr.core.files`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.files import atomic_path, atomic_write

__all__: list[str] = []

FSYNC_EVERY_S = 5.0
"""Seconds between fsyncs of an output being appended to."""

STATE_KEYS = ("complete", "rows")
"""Run-record keys that describe the output's state, not its configuration (not compared on resume)."""

K = TypeVar("K")


def meta_path(output_path: Path) -> Path:
    """Where the run record of `output_path` lives: `OUTPUT.meta.json` beside it."""
    return output_path.with_name(output_path.name + ".meta.json")


def complete_lines(path: Path, *, repair: bool = True) -> Iterator[tuple[int, bytes]]:
    """Yield `(line number, raw line)` for every line of `path` that ends in a newline.

    With `repair` a torn last line (no newline) is not yielded, and is cut off the file once the
    caller has read every line (not when it stops early or raises: a file that fails validation is
    left as it was). Without `repair` the torn line is yielded too (for readers that must see it).
    Blank lines are yielded.

    Raises:
        FileNotFoundError: `path` does not exist.
    """
    good_end = 0
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n") and repair:
                break
            good_end += len(raw)
            yield lineno, raw
    if repair and good_end < path.stat().st_size:
        with path.open("r+b") as f:
            f.truncate(good_end)


class RunRecord:
    """The configuration an output's rows depend on, recorded beside it (`meta_path`).

    Args:
        output: the output file.
        config: the configuration (JSON-serialisable); nested dicts are compared field by field.
        labels: how a nested dict's fields are named in messages, e.g. `{"verifier_config":
            "verifier option"}` (default `KEY.FIELD`).
    """

    def __init__(self, output: Path, config: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> None:
        self.output = output
        self.path = meta_path(output)
        self.config = dict(config)
        self.labels = dict(labels or {})

    def read(self) -> dict[str, Any] | None:
        """The recorded object, or None when there is none (an output written before records existed).

        Raises:
            DataError: the record is not readable JSON (the message says to pass --overwrite).
        """
        if not self.path.is_file():
            return None
        try:
            old = json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DataError(f"{self.path}: not a readable run record ({exc}); pass --overwrite to start over") from exc
        return old if isinstance(old, dict) else {}

    def changes(self, old: Mapping[str, Any]) -> list[str]:
        """Human-readable differences between a recorded configuration and this one (`FIELD: OLD → NEW`).

        In this configuration's key order, then keys only the record has; state keys are skipped.
        """
        out: list[str] = []
        keys = [*self.config, *(key for key in old if key not in self.config)]
        for key in (key for key in keys if key not in STATE_KEYS):
            before, after = old.get(key), self.config.get(key)
            if isinstance(before, dict) and isinstance(after, dict):
                label = self.labels.get(key)
                for name in sorted(set(before) | set(after)):
                    if before.get(name) != after.get(name):
                        where = f"{label} {name}" if label else f"{key}.{name}"
                        out.append(f"{where}: {before.get(name)!r} → {after.get(name)!r}")
            elif before != after:
                out.append(f"{key}: {before!r} → {after!r}")
        return out

    def check(self) -> None:
        """Refuse to resume when the recorded configuration differs from this one (no record: resume).

        Raises:
            ConfigError: the configurations differ; the message names each changed field.
            DataError: the record is not readable.
        """
        old = self.read()
        changes = self.changes(old) if old is not None else []
        if changes:
            raise ConfigError(
                f"{self.output} was written with another configuration (changed: {'; '.join(changes)}); resuming "
                "would mix its rows with this run's. Rerun with the same options to resume, pass --overwrite to "
                "start over, or write to another output"
            )

    def write(self, **state: Any) -> None:
        """Record the configuration (plus `state`, e.g. `complete=True`), atomically."""
        atomic_write(self.path, json.dumps({**self.config, **state}, indent=2, sort_keys=True) + "\n")

    def remove(self) -> None:
        """Delete the record."""
        self.path.unlink(missing_ok=True)


class AppendWriter:
    """Appends to an output: every `write` is flushed, the file fsynced every `FSYNC_EVERY_S` s and on close."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._synced = time.monotonic()

    def write(self, text: str) -> None:
        """Append `text` (whole lines, each ending in a newline) and flush it."""
        self._file.write(text)
        self._file.flush()
        if time.monotonic() - self._synced > FSYNC_EVERY_S:
            self.sync()

    def sync(self) -> None:
        """Fsync the file now."""
        os.fsync(self._file.fileno())
        self._synced = time.monotonic()

    def close(self) -> None:
        """Flush, fsync and close."""
        if not self._file.closed:
            self._file.flush()
            self.sync()
            self._file.close()

    def __enter__(self) -> AppendWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ResumableOutput(Generic[K]):
    """One resumable JSONL output: its run record, the keys of the rows already in it, appends.

    Args:
        path: the output file.
        config: its run configuration (see `RunRecord`).
        labels: names of nested configuration fields in messages (see `RunRecord`).

    A run goes: `prepare(overwrite)`, `resume(read)` (the done keys), `check_and_record()`, then
    `append()` the new rows.
    """

    def __init__(self, path: Path, config: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> None:
        self.path = path
        self.record = RunRecord(path, config, labels=labels)
        self.found = 0

    def prepare(self, overwrite: bool) -> None:
        """With `overwrite`, delete the output and its record; create the output's folder."""
        if overwrite:
            self.path.unlink(missing_ok=True)
            self.record.remove()
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def resume(self, read: Callable[[int, bytes], K | None], *, duplicates: str = "error") -> set[K]:
        """The keys of the rows already written (torn last line cut off, see `complete_lines`).

        Args:
            read: `(line number, raw line) -> key` of one non-blank row, or None for a row to run
                again (it is dropped: the file is rewritten without it, atomically); raises
                `DataError` for a row that is not the output's.
            duplicates: a key seen twice: 'error' raises `DataError`, 'drop' keeps the first row.

        Raises:
            DataError: from `read`, or a duplicate key with `duplicates='error'`.
        """
        done: set[K] = set()
        dropped: set[int] = set()
        self.found = 0
        if not self.path.exists():
            return done
        for lineno, raw in complete_lines(self.path):
            if not raw.strip():
                continue
            self.found += 1
            key = read(lineno, raw)
            if key is not None and key in done and duplicates == "error":
                raise DataError(f"{self.path}:{lineno}: duplicate row {key!r}; pass --overwrite to start over")
            if key is None or key in done:
                dropped.add(lineno)
            else:
                done.add(key)
        if dropped:
            self.rewrite(raw for lineno, raw in complete_lines(self.path) if lineno not in dropped)
        return done

    def rewrite(self, lines: Iterable[bytes]) -> None:
        """Replace the output with `lines` (raw, each ending in a newline), atomically."""
        with atomic_path(self.path) as tmp, tmp.open("wb") as f:
            f.writelines(lines)

    def check_and_record(self) -> None:
        """Refuse another configuration when rows were found (`RunRecord.check`), then record this one."""
        if self.found:
            self.record.check()
        self.record.write()

    def append(self) -> AppendWriter:
        """An `AppendWriter` on the output."""
        return AppendWriter(self.path)
