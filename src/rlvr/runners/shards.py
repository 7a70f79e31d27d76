"""Order-independent output shards keyed by row id, and their merge into one output in input order.

Finished rows are appended, in whatever order they complete, to shard files in
`OUTPUT.shards/`, one file per range of `rows_per_shard` row ids (`rows-000000.jsonl` holds ids
1..rows_per_shard). Each shard line is `ROW_ID<TAB>ROW_JSON`. Why this survives crashes:

- a row is done exactly when its line is complete (ends in a newline): a `kill -9` can only tear
  the last line of a file, and `scan` cuts torn lines off before anything else reads the shards
  (`rlvr.runners.resumable.complete_lines`, as for every resumable output);
- a row written twice (a batch that finished while the driver was being killed, then verified
  again after the restart) is kept once: all lines of one row id live in the same shard, and
  `merged` keeps the first complete one;
- the merge holds one shard (at most `rows_per_shard` rows) in memory at a time.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rlvr.core.errors import DataError
from rlvr.runners.resumable import FSYNC_EVERY_S, complete_lines

__all__: list[str] = []

_MAX_OPEN = 16


def shards_dir(output_path: Path) -> Path:
    """Where the shards of `output_path` live while a run is unfinished: `OUTPUT.shards/` beside it."""
    return output_path.with_name(output_path.name + ".shards")


class RowSet:
    """A set of positive row ids as a bitmap: 1 bit per id up to the largest (1M rows: 125 KiB)."""

    def __init__(self) -> None:
        self._bits = bytearray()
        self._count = 0
        self.max = 0

    def add(self, row_id: int) -> None:
        """Add `row_id` (>= 1)."""
        byte, bit = divmod(row_id, 8)
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(byte + 1 - len(self._bits), len(self._bits))))
        if not self._bits[byte] >> bit & 1:
            self._bits[byte] |= 1 << bit
            self._count += 1
            self.max = max(self.max, row_id)

    def __contains__(self, row_id: object) -> bool:
        if not isinstance(row_id, int):
            return False
        byte, bit = divmod(row_id, 8)
        return byte < len(self._bits) and bool(self._bits[byte] >> bit & 1)

    def __len__(self) -> int:
        return self._count


class ShardStore:
    """Append-only shard files of output rows, keyed by row id.

    Args:
        directory: the shard folder (created on first write).
        rows_per_shard: row ids per shard file; bounds the memory of `merged`.
    """

    def __init__(self, directory: Path, rows_per_shard: int = 2048) -> None:
        self.directory = directory
        self.rows_per_shard = rows_per_shard
        self._open: dict[int, IO[str]] = {}
        self._synced = time.monotonic()

    def _path(self, shard: int) -> Path:
        return self.directory / f"rows-{shard:06d}.jsonl"

    def _shards(self) -> list[Path]:
        return sorted(self.directory.glob("rows-*.jsonl")) if self.directory.is_dir() else []

    def exists(self) -> bool:
        """True when the shard folder exists (an unfinished run)."""
        return self.directory.is_dir()

    def scan(self) -> RowSet:
        """Cut torn last lines off every shard; return the row ids already done."""
        done = RowSet()
        for path in self._shards():
            for _, raw in complete_lines(path):
                try:
                    done.add(int(raw[: raw.index(b"\t")]))
                except ValueError as exc:
                    raise DataError(f"{path}: not a shard line ({raw[:80]!r}); remove {self.directory} "
                                    "or pass --overwrite to start over") from exc
        return done

    def append(self, ids: list[int], lines: list[str]) -> None:
        """Append rows (`lines[i]` is row `ids[i]`, JSON without newline) to their shards, then flush.

        The open shards are fsynced every `FSYNC_EVERY_S` seconds (as every resumable output).
        """
        by_shard: dict[int, list[str]] = {}
        for row_id, line in zip(ids, lines, strict=True):
            by_shard.setdefault((row_id - 1) // self.rows_per_shard, []).append(f"{row_id}\t{line}\n")
        for shard, chunk in by_shard.items():
            f = self._file(shard)
            f.write("".join(chunk))
            f.flush()
        if time.monotonic() - self._synced > FSYNC_EVERY_S:
            self.sync()

    def _file(self, shard: int) -> IO[str]:
        f = self._open.pop(shard, None)
        if f is None:
            if len(self._open) >= _MAX_OPEN:  # close the least recently used
                oldest = next(iter(self._open))
                self._close_one(oldest)
            self.directory.mkdir(parents=True, exist_ok=True)
            f = self._path(shard).open("a", encoding="utf-8")
        self._open[shard] = f  # most recently used last
        return f

    def _close_one(self, shard: int) -> None:
        f = self._open.pop(shard)
        f.flush()
        os.fsync(f.fileno())
        f.close()

    def sync(self) -> None:
        """Flush to disk (fsync) every open shard (against power loss; a killed process loses nothing flushed)."""
        for f in self._open.values():
            os.fsync(f.fileno())
        self._synced = time.monotonic()

    def close(self) -> None:
        """Flush, fsync and close every open shard."""
        for shard in list(self._open):
            self._close_one(shard)

    def merged(self) -> Iterator[list[tuple[int, str]]]:
        """Yield each shard's rows as `(row_id, JSON)`, sorted by id, one row per id, shard after shard."""
        for path in self._shards():
            rows: dict[int, str] = {}
            with path.open(encoding="utf-8") as f:
                for raw in f:
                    head, _, line = raw.partition("\t")
                    rows.setdefault(int(head), line.rstrip("\n"))
            yield sorted(rows.items())

    def remove(self) -> None:
        """Delete the shard folder (after a successful merge)."""
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)
