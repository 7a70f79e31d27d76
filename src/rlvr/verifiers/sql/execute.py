"""Run one query on a read-only connection of its own, with a time limit and result caps.

Every call opens a fresh connection (gold and prediction never share one, so nothing a query
does can leak into the other) and closes it afterwards.

- SQLite (stdlib `sqlite3`): opened as `file:PATH?mode=ro` (URI), `PRAGMA query_only`, extension
  loading disabled, `SQLITE_LIMIT_ATTACHED` 0 and `SQLITE_LIMIT_LENGTH` = `max_bytes` (Python >= 3.11;
  on 3.10 the byte cap applies while fetching, under the worker's memory limit), and an
  authorizer (`set_authorizer`) that allows only reads, functions (not `load_extension`),
  recursive CTEs and the introspection PRAGMAs (`table_info`, `index_list`, ...); every write,
  DDL, transaction, ATTACH/DETACH and state-changing PRAGMA is denied. The time limit is a progress handler that
  interrupts the virtual machine (`set_progress_handler`).
- PostgreSQL (`psycopg`, the `sql` extra): a read-only transaction (`default_transaction_read_only`,
  `conn.read_only`), `statement_timeout` for each round trip (set to the time left), rows
  streamed from a server-side cursor so a huge result never reaches the client at once. Use a
  role that can only SELECT: the database then refuses writes twice.
- DuckDB (`duckdb`, the `sql` extra): `read_only=True`, external access, extension autoloading
  and configuration changes disabled; the time limit calls `interrupt()` from a timer.

Every database checks its limit between steps of its own (SQLite between virtual-machine
instructions), so one call into a single slow function (`instr`, `replace`, `printf` on
megabyte strings) runs past it. Hence two rules: a query whose rows arrive after the limit is a
`timeout`, never `ok`; and `execute_bounded` runs `execute` in a killable worker process, so it
returns at the limit (plus `BOUND_GRACE_S`) whatever the database is doing. The `execute_sql` tool
and inline verification use `execute_bounded`; the verifier's worker pool (`scoring="process"`)
has its own hard per-item timeout and calls `execute` directly.

Outcomes are data (`Execution`), never exceptions, except a missing driver (`MissingExtraError`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from rlvr.core.errors import MissingExtraError

__all__ = ["Limits", "execute", "execute_bounded"]

_BATCH = 512
_PROGRESS_OPS = 1000
"""SQLite virtual-machine instructions between two checks of the deadline."""

_SQLITE_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                   getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"}
_SQLITE_READ_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"}


@dataclass(frozen=True)
class Limits:
    """Limits of one query.

    Attributes:
        timeout_s: wall-clock limit of execution plus fetching, seconds (a server connection is not counted).
        max_rows: more rows than this → `too_large`.
        max_bytes: more than this many bytes of values (strings/blobs by length, other values 8 each)
            → `too_large`.
    """

    timeout_s: float = 5.0
    max_rows: int = 100_000
    max_bytes: int = 64 * 1024 * 1024


@dataclass
class Execution:
    """The outcome of one query.

    Attributes:
        kind: 'ok'; 'error' (the database refused or failed: `message` holds its error); 'timeout';
            'too_large' (over `max_rows`/`max_bytes`); 'unavailable' (the database cannot be opened).
        columns: column names, in order.
        rows: the rows, as tuples (only for 'ok').
        message: the database's message for non-'ok' outcomes.
        elapsed_s: seconds spent, connection included.
    """

    kind: Literal["ok", "error", "timeout", "too_large", "unavailable"]
    columns: tuple[str, ...] = ()
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    message: str = ""
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the query ran and its rows are here."""
        return self.kind == "ok"


class _TooLarge(Exception):
    pass


class _Deadline(Exception):
    pass


def _strip_scheme(db: str, scheme: str) -> str:
    """The path of `scheme:///PATH` (SQLAlchemy form: `sqlite:///rel.db`, `sqlite:////abs.db`) or `scheme:PATH`."""
    for prefix in (f"{scheme}:///", f"{scheme}:"):
        if db.lower().startswith(prefix):
            return db[len(prefix):]
    return db


def sqlite_path(db: str) -> Path:
    """The file path of a SQLite `db` given as a path or a `sqlite:///PATH` URL."""
    return Path(_strip_scheme(db, "sqlite"))


def _value_size(value: Any) -> int:
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return len(value)
    return 8


def _collect(fetch: Callable[[int], list[Any]], limits: Limits, deadline: float,
             before_fetch: Callable[[], None] | None = None) -> list[tuple[Any, ...]]:
    """Fetch rows in batches until exhausted, enforcing the row/byte caps and the deadline."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise _Deadline
        if before_fetch is not None:
            before_fetch()
        batch = fetch(min(_BATCH, limits.max_rows + 1 - len(rows)))
        if not batch:
            return rows
        for row in batch:
            size += sum(_value_size(v) for v in row)
        rows.extend(tuple(r) for r in batch)
        if len(rows) > limits.max_rows:
            raise _TooLarge(f"more than {limits.max_rows} rows (max_rows)")
        if size > limits.max_bytes:
            raise _TooLarge(f"more than {limits.max_bytes} bytes of values (max_bytes)")


# -- SQLite ---------------------------------------------------------------------------------
def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None) -> int:
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    if action in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _SQLITE_READ_PRAGMAS:
        return sqlite3.SQLITE_OK  # introspection only: their argument names a table or index, never a value
    return sqlite3.SQLITE_DENY


@contextlib.contextmanager
def _sqlite_connect(path: Path, limits: Limits) -> Iterator[sqlite3.Connection]:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=limits.timeout_s)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # load the schema before the authorizer
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(False)
        if hasattr(conn, "setlimit"):  # Python >= 3.11
            conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(limits.max_bytes, 2**31 - 1))
        conn.set_authorizer(_sqlite_authorizer)
        conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
        yield conn
    finally:
        conn.close()


def _run_sqlite(db: str, sql: str, limits: Limits, deadline: float) -> Execution:
    path = sqlite_path(db)
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        return Execution("unavailable", message=f"SQLite database file {str(path)!r} {what}")
    try:
        with _sqlite_connect(path, limits) as conn:
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_OPS)
            try:
                cursor = conn.execute(sql)
                columns = tuple(d[0] for d in cursor.description or ())
                rows = _collect(cursor.fetchmany, limits, deadline)
            except sqlite3.OperationalError as exc:
                if "interrupted" in str(exc) and time.monotonic() > deadline:
                    return Execution("timeout", message=f"interrupted after {limits.timeout_s:g} s")
                raise
            return Execution("ok", columns, rows)
    except _TooLarge as exc:
        return Execution("too_large", message=str(exc))
    except _Deadline:
        return Execution("timeout", message=f"interrupted after {limits.timeout_s:g} s")
    except (sqlite3.Error, sqlite3.Warning, OverflowError, MemoryError, ValueError) as exc:
        return Execution("error", message=f"{type(exc).__name__}: {exc}")


# -- PostgreSQL -----------------------------------------------------------------------------
_PG_RETRIES = 1
"""Fresh connections tried after the server ended one mid-query (another session terminated it)."""


def _run_postgres(db: str, sql: str, limits: Limits, deadline: float) -> Execution:
    """`_run_postgres_once`, retried on a fresh connection when the server ended the first one.

    A connection the server killed (`AdminShutdown`, a lost connection) says nothing about the
    query: after `_PG_RETRIES` retries it is 'unavailable' (an `error` verdict, reward None), never
    a failed query.
    """
    outcome = _run_postgres_once(db, sql, limits, deadline)
    for _ in range(_PG_RETRIES):
        if outcome.kind != "unavailable" or "the server ended" not in outcome.message:
            break
        outcome = _run_postgres_once(db, sql, limits, deadline)
    return outcome


def _ended_by_server(exc: Any, conn: Any) -> bool:
    """Whether a psycopg error is the server ending this session (terminated, shut down), not the query failing."""
    import psycopg

    ended = (psycopg.errors.AdminShutdown, psycopg.errors.CrashShutdown, psycopg.errors.CannotConnectNow)
    return isinstance(exc, ended) or (isinstance(exc, psycopg.OperationalError) and bool(conn.broken))


def _run_postgres_once(db: str, sql: str, limits: Limits, _deadline: float) -> Execution:
    try:
        import psycopg
    except ImportError as exc:
        raise MissingExtraError("psycopg", "sql") from exc
    ms = max(1, int(limits.timeout_s * 1000))
    options = f"-c statement_timeout={ms} -c default_transaction_read_only=on -c lock_timeout={ms}"
    try:
        conn = psycopg.connect(db, options=options, connect_timeout=max(1, int(limits.timeout_s)), autocommit=False)
    except psycopg.Error as exc:
        return Execution("unavailable", message=f"cannot connect to PostgreSQL: {exc}")
    deadline = time.monotonic() + limits.timeout_s  # the query's own time starts once connected
    cursor = None
    try:
        conn.read_only = True
        cursor = conn.cursor(name="rlvr_query")

        def remaining() -> None:
            left = max(1, int((deadline - time.monotonic()) * 1000))
            with conn.cursor() as setter:
                setter.execute(f"SET LOCAL statement_timeout = {left}")

        remaining()
        cursor.execute(sql)
        rows = _collect(cursor.fetchmany, limits, deadline, before_fetch=remaining)
        columns = tuple(d.name for d in cursor.description or ())
        return Execution("ok", columns, rows)
    except psycopg.errors.QueryCanceled as exc:
        if "statement timeout" not in str(exc):  # cancelled by another session, not by our limit
            return Execution("unavailable", message=f"the server ended the query or its connection ({exc})")
        return Execution("timeout", message=f"statement_timeout after {limits.timeout_s:g} s")
    except _TooLarge as exc:
        return Execution("too_large", message=str(exc))
    except _Deadline:
        return Execution("timeout", message=f"stopped after {limits.timeout_s:g} s")
    except (psycopg.Error, MemoryError, ValueError) as exc:
        if isinstance(exc, psycopg.Error) and _ended_by_server(exc, conn):
            return Execution("unavailable", message=f"the server ended the query or its connection "
                                                    f"({type(exc).__name__}: {str(exc).strip()[:200]})")
        return Execution("error", message=f"{type(exc).__name__}: {str(exc).strip()}")
    finally:
        with contextlib.suppress(Exception):
            conn.rollback()  # ends the read-only transaction (and the server-side cursor with it)
        if cursor is not None:
            with contextlib.suppress(Exception):
                cursor.close()
        conn.close()


# -- DuckDB ---------------------------------------------------------------------------------
def duckdb_path(db: str) -> str:
    """The file path of a DuckDB `db` given as `duckdb:///PATH`, `duckdb:PATH` or a plain path."""
    return _strip_scheme(db, "duckdb")


def _run_duckdb(db: str, sql: str, limits: Limits, _deadline: float) -> Execution:
    try:
        import duckdb
    except ImportError as exc:
        raise MissingExtraError("duckdb", "sql") from exc
    path = duckdb_path(db)
    if not os.path.isfile(path):
        return Execution("unavailable", message=f"DuckDB database file {path!r} does not exist")
    config = {"enable_external_access": False, "autoinstall_known_extensions": False,
              "autoload_known_extensions": False, "allow_community_extensions": False, "threads": 1}
    try:
        conn = duckdb.connect(path, read_only=True, config=config)
        conn.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        return Execution("unavailable", message=f"cannot open DuckDB database: {exc}")
    deadline = time.monotonic() + limits.timeout_s  # the query's own time starts once connected
    timer = threading.Timer(limits.timeout_s, conn.interrupt)
    timer.start()
    try:
        cursor = conn.execute(sql)
        columns = tuple(d[0] for d in cursor.description or ())
        rows = _collect(cursor.fetchmany, limits, deadline)
        return Execution("ok", columns, rows)
    except duckdb.InterruptException:
        return Execution("timeout", message=f"interrupted after {limits.timeout_s:g} s")
    except _TooLarge as exc:
        return Execution("too_large", message=str(exc))
    except _Deadline:
        return Execution("timeout", message=f"interrupted after {limits.timeout_s:g} s")
    except (duckdb.Error, MemoryError, ValueError) as exc:
        return Execution("error", message=f"{type(exc).__name__}: {exc}")
    finally:
        timer.cancel()
        conn.close()


_DIALECTS: dict[str, Callable[[str, str, Limits, float], Execution]] = {
    "sqlite": _run_sqlite, "postgres": _run_postgres, "duckdb": _run_duckdb,
}


def execute(db: str, sql: str, dialect: str = "sqlite", limits: Limits | None = None) -> Execution:
    """Run one query on a fresh read-only connection to `db`.

    Args:
        db: SQLite path or `sqlite:///PATH`, PostgreSQL URL, or DuckDB path / `duckdb:///PATH`.
        sql: one query (extra statements make the database fail: SQLite and PostgreSQL refuse them).
        dialect: 'sqlite', 'postgres' or 'duckdb'.
        limits: time limit and result caps (default `Limits()`).

    Returns:
        An `Execution` (rows, or the reason there are none).

    Raises:
        MissingExtraError: the driver of a PostgreSQL or DuckDB database is not installed.
        ValueError: unknown `dialect`.
    """
    limits = limits or Limits()
    run = _DIALECTS.get(dialect)
    if run is None:
        raise ValueError(f"unknown SQL dialect {dialect!r}; use one of {', '.join(_DIALECTS)}")
    start = time.monotonic()
    outcome = run(db, sql, limits, start + limits.timeout_s)
    outcome.elapsed_s = time.monotonic() - start
    if outcome.kind in ("ok", "too_large") and outcome.elapsed_s > limits.timeout_s + _LATE_S:
        # one database call (a single slow function) ran past the limit: its rows do not count
        late = f"answered after {outcome.elapsed_s:.1f} s, past the {limits.timeout_s:g} s limit"
        return Execution("timeout", message=late, elapsed_s=outcome.elapsed_s)
    return outcome


_LATE_S = 0.05
"""Slack before rows that arrive after the limit count as a timeout, seconds (fetching is checked in batches)."""

BOUND_GRACE_S = 1.0
"""What `execute_bounded` adds to the query's limit before it kills the worker, seconds (connection, pickling)."""

_BOUNDED: Any = None
_BOUNDED_LOCK = threading.Lock()


def _bounded_pool() -> Any:
    global _BOUNDED
    from rlvr.verifiers.pool import WorkerPool

    with _BOUNDED_LOCK:
        if _BOUNDED is None or _BOUNDED.closed:
            _BOUNDED = WorkerPool(execute, workers=4, timeout_s=Limits().timeout_s + BOUND_GRACE_S,
                                  memory_limit_mb=4096)
        return _BOUNDED


def execute_bounded(db: str, sql: str, dialect: str = "sqlite", limits: Limits | None = None) -> Execution:
    """`execute` in a warm worker process that is killed at the limit: returns in `timeout_s + BOUND_GRACE_S`.

    Workers (up to 4, shared by the process, started on first use) run one query at a time; a
    worker killed at the limit is replaced.

    Returns:
        The worker's `Execution`; 'timeout' when it was killed; 'error' when the worker crashed.

    Raises:
        MissingExtraError: the driver of a PostgreSQL or DuckDB database is not installed.
        ValueError: unknown `dialect`.
    """
    limits = limits or Limits()
    if dialect not in _DIALECTS:
        raise ValueError(f"unknown SQL dialect {dialect!r}; use one of {', '.join(_DIALECTS)}")
    driver = {"postgres": ("psycopg", "psycopg"), "duckdb": ("duckdb", "duckdb")}.get(dialect)
    if driver is not None:
        import importlib.util

        if importlib.util.find_spec(driver[0]) is None:
            raise MissingExtraError(driver[1], "sql")
    # a killed worker's replacement starts in the background: the answer does not wait for it
    outcome = _bounded_pool().call(db, sql, dialect, limits, timeout_s=limits.timeout_s + BOUND_GRACE_S,
                                   wait_for_replacement=False)
    if outcome.kind == "ok":
        result: Execution = outcome.value
        return result
    if outcome.kind == "timeout":
        return Execution("timeout", message=f"stopped after {limits.timeout_s:g} s (the query's process was killed)",
                         elapsed_s=outcome.elapsed_s)
    return Execution("error", message=f"the query's process failed: {str(outcome.value).strip()[-300:]}",
                     elapsed_s=outcome.elapsed_s)
