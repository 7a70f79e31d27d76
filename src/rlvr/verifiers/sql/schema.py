"""The schema of a SQLite or DuckDB database as the perturbed copies need it: tables, keys, references.

References are the declared foreign keys plus references inferred from names and data: a column
named after another table's single-column key (`publisher_id` or `publisherid` → `publisher.id`,
`Customer_ID` → `Customers.Customer_ID`) whose values, some present, all occur in that key. Many
text-to-SQL databases (Spider's, BIRD's) leave some foreign keys undeclared; following the inferred
ones keeps the copies' rows from pointing at deleted rows.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rlvr.verifiers.sql.execute import duckdb_path, sqlite_path

__all__: list[str] = []

MAX_INFERRED = 400
"""Name-matched (child column, parent key) candidates checked at most when inferring references."""


class PerturbError(Exception):
    """A perturbed copy could not be built (the message says why); the caller scores without it."""


@dataclass(frozen=True)
class Reference:
    """A reference from `child(columns)` to `parent(parent_columns)`: declared (a foreign key) or inferred."""

    child: str
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]
    declared: bool


@dataclass(frozen=True)
class Schema:
    """What the builders need to know of a database.

    Attributes:
        tables: ordinary table name → its column names (in order); virtual and internal tables left out.
        types: (table, column) lower-cased → declared type, upper-cased ('' when none).
        rowid: tables that have a rowid (all DuckDB tables; SQLite tables not declared WITHOUT ROWID).
        primary: table → primary-key columns (empty when none).
        keys: (table, column) lower-cased of every primary-key, unique, referencing or referenced column.
        references: declared and inferred references.
    """

    tables: dict[str, tuple[str, ...]]
    types: dict[tuple[str, str], str]
    rowid: frozenset[str]
    primary: dict[str, tuple[str, ...]]
    keys: frozenset[tuple[str, str]]
    references: tuple[Reference, ...]


def quoted(name: str) -> str:
    """`name` as a double-quoted SQL identifier (SQLite, DuckDB, PostgreSQL)."""
    return '"' + name.replace('"', '""') + '"'


# -- reading the schema -----------------------------------------------------------------------
def _sqlite_tables(conn: sqlite3.Connection) -> list[tuple[str, bool]]:
    """(name, has a rowid) of the ordinary tables: no virtual, shadow or internal (`sqlite_%`) table."""
    try:
        # SQLite >= 3.37: (schema, name, type, ncol, wr, strict)
        listed = conn.execute("PRAGMA main.table_list").fetchall()
        return sorted((r[1], not r[4]) for r in listed if r[2] == "table" and not r[1].lower().startswith("sqlite_"))
    except sqlite3.Error:
        rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                            "ESCAPE '\\'").fetchall()
        virtual = [n for n, sql in rows if re.match(r"\s*CREATE\s+VIRTUAL", sql or "", re.I)]
        return sorted((n, not re.search(r"WITHOUT\s+ROWID\s*;?\s*$", sql or "", re.I)) for n, sql in rows
                      if n not in virtual and not any(n.startswith(f"{v}_") for v in virtual))


def _read_sqlite(conn: sqlite3.Connection) -> tuple[Any, ...]:
    tables: dict[str, tuple[str, ...]] = {}
    types: dict[tuple[str, str], str] = {}
    primary: dict[str, tuple[str, ...]] = {}
    keys: set[tuple[str, str]] = set()
    refs: list[Reference] = []
    listed = _sqlite_tables(conn)
    for name, _ in listed:
        info = conn.execute(f"PRAGMA table_info({quoted(name)})").fetchall()  # cid, name, type, notnull, default, pk
        tables[name] = tuple(r[1] for r in info)
        types.update({(name.lower(), r[1].lower()): (r[2] or "").upper() for r in info})
        primary[name] = tuple(r[1] for r in sorted(info, key=lambda r: r[5]) if r[5])
        keys.update((name.lower(), c.lower()) for c in primary[name])
        indexes = conn.execute(f"PRAGMA index_list({quoted(name)})").fetchall()  # seq, name, unique, origin, partial
        for index in indexes:
            if index[2]:
                keys.update((name.lower(), str(r[2]).lower())
                            for r in conn.execute(f"PRAGMA index_info({quoted(index[1])})").fetchall() if r[2])
        groups: dict[int, list[tuple[Any, ...]]] = {}
        for fk in conn.execute(f"PRAGMA foreign_key_list({quoted(name)})").fetchall():  # id, seq, table, from, to, ...
            groups.setdefault(fk[0], []).append(fk)
        for fk_rows in groups.values():
            fk_rows.sort(key=lambda r: r[1])
            refs.append(Reference(name, tuple(r[3] for r in fk_rows), fk_rows[0][2],
                                  tuple(r[4] or "" for r in fk_rows), declared=True))
    return tables, types, frozenset(n for n, has in listed if has), primary, keys, refs


def _read_duckdb(conn: Any) -> tuple[Any, ...]:
    tables: dict[str, tuple[str, ...]] = {}
    types: dict[tuple[str, str], str] = {}
    primary: dict[str, tuple[str, ...]] = {}
    keys: set[tuple[str, str]] = set()
    refs: list[Reference] = []
    for name, in conn.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                              "AND schema_name = current_schema() AND NOT temporary ORDER BY table_name").fetchall():
        cols = conn.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                            "current_database() AND schema_name = current_schema() AND table_name = ? "
                            "ORDER BY column_index", [name]).fetchall()
        tables[name] = tuple(c for c, _ in cols)
        types.update({(name.lower(), c.lower()): str(t).upper() for c, t in cols})
        primary[name] = ()
    for table, kind, columns, parent, parent_columns in conn.execute(
            "SELECT table_name, constraint_type, constraint_column_names, referenced_table, referenced_column_names "
            "FROM duckdb_constraints() WHERE database_name = current_database() AND schema_name = current_schema() "
            "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')").fetchall():
        if table not in tables:
            continue
        keys.update((table.lower(), c.lower()) for c in columns)
        if kind == "PRIMARY KEY":
            primary[table] = tuple(columns)
        elif kind == "FOREIGN KEY" and parent:
            refs.append(Reference(table, tuple(columns), parent, tuple(parent_columns), declared=True))
    return tables, types, frozenset(tables), primary, keys, refs


def _resolve(refs: list[Reference], primary: dict[str, tuple[str, ...]], tables: dict[str, tuple[str, ...]]
             ) -> list[Reference]:
    """Declared references with the parent's key filled in (SQLite omits it) and the parent's name as stored."""
    by_lower = {t.lower(): t for t in tables}
    out = []
    for ref in refs:
        parent = by_lower.get(ref.parent.lower())
        if parent is None:
            continue  # a reference to a table that does not exist cannot hold
        cols = ref.parent_columns if all(ref.parent_columns) else primary.get(parent, ())
        if len(cols) == len(ref.columns):
            out.append(Reference(ref.child, ref.columns, parent, tuple(cols), declared=True))
    return out


def _stems(table: str) -> set[str]:
    low = table.lower()
    stems = {low, low.rstrip("s")}
    if low.endswith("ies"):
        stems.add(low[:-3] + "y")
    return stems


def _candidates(tables: dict[str, tuple[str, ...]], primary: dict[str, tuple[str, ...]],
                declared: list[Reference]) -> list[Reference]:
    """Name-matched (child column → single-column parent key) pairs not already declared."""
    taken = {(r.child.lower(), r.columns[0].lower()) for r in declared if len(r.columns) == 1}
    out = []
    for parent, key in primary.items():
        if len(key) != 1:
            continue
        low_key = key[0].lower()
        names = {f"{s}_{low_key}" for s in _stems(parent)} | {f"{s}{low_key}" for s in _stems(parent)}
        if low_key != "id":
            names.add(low_key)
        for child, columns in tables.items():
            for column in columns:
                if child == parent and column.lower() == low_key:
                    continue
                if column.lower() in names and (child.lower(), column.lower()) not in taken:
                    out.append(Reference(child, (column,), parent, key, declared=False))
    return out[:MAX_INFERRED]


def _holds(conn: Any, ref: Reference) -> bool:
    """Whether a candidate reference holds on the data: some values, all of them found in the parent's key."""
    c, p = quoted(ref.columns[0]), quoted(ref.parent_columns[0])
    row = conn.execute(f"SELECT EXISTS (SELECT 1 FROM {quoted(ref.child)} WHERE {c} IS NOT NULL), NOT EXISTS (SELECT 1 "
                       f"FROM {quoted(ref.child)} AS x WHERE x.{c} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
                       f"{quoted(ref.parent)} AS y WHERE y.{p} = x.{c}))").fetchone()
    return bool(row[0]) and bool(row[1])


def _schema(conn: Any, dialect: str) -> Schema:
    tables, types, rowid, primary, keys, declared = (_read_sqlite if dialect == "sqlite" else _read_duckdb)(conn)
    refs = _resolve(declared, primary, tables)
    refs += [r for r in _candidates(tables, primary, refs) if _holds(conn, r)]
    for ref in refs:
        keys |= {(ref.child.lower(), c.lower()) for c in ref.columns}
        keys |= {(ref.parent.lower(), c.lower()) for c in ref.parent_columns}
    return Schema(tables, types, rowid, primary, frozenset(keys), tuple(refs))


# -- connections and the copy cache ---------------------------------------------------------------
def database_file(db: str, dialect: str) -> Path:
    """The file of a SQLite or DuckDB `db`.

    Raises:
        PerturbError: a PostgreSQL database (a server, no file).
    """
    if dialect == "sqlite":
        return sqlite_path(db)
    if dialect == "duckdb":
        return Path(duckdb_path(db))
    raise PerturbError("PostgreSQL databases are not perturbed: a server database cannot be copied through a "
                       "read-only role")


@contextlib.contextmanager
def open_database(path: Path, dialect: str, read_only: bool) -> Iterator[Any]:
    """A plain connection to a SQLite or DuckDB file (trusted use only: no authorizer, no limits)."""
    if dialect == "sqlite":
        uri = f"file:{quote(str(path.resolve()))}{'?mode=ro' if read_only else ''}"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    else:
        import duckdb

        conn = duckdb.connect(str(path), read_only=read_only, config={"threads": 1})
    try:
        yield conn
    finally:
        conn.close()


_SCHEMAS: dict[tuple[Any, ...], Schema] = {}
_LOCK = threading.Lock()


def file_identity(path: Path) -> tuple[str, int, int]:
    """(absolute path, size in bytes, modification time in ns) of a database file.

    Raises:
        PerturbError: the file cannot be read.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        raise PerturbError(f"cannot read the database file {str(path)!r}: {exc}") from exc
    return os.path.abspath(path), st.st_size, st.st_mtime_ns


def read_schema(db: str, dialect: str) -> Schema:
    """The schema of a SQLite or DuckDB database (tables, keys, declared and inferred references), cached per file.

    Raises:
        PerturbError: PostgreSQL, or the file cannot be read.
    """
    path = database_file(db, dialect)
    key = (dialect, *file_identity(path))
    with _LOCK:
        if key in _SCHEMAS:
            return _SCHEMAS[key]
    try:
        with open_database(path, dialect, read_only=True) as conn:
            schema = _schema(conn, dialect)
    except Exception as exc:  # a database error of either driver (duckdb.Error derives from Exception)
        raise PerturbError(f"cannot read the schema: {type(exc).__name__}: {exc}") from exc
    with _LOCK:
        _SCHEMAS[key] = schema
    return schema


