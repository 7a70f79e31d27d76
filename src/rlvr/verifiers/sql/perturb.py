"""Perturbed copies of a database: the same schema with other data, to test a query beyond one database.

Execution accuracy on one database accepts any query that returns the gold's rows there, including one
that returns them as constants (`SELECT 5 FROM t LIMIT 1` for `SELECT count(*) FROM t`), which a model
with a query tool can look up first. Test-suite accuracy (Zhong, Yu and Klein 2020, "Semantic
Evaluation for Text-to-SQL with Distilled Test Suites", EMNLP) compares the two queries on several
databases of the same schema. This module builds such databases from the task's own;
`rlvr.verifiers.sql.suite` runs the queries on them.

- `rows-<k>a` / `rows-<k>b` (`row_variants`): rows deleted. Pair k splits each table's rows in two by a
  seeded hash of the rowid; `a` keeps one half, `b` the other. Even pairs delete *up* the references
  (a table is halved after the tables that reference it and keeps every row a kept row references:
  leaf tables lose half their rows, the tables they point at few), odd pairs *down* (a table is halved
  after the tables it references and loses every row that pointed at a deleted one: rows with many
  references rarely survive). A table never loses all its rows (its first row stays, with the rows it
  references); a SQLite table WITHOUT ROWID, and the tables it references, keep all theirs.
- `values` (`value_variant`): the values of given columns changed, each by an injective, order-keeping
  shift: integers and reals +1, ISO dates and date-times +1 day, other text prefixed with `~` (so
  every row, its place and every tie stay as they were). Key columns (primary, unique, referencing
  or referenced: `rlvr.verifiers.sql.schema`) are never changed.

Constraints: deleting rows keeps types, NOT NULL, CHECK and uniqueness, and every reference that held
in the task's database holds in the copies (declared foreign keys and inferred references alike); a
value change a constraint refuses leaves its column unchanged. Triggers are dropped from the copies
(no query reads them; they would write during the build).

Deterministic: the halves come from a fixed hash of the rowid (`_half`, seeded by CRC-32 of pair and
table), never from Python's randomised `hash`; one database file gives the same copies in every
process and on every machine.

Cost: a copy is built once per database file (path, size, modification time) and kept on disk
(`rlvr.verifiers.sql.copies`: a private per-user cache folder, shared by processes); a database larger
than `max_bytes` is not copied, and a build that runs past its deadline stops (`PerturbError`).

Dialects: SQLite and DuckDB (the `sql` extra). PostgreSQL: none (a server database cannot be copied
through a role that may only SELECT); `PerturbError` says so.
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.verifiers.sql.copies import Change, Deadline, build_copy, drop_triggers
from rlvr.verifiers.sql.schema import (
    PerturbError,
    Reference,
    Schema,
    database_file,
    file_identity,
    quoted,
    read_schema,
)

__all__ = ["row_variants", "value_variant"]


@dataclass(frozen=True)
class Variant:
    """One perturbed copy of a database.

    Attributes:
        name: 'rows-0a', 'rows-0b', ..., or 'values'.
        db: the copy, in the form `execute` takes for the dialect (a file path).
        how: what was changed, for a verdict's detail.
        keeps_order: every row is there, stored where it was, and any two values of a column compare as
            before (the `values` copy): a query's plan and its ties are those of the task's database.
    """

    name: str
    db: str
    how: str
    keeps_order: bool = False



# -- rows deleted ---------------------------------------------------------------------------------
_PRIME = 2147483629
"""A prime below 2**31: the row hash `((rowid mod p) * a + b) mod p` stays inside 64-bit integers."""


def _half(salt: str, table: str) -> str:
    """SQL giving 0 or 1 for a row of `table` from its rowid, in SQLite and DuckDB alike.

    h = (rowid * k0 + k1) mod p, then twice h = (h * h + k) mod p (squaring mixes the bits, as an
    affine map alone does not: consecutive rowids would share a bit), then bit 16; the k are CRC-32 of
    salt and table.
    """
    k = [zlib.crc32(f"{salt}\x00{table}\x00{n}".encode()) % _PRIME for n in "abcd"]
    h = f"(((rowid % {_PRIME}) * {k[0] | 2} + {k[1]}) % {_PRIME})"
    for step in k[2:]:
        h = f"(({h} * {h} + {step}) % {_PRIME})"
    return f"(({h} >> 16) & 1)"


class _Rows:
    """The deletion of one copy: `doomed[table]` is a temporary table of the rowids to delete.

    `direction` 'up': a table is halved after the tables that reference it, and keeps every row a kept row
    references (leaf tables lose half their rows, the tables they reference little). 'down': a table is
    halved after the tables it references, and loses every row that referenced a deleted one (rows with
    many references rarely survive). Either way a table keeps at least one row, and a kept row's references
    stay alive.
    """

    def __init__(self, conn: Any, schema: Schema, salt: str, side: int, clock: Deadline) -> None:
        self.conn, self.schema, self.salt, self.side, self.clock = conn, schema, salt, side, clock
        self.doomed: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.rid = "rid INTEGER PRIMARY KEY" if isinstance(conn, sqlite3.Connection) else "rid BIGINT"
        fixed = _fixed_tables(schema)
        self.refs = [r for r in schema.references if r.child not in fixed and r.parent not in fixed]

    def _match(self, ref: Reference) -> str:
        pairs = zip(ref.columns, ref.parent_columns, strict=True)
        return " AND ".join(f"p.{quoted(pc)} = c.{quoted(cc)}" for cc, pc in pairs)

    def _count(self, sql: str) -> int:
        return int(self.conn.execute(sql).fetchone()[0])

    def halve(self, table: str) -> None:
        name = f"rlvr_doomed_{len(self.doomed)}"
        self.conn.execute(f"CREATE TEMP TABLE {name} ({self.rid})")  # a SQLite rowid table: lookups by key
        self.conn.execute(f"INSERT INTO {name} SELECT rowid FROM {quoted(table)} "
                          f"WHERE {_half(self.salt, table)} != {self.side}")
        self.doomed[table] = name
        self.sizes[table] = self._count(f"SELECT count(*) FROM {quoted(table)}")
        self.clock.check()

    def protect(self, table: str) -> None:
        """Spare the rows of `table` that a kept row references (its own rows included, to a fixed point)."""
        for ref in [r for r in self.refs if r.parent == table and r.child in self.doomed]:
            while True:
                spared = self.conn.execute(
                    f"DELETE FROM {self.doomed[table]} WHERE rid IN (SELECT p.rowid FROM {quoted(table)} AS p JOIN "
                    f"{quoted(ref.child)} AS c ON {self._match(ref)} WHERE c.rowid NOT IN "
                    f"(SELECT rid FROM {self.doomed[ref.child]}))").rowcount
                self.clock.check()
                if ref.child != table or spared <= 0:
                    break

    def cascade(self, table: str | None = None, refs: list[Reference] | None = None) -> bool:
        """Doom the rows of `table` (None: any) whose held reference (of `refs`, default all) points at a doomed row.

        Returns:
            True when some row was added.
        """
        grew = False
        for ref in self.refs if refs is None else refs:
            if (table is not None and ref.child != table) or ref.child not in self.doomed:
                continue
            alive = f"p.rowid NOT IN (SELECT rid FROM {self.doomed[ref.parent]})" if ref.parent in self.doomed else "1"
            while True:
                added = self.conn.execute(
                    f"INSERT INTO {self.doomed[ref.child]} SELECT c.rowid FROM {quoted(ref.child)} AS c WHERE "
                    f"c.rowid NOT IN (SELECT rid FROM {self.doomed[ref.child]}) AND "
                    f"EXISTS (SELECT 1 FROM {quoted(ref.parent)} AS p WHERE {self._match(ref)}) AND "
                    f"NOT EXISTS (SELECT 1 FROM {quoted(ref.parent)} AS p WHERE {self._match(ref)} AND {alive})"
                ).rowcount
                self.clock.check()
                grew = grew or added > 0
                if ref.child != ref.parent or added <= 0:
                    break
        return grew

    def keep_one(self, table: str) -> None:
        """When every row of `table` is doomed, spare its first row and the rows it references, transitively."""
        if self._count(f"SELECT count(*) FROM {self.doomed[table]}") < self.sizes[table]:
            return
        first = self.conn.execute(f"SELECT min(rowid) FROM {quoted(table)}").fetchone()[0]
        todo = [] if first is None else [(table, first)]
        while todo:
            current, rowid = todo.pop()
            if current not in self.doomed:
                continue
            self.conn.execute(f"DELETE FROM {self.doomed[current]} WHERE rid = {int(rowid)}")
            for ref in [r for r in self.refs if r.child == current and r.parent in self.doomed]:
                parents = self.conn.execute(
                    f"SELECT p.rowid FROM {quoted(ref.parent)} AS p JOIN {quoted(current)} AS c ON {self._match(ref)} "
                    f"WHERE c.rowid = {int(rowid)} AND p.rowid IN (SELECT rid FROM {self.doomed[ref.parent]})")
                todo.extend((ref.parent, r[0]) for r in parents.fetchall())

    def delete(self) -> None:
        """Delete the doomed rows, referencing tables first, each table in a transaction of its own."""
        for table in _children_first(self.schema):
            if table in self.doomed:
                self.conn.execute(f"DELETE FROM {quoted(table)} WHERE rowid IN (SELECT rid FROM {self.doomed[table]})")
                self.clock.check()


def _delete_rows(salt: str, side: int, direction: str) -> Change:
    def change(conn: Any, schema: Schema, deadline: float) -> None:
        clock = Deadline(conn, deadline)
        drop_triggers(conn)
        conn.execute("BEGIN")
        rows = _Rows(conn, schema, salt, side, clock)
        fixed = _fixed_tables(schema)
        order = [t for t in _children_first(schema) if t not in fixed]
        if direction == "up":
            for table in order:
                rows.halve(table)
                rows.protect(table)
                rows.keep_one(table)
        else:
            for table in reversed(order):
                rows.halve(table)
                rows.cascade(table)
        position = {t: i for i, t in enumerate(order)}  # a referencing table comes first: "back" references are
        back = [r for r in rows.refs if position[r.child] > position[r.parent]]  # those of a cycle of tables
        while back and rows.cascade(refs=back):
            pass
        if direction == "down":
            for table in order:
                rows.keep_one(table)
        conn.execute("COMMIT")
        rows.delete()  # one table per transaction: DuckDB checks a foreign key against the last commit
    return change


def _fixed_tables(schema: Schema) -> set[str]:
    """Tables that keep all their rows: those without rowid, and every table they reference, directly or not.

    (Deleting there would leave references the cascade cannot follow: it works on rowids.)
    """
    fixed = {t for t in schema.tables if t not in schema.rowid}
    grew = True
    while grew:
        grew = False
        for ref in schema.references:
            if ref.child in fixed and ref.parent not in fixed:
                fixed.add(ref.parent)
                grew = True
    return fixed


def _children_first(schema: Schema) -> list[str]:
    """Tables ordered so that a referencing table comes before the tables it references (cycles: any order)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(table: str, path: frozenset[str]) -> None:
        if table in seen or table in path:
            return
        for ref in schema.references:
            if ref.parent == table and ref.child != table:
                visit(ref.child, path | {table})
        seen.add(table)
        order.append(table)

    for table in schema.tables:
        visit(table, frozenset())
    return order


def _source(db: str, dialect: str, max_bytes: int | None) -> Path:
    """The database file to copy; `PerturbError` for PostgreSQL, a missing file or one over `max_bytes`."""
    path = database_file(db, dialect)
    _, size, _ = file_identity(path)
    if max_bytes is not None and size > max_bytes:
        raise PerturbError(f"the database is {size} bytes, over the {max_bytes} the perturbed copies may copy")
    return path


def row_variants(db: str, dialect: str, pairs: int = 2, max_bytes: int | None = None,
                 deadline: float | None = None) -> list[Variant]:
    """`2 * pairs` copies of `db` with rows deleted (module docstring), built on first use.

    Args:
        db: a SQLite or DuckDB database (path or URL form).
        dialect: 'sqlite' or 'duckdb'.
        pairs: complementary pairs of copies.
        max_bytes: a larger database file is not copied; None: any size.
        deadline: `time.monotonic()` value past which a build stops; None: no limit.

    Raises:
        PerturbError: PostgreSQL, a file over `max_bytes`, a build that failed or ran past `deadline`.
    """
    path = _source(db, dialect, max_bytes)
    end = float("inf") if deadline is None else deadline
    out = []
    for pair in range(pairs):
        salt, direction = f"rows-{pair}", _DIRECTIONS[pair % 2]
        for side, letter in ((0, "a"), (1, "b")):
            name = f"rows-{pair}{letter}"
            copy = build_copy(path, dialect, name, salt, end, _delete_rows(salt, side, direction))
            how = ("kept rows keep what they reference" if direction == "up" else
                   "rows that referenced a deleted row deleted with it")
            out.append(Variant(name, copy, f"{name}: half of each table's rows deleted by a seeded hash ({how})"))
    return out


_DIRECTIONS = ("up", "down")
"""The deletion direction of pair k is `_DIRECTIONS[k % 2]` (see `_Rows`)."""


# -- values changed -------------------------------------------------------------------------------
_SQLITE_SHIFT = (
    "CASE typeof({c}) WHEN 'integer' THEN {c} + 1 WHEN 'real' THEN {c} + 1.0 WHEN 'text' THEN CASE "
    "WHEN {c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND date({c}) = {c} THEN date({c}, '+1 day') "
    "WHEN {c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]' "
    "AND datetime({c}) = {c} THEN datetime({c}, '+1 day') "
    "ELSE '~' || {c} END ELSE {c} END"
)
_DUCKDB_NUMERIC = re.compile(r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|"
                             r"FLOAT|DOUBLE|REAL|DECIMAL.*|NUMERIC.*)$")


def _shift(dialect: str, column: str, declared: str) -> str | None:
    """The SQL of a column's shifted value, or None when its type is not changed."""
    c = quoted(column)
    if dialect == "sqlite":
        return _SQLITE_SHIFT.format(c=c)
    if _DUCKDB_NUMERIC.match(declared):
        return f"{c} + 1"
    if declared == "DATE":
        return f"{c} + 1"
    if declared.startswith("TIMESTAMP"):
        return f"{c} + INTERVAL 1 DAY"
    if declared == "VARCHAR":
        return f"'~' || {c}"
    return None


def _change_values(columns: tuple[tuple[str, str], ...]) -> Change:
    def change(conn: Any, schema: Schema, deadline: float) -> None:
        sqlite = isinstance(conn, sqlite3.Connection)
        clock = Deadline(conn, deadline)
        drop_triggers(conn)
        changed = 0
        for table, column in columns:
            declared = schema.types.get((table.lower(), column.lower()), "")
            expr = _shift("sqlite" if sqlite else "duckdb", column, declared)
            if expr is None:
                continue
            conn.execute("BEGIN")
            try:
                conn.execute(f"UPDATE {quoted(table)} SET {quoted(column)} = {expr}")
                conn.execute("COMMIT")
                changed += 1
            except Exception:  # a constraint refused the change: this column stays as it was
                conn.execute("ROLLBACK")
            clock.check()
        if not changed:
            raise PerturbError("no column could be changed")
    return change


def value_variant(db: str, dialect: str, columns: set[tuple[str, str]] | frozenset[tuple[str, str]],
                  max_bytes: int | None = None, deadline: float | None = None) -> Variant | None:
    """A copy of `db` with the values of `columns` ((table, column) pairs) shifted; key columns are left out.

    Returns:
        The copy, or None when no column is left to change.

    Raises:
        PerturbError: PostgreSQL, a file over `max_bytes`, a build that failed or ran past `deadline`.
    """
    path = _source(db, dialect, max_bytes)
    schema = read_schema(db, dialect)
    by_lower = {t.lower(): (t, {c.lower(): c for c in cols}) for t, cols in schema.tables.items()}
    chosen = []
    for table, column in sorted(columns):
        found = by_lower.get(table.lower())
        if found is None or column.lower() not in found[1] or (table.lower(), column.lower()) in schema.keys:
            continue
        chosen.append((found[0], found[1][column.lower()]))
    if not chosen:
        return None
    salt = ",".join(f"{t}.{c}" for t, c in chosen)
    end = float("inf") if deadline is None else deadline
    copy = build_copy(path, dialect, "values", salt, end, _change_values(tuple(chosen)))
    names = ", ".join(f"{t}.{c}" for t, c in chosen)
    return Variant("values", copy, f"values: {names} shifted (+1, +1 day, '~' prefix)", keeps_order=True)
