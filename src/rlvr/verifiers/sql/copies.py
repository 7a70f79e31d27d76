"""Copies of a database file, each changed once by a given function, built once and kept on disk.

`build_copy` is the one way `rlvr.verifiers.sql.perturb` makes its perturbed databases: a key names
the source file (path, size, modification time), the change and `BUILD_VERSION`; the first caller
copies the file to a scratch file (SQLite's backup API; DuckDB's COPY FROM DATABASE), applies the
change on a plain read-write connection (SQLite: in-memory journal, no fsync: a scratch file need not
survive a crash, only roll back a statement), makes it read-only and publishes it by an atomic
rename, so concurrent processes never see half a copy; later callers reuse it.

Where: a private per-user folder of the temporary directory, `rlvr-sql-suite-<uid>`, created 0700 and
used only when this user owns it and nobody else may write it (a folder planted by another user
would hand the verifier its databases). It is a cache: it is trimmed to `CACHE_BYTES`, least
recently used copies first, after each build, and deleting it is safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rlvr.verifiers.sql.schema import PerturbError, Schema, file_identity, open_database, quoted, read_schema

__all__: list[str] = []

BUILD_VERSION = 3
"""Part of every copy's file name: a change of the rules below gives new copies, never a stale one."""

_BUILT: dict[tuple[Any, ...], str | PerturbError | _Late] = {}
_LOCK = threading.Lock()


Change = Callable[[Any, Schema, float], None]
"""A change applied to a scratch copy: `change(conn, schema, deadline)`."""


def _private_dir() -> Path:
    """`<tmp>/rlvr-sql-suite-<uid>`: created 0700, used only when this user owns it and nobody else may write it."""
    folder = Path(tempfile.gettempdir()) / f"rlvr-sql-suite-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise PerturbError(f"{folder} is not a directory owned by uid {os.geteuid()} and closed to others' writes; "
                           "remove it")
    return folder


@dataclass(frozen=True)
class _Late:
    """A build that ran out of time with `budget` seconds: tried again only with more than twice as many."""

    budget: float


def build_copy(path: Path, dialect: str, name: str, salt: str, deadline: float, change: Change) -> str:
    """The copy `name` (with `salt`: what makes the change) of `path` changed by `change`; built once, then reused.

    Args:
        path: the source database file.
        dialect: 'sqlite' or 'duckdb'.
        name: the copy's name in messages ('rows-0a', 'values').
        salt: everything the change depends on besides the source (seed, columns).
        deadline: `time.monotonic()` value past which the build stops.
        change: called as `change(conn, schema, deadline)` on the scratch copy.

    Returns:
        The copy's path.

    Raises:
        PerturbError: the build failed or ran past `deadline`. A failed build is not tried again in
            this process, except one that ran out of time, tried again when more than twice its time is left.
    """
    key = (dialect, *file_identity(path), name, salt, BUILD_VERSION)
    with _LOCK:
        done = _BUILT.get(key)
    if isinstance(done, str) and os.path.isfile(done):
        return done
    if isinstance(done, PerturbError):
        raise PerturbError(str(done))
    left = deadline - time.monotonic()
    if isinstance(done, _Late) and left <= 2 * done.budget:
        raise PerturbError(f"building the {name} copy ran out of time before ({done.budget:.1f} s); "
                           f"{left:.1f} s left now")
    folder = _private_dir()
    target = folder / f"{hashlib.sha256(repr(key).encode()).hexdigest()[:24]}.{dialect}"
    outcome: str | PerturbError | _Late = str(target)
    if target.is_file():
        with contextlib.suppress(OSError):
            os.utime(target)  # recently used: the last to be evicted
    else:
        try:
            _make(path, target, dialect, deadline, change)
            _evict(folder, keep=target)
        except PerturbError as exc:
            late = time.monotonic() > deadline
            outcome = _Late(left) if late else exc
            with _LOCK:
                _BUILT[key] = outcome
            raise PerturbError(f"building the {name} copy ran past the time left for this item" if late else
                               str(exc)) from exc
    with _LOCK:
        _BUILT[key] = outcome
    return str(target)


def _make(path: Path, target: Path, dialect: str, deadline: float, change: Change) -> None:
    """Copy `path` to a scratch file, apply `change`, and publish it as `target` (read-only) by an atomic rename."""
    schema = read_schema(str(path), dialect)
    scratch = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        _copy(path, scratch, dialect)
        with open_database(scratch, dialect, read_only=False) as conn:
            if dialect == "sqlite":  # a scratch file: no need to survive a crash, only to roll back a statement
                for pragma in ("journal_mode = MEMORY", "synchronous = OFF", "temp_store = MEMORY",
                               "cache_size = -65536"):
                    conn.execute(f"PRAGMA {pragma}")
            change(conn, schema, deadline)
        scratch.chmod(0o400)
        os.replace(scratch, target)
    except PerturbError:
        raise
    except Exception as exc:  # a database error of either driver: the copy is unusable
        raise PerturbError(f"building the {target.stem} copy failed: {type(exc).__name__}: {str(exc)[:200]}") \
            from exc
    finally:
        for leftover in (scratch, Path(f"{scratch}.wal")):
            with contextlib.suppress(OSError):
                leftover.unlink()


CACHE_BYTES = 2 * 1024**3
"""The copies folder is trimmed to this many bytes after each build, least recently used copies first."""
_SCRATCH_AGE_S = 3600.0
"""A scratch file older than this (seconds) is left over from a killed build and removed."""


def _evict(folder: Path, keep: Path) -> None:
    """Trim `folder` to `CACHE_BYTES` (least recently used first, never `keep`); drop stale scratch files."""
    now = time.time()
    copies = []
    for entry in folder.iterdir():
        try:
            info = entry.stat()
        except OSError:
            continue
        if entry.suffix in (".tmp", ".wal") and now - info.st_mtime > _SCRATCH_AGE_S:
            with contextlib.suppress(OSError):
                entry.unlink()
        elif entry.suffix in (".sqlite", ".duckdb") and entry != keep:
            copies.append((info.st_mtime, info.st_size, entry))
    total = sum(size for _, size, _ in copies) + (keep.stat().st_size if keep.is_file() else 0)
    for _, size, entry in sorted(copies):
        if total <= CACHE_BYTES:
            break
        with contextlib.suppress(OSError):
            entry.unlink()  # a process reading it keeps its open file; the next build makes it again
            total -= size


def _copy(source: Path, target: Path, dialect: str) -> None:
    """A plain copy of the database `source` at `target` (SQLite: backup API, rollback journal; DuckDB: COPY)."""
    if dialect == "sqlite":
        src = sqlite3.connect(f"file:{quote(str(source.resolve()))}?mode=ro", uri=True)
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode = DELETE")
        finally:
            dst.close()
            src.close()
        return
    import duckdb

    conn = duckdb.connect(config={"threads": 1})
    try:
        paths = [str(p).replace("'", "''") for p in (source.resolve(), target)]
        conn.execute(f"ATTACH '{paths[0]}' AS rlvr_src (READ_ONLY)")
        conn.execute(f"ATTACH '{paths[1]}' AS rlvr_dst")
        conn.execute("COPY FROM DATABASE rlvr_src TO rlvr_dst")
    finally:
        conn.close()


class Deadline:
    """A build's deadline: `check()` raises `PerturbError` once it is past; SQLite also stops inside statements."""

    def __init__(self, conn: Any, deadline: float) -> None:
        self.deadline = deadline
        if isinstance(conn, sqlite3.Connection):
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)

    def check(self) -> None:
        """Raise `PerturbError` when the deadline is past."""
        if time.monotonic() > self.deadline:
            raise PerturbError("building the copy ran past the time left for this item")


def drop_triggers(conn: Any) -> None:
    """Drop every trigger of a SQLite copy (no query reads them; deleting or updating would fire them)."""
    if isinstance(conn, sqlite3.Connection):
        for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {quoted(trigger)}")


