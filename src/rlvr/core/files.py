"""Atomic file writes: a file is replaced whole or not at all, whatever kills the writer.

Every whole-file write in rlvr (run records, merged outputs, reports, manifests, derived JSONL)
goes through here. The data is written to a temporary file beside the target
(`NAME.<pid>.tmp`, same folder, so the rename stays on one file system), flushed and fsynced,
then renamed over the target with `os.replace`, which POSIX makes atomic: a reader, or a run
restarted after `kill -9`, sees the old file or the new one, never a part of it. If the write
raises, the temporary file is removed and the target is left as it was; a process killed
mid-write can leave only its `*.tmp` file behind, never a partial target.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_open", "atomic_path", "atomic_write"]


def _temporary(target: Path) -> Path:
    return target.with_name(f"{target.name}.{os.getpid()}.tmp")


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path for the caller to write (any writer: sqlite, pyarrow); rename it over `target`.

    The caller must have closed the file when the block ends; it is then fsynced and renamed.

    Raises:
        FileNotFoundError: the block wrote nothing at the temporary path.
        OSError: the folder of `target` does not exist or is not writable.
    """
    target = Path(target)
    tmp = _temporary(target)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_open(target: Path, encoding: str = "utf-8", newline: str | None = None) -> Iterator[IO[str]]:
    r"""Open a temporary text file for writing; it replaces `target` when the block ends without error.

    `encoding` and `newline` are `open`'s (`newline=""` for the `csv` module).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "rows.jsonl"
        >>> with atomic_open(path) as f:
        ...     _ = f.write('{"a": 1}\n')
        >>> path.read_text()
        '{"a": 1}\n'
    """
    with atomic_path(target) as tmp, tmp.open("w", encoding=encoding, newline=newline) as f:
        yield f


def atomic_write(target: Path, data: str | bytes, encoding: str = "utf-8") -> Path:
    """Replace `target` with `data` (text in `encoding`, or bytes) atomically; return `target`."""
    target = Path(target)
    with atomic_path(target) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding=encoding)
    return target
