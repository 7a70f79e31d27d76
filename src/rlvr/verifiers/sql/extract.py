"""Find the SQL query in free-form model output, and classify it with sqlglot.

Extraction order (the first that yields a query wins):

1. the last `<solution>...</solution>` or `<answer>...</answer>` tag (SkyRL-SQL and R1-style
   prompts); inside it, a ```sql fence or a query within prose is taken, else its whole text;
2. the last ```sql (or ```sqlite, ```postgresql, ...) fenced block, else the last plain ``` block
   that sqlglot parses as a query (CRLF line ends and one-line fences included);
3. the whole response, when sqlglot reads all of it as SQL statements (so a bare `DELETE FROM t`
   is judged, not ignored);
4. the last statement starting with SELECT or WITH (located with sqlglot's tokenizer, cut at a
   `;` token or a blank line) that sqlglot parses as a query;
5. the last Markdown inline code span (`` `SELECT ...` ``) that sqlglot parses as a query.

Trailing `;` tokens, and a comment after them, are dropped (`SELECT 1; -- done`).

Classification (`classify`) parses the query with sqlglot in the reference's dialect; no
home-made regular expressions decide what a statement is. A query is accepted only if it is a
single statement whose root is a query (SELECT, set operation, parenthesised query) and whose
tree holds no data-changing or session-changing node (a `DELETE` inside a CTE, `SELECT ... INTO`,
`FOR UPDATE`, ...). The databases enforce read-only access again, on their own (`execute`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

__all__ = ["classify"]

# Markup around the answer (not SQL): tags and Markdown fences.
_TAG = re.compile(r"<(solution|answer)>(.*?)</\1>", re.S | re.I)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)(?:[ \t]*\r?\n|[ \t]+)(.*?)```", re.S)  # CRLF, one-line fences
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")  # Markdown inline code: `SELECT ...`
_SQL_LANGS = {"sql", "sqlite", "sqlite3", "postgres", "postgresql", "psql", "pgsql", "duckdb", "mysql", "tsql"}

_FORBIDDEN: tuple[type[exp.Expression], ...] = (
    exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.Command, exp.Pragma,
    exp.Attach, exp.Detach, exp.Set, exp.Transaction, exp.Commit, exp.Rollback, exp.Copy, exp.Into, exp.Lock,
    exp.Use, exp.Grant, exp.Revoke, exp.TruncateTable, exp.Analyze, exp.LoadData, exp.Install,
)
"""Nodes that write, change the schema or the session, or lock rows: never part of a read-only query."""

_SESSION_FUNCTIONS = frozenset({
    # act on other sessions: end or interrupt them, signal them, share locks or channels with them
    "pg_terminate_backend", "pg_cancel_backend", "pg_signal_backend", "pg_notify", "pg_listening_channels",
    "pg_notification_queue_usage", "pg_advisory_lock", "pg_advisory_lock_shared", "pg_advisory_unlock",
    "pg_advisory_unlock_shared", "pg_advisory_unlock_all", "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared",
    "pg_try_advisory_lock", "pg_try_advisory_lock_shared", "pg_try_advisory_xact_lock",
    "pg_try_advisory_xact_lock_shared", "pg_blocking_pids", "pg_safe_snapshot_blocking_pids",
    "pg_stat_get_activity", "pg_stat_get_backend_idset", "pg_stat_get_backend_pid", "pg_stat_get_backend_activity",
    "pg_log_backend_memory_contexts",
    # change the server or this session's settings
    "set_config", "pg_reload_conf", "pg_rotate_logfile", "pg_promote", "pg_switch_wal", "pg_create_restore_point",
    "pg_backup_start", "pg_backup_stop", "pg_start_backup", "pg_stop_backup", "pg_wal_replay_pause",
    "pg_wal_replay_resume", "pg_logical_emit_message", "pg_stat_reset", "pg_stat_reset_shared",
    "pg_stat_reset_single_table_counters", "pg_stat_reset_single_function_counters", "pg_stat_reset_slru",
    "pg_stat_reset_replication_slot", "pg_stat_reset_subscription_stats", "pg_export_snapshot",
    "pg_create_physical_replication_slot", "pg_create_logical_replication_slot", "pg_drop_replication_slot",
    "pg_copy_physical_replication_slot", "pg_copy_logical_replication_slot", "pg_replication_slot_advance",
    # run a query given as text, out of the parser's sight
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema",
    "ts_stat", "dblink", "dblink_exec", "dblink_open", "dblink_fetch", "dblink_send_query", "dblink_connect",
    "dblink_connect_u",
    # the server's files and large objects
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir", "pg_ls_waldir",
    "pg_ls_tmpdir", "pg_ls_archive_statusdir", "lo_import", "lo_export", "lo_create", "lo_creat", "lo_unlink",
    "lo_put", "lo_from_bytea", "lo_open", "lowrite", "lo_truncate",
})
"""Functions a read-only query may not call (compared lower-case, schema qualifier ignored): on a
shared server one role's connections are siblings, so `pg_terminate_backend` on its own role's
backends ends the other samples' verifications (issue 20: four correct queries graded together all
scored 0), an advisory lock or a notification reaches them, and a text-query function would run SQL
this parser never saw."""

_SESSION_TABLES = frozenset({"pg_stat_activity", "pg_locks", "pg_stat_ssl", "pg_stat_gssapi", "pg_prepared_xacts",
                             "pg_backend_memory_contexts", "pg_stat_progress_vacuum", "pg_stat_progress_create_index"})
"""Views onto other sessions (their queries, locks, connections): refused like `_SESSION_FUNCTIONS`."""


@dataclass(frozen=True)
class Extracted:
    """A query found in a response.

    Attributes:
        sql: the query text, stripped, without trailing semicolons.
        source: where it was found: 'tag', 'fence' or 'statement'.
    """

    sql: str
    source: str


@dataclass(frozen=True)
class Classified:
    """What sqlglot says about one query.

    Attributes:
        ok: True when the text is one read-only query.
        reason: why it is not (empty when `ok`).
        parsed: False when sqlglot could not parse the text (then `ok` is False too).
        ordered: whether the top-level query has ORDER BY (None when not parsed).
        normalized: the query re-generated by sqlglot (canonical spacing/case; None when not parsed).
        reads_table: whether the query reads a table of the database (not only literals, CTEs over
            them, table functions or the schema catalog); None when not parsed.
    """

    ok: bool
    reason: str = ""
    parsed: bool = True
    ordered: bool | None = None
    normalized: str | None = None
    reads_table: bool | None = None


def _strip(sql: str, dialect: str) -> str:
    """`sql` without surrounding space and trailing `;` tokens (with any comment after them: `SELECT 1; -- done`)."""
    text = sql.strip().rstrip(";").strip()
    if ";" not in text:
        return text
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except SqlglotError:
        return text
    while tokens and tokens[-1].token_type.name == "SEMICOLON":
        text = text[: tokens.pop().start]
    return text.strip()


def _parse(sql: str, dialect: str) -> list[exp.Expression] | None:
    """The statements sqlglot reads in `sql` (empty and comment-only ones dropped), or None when it cannot parse it."""
    try:
        return [e for e in sqlglot.parse(sql, read=dialect)
                if isinstance(e, exp.Expression) and not isinstance(e, exp.Semicolon)]
    except SqlglotError:
        return None
    except (RecursionError, ValueError, TypeError, IndexError):  # pathological input: treat as unparsed
        return None


def _is_query(sql: str, dialect: str) -> bool:
    statements = _parse(sql, dialect)
    return statements is not None and len(statements) == 1 and isinstance(_unwrap(statements[0]), exp.Query)


def _is_statement(sql: str, dialect: str) -> bool:
    """Whether all of `sql` is SQL statements (a query or a write: `DELETE FROM t` is judged, not ignored)."""
    if not sql or len(sql) > _CACHED_CHARS:
        return False
    statements = _parse(sql, dialect)
    return bool(statements) and all(
        isinstance(_unwrap(s), (exp.Query, *_FORBIDDEN)) and not isinstance(s, exp.Command) for s in statements or ())


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.Subquery, exp.Paren)) and isinstance(node.this, exp.Expression):
        node = node.this
    return node


def _from_fences(text: str, dialect: str) -> str | None:
    fences = list(_FENCE.finditer(text))
    for match in reversed(fences):
        if match.group(1).lower() in _SQL_LANGS and _strip(match.group(2), dialect):
            return _strip(match.group(2), dialect)
    for match in reversed(fences):
        if not match.group(1) and _is_query(_strip(match.group(2), dialect), dialect):
            return _strip(match.group(2), dialect)
    return None


def _from_inline_code(text: str, dialect: str) -> str | None:
    """The last Markdown inline code span (`` `SELECT ...` ``) that sqlglot parses as a query."""
    for match in reversed(list(_INLINE.finditer(text))):
        candidate = _strip(match.group(1), dialect)
        if _is_query(candidate, dialect):
            return candidate
    return None


def _statement_end(text: str, start: int, dialect: str) -> int:
    """End offset of the statement starting at `start`: its first `;` token, or the blank line before."""
    paragraph = text.find("\n\n", start)
    end = len(text) if paragraph < 0 else paragraph
    try:
        tokens = sqlglot.tokenize(text[start:end], read=dialect)
    except SqlglotError:
        return end
    for token in tokens:
        if token.token_type.name == "SEMICOLON":
            return start + token.start
    return end


def _from_statements(text: str, dialect: str) -> str | None:
    """The last SELECT/WITH statement in prose that sqlglot parses as a query."""
    starts = [m.start() for m in re.finditer(r"\b(?:select|with)\b", text, re.I)]
    for index in range(len(starts) - 1, -1, -1):
        start = starts[index]
        end = _statement_end(text, start, dialect)
        candidate = _strip(text[start:end], dialect)
        if _is_query(candidate, dialect):
            # widen to the earliest keyword of the same statement (`SELECT a UNION SELECT b`, subqueries)
            for earlier in starts[:index]:
                widened = _strip(text[earlier:end], dialect)
                if _statement_end(text, earlier, dialect) == end and _is_query(widened, dialect):
                    return widened
            return candidate
        trimmed = _longest_query_prefix(candidate, dialect)
        if trimmed is not None:
            return trimmed
    return None


_TRIM_TRIES = 24


def _longest_query_prefix(candidate: str, dialect: str) -> str | None:
    """The longest prefix of `candidate`, cut at a token end, that parses as a query (prose after a query)."""
    try:
        tokens = sqlglot.tokenize(candidate, read=dialect)
    except SqlglotError:
        return None
    for k in range(len(tokens) - 1, max(0, len(tokens) - 1 - _TRIM_TRIES), -1):
        prefix = _strip(candidate[: tokens[k - 1].end + 1], dialect)
        if _is_query(prefix, dialect):
            return prefix
    return None


def extract_sql(response: str, dialect: str = "sqlite") -> Extracted | None:
    """Find the query in a model response (see the module docstring for the order).

    Args:
        response: free-form model output.
        dialect: sqlglot dialect used to recognise queries in fences and prose.

    Returns:
        The query and where it was found, or None when the response holds no query.
    """
    tags = list(_TAG.finditer(response))
    if tags:
        inner = _strip(tags[-1].group(2), dialect)
        sql = _from_fences(inner, dialect)
        if sql is None and not _is_statement(inner, dialect):
            sql = _from_statements(inner, dialect)  # prose around the query inside the tag
        sql = inner if sql is None else sql  # otherwise the tag holds the answer as written: the database judges it
        return Extracted(sql, "tag") if sql else None
    fenced = _from_fences(response, dialect)
    if fenced is not None:
        return Extracted(fenced, "fence")
    whole = _strip(response, dialect)
    if _is_statement(whole, dialect):
        return Extracted(whole, "statement")
    statement = _from_statements(response, dialect)
    if statement is None:
        statement = _from_inline_code(response, dialect)  # `SELECT ...` in prose: the backticks hide it above
    return Extracted(statement, "statement") if statement is not None else None


def classify(sql: str, dialect: str = "sqlite", normalize: bool = False) -> Classified:
    """Decide with sqlglot whether `sql` is exactly one read-only query (results of short texts are cached).

    Args:
        sql: the query text.
        dialect: sqlglot dialect ('sqlite', 'postgres', 'duckdb').
        normalize: also fill `Classified.normalized` (sqlglot re-generation, a few ms).

    Returns:
        A `Classified`; `ok` False with a reason for multiple statements, a statement that is not
        a query (DROP, PRAGMA, ATTACH, ...), a query holding a write (a data-modifying CTE,
        `SELECT ... INTO`, `FOR UPDATE`), or text sqlglot cannot parse (`parsed` False).
    """
    if len(sql) <= _CACHED_CHARS:
        return _classify_cached(sql, dialect, normalize)
    return _classify(sql, dialect, normalize)


_CACHED_CHARS = 20_000


@functools.lru_cache(maxsize=1024)
def _classify_cached(sql: str, dialect: str, normalize: bool) -> Classified:
    return _classify(sql, dialect, normalize)


def _classify(sql: str, dialect: str, normalize: bool) -> Classified:
    statements = _parse(sql, dialect)
    if statements is None:
        return Classified(ok=False, reason="sqlglot could not parse it as SQL", parsed=False)
    if not statements:
        return Classified(ok=False, reason="the text holds no SQL statement")
    if len(statements) > 1:
        kinds = ", ".join(type(s).__name__.upper() for s in statements)
        return Classified(ok=False, reason=f"{len(statements)} statements ({kinds}); give exactly one query")
    root = _unwrap(statements[0])
    if not isinstance(root, exp.Query):
        return Classified(ok=False, reason=f"a {type(root).__name__.upper()} statement is not a read-only query")
    for node in root.walk():
        if isinstance(node, _FORBIDDEN):
            return Classified(ok=False, reason=f"the query contains a {type(node).__name__.upper()} clause, "
                                               "which writes or changes state")
        refused = _session_reach(node)
        if refused:
            return Classified(ok=False, reason=f"the query uses {refused}, which acts on or reads other sessions, "
                                               "the server or its files")
    ordered = bool(root.args.get("order"))
    normalized = None
    if normalize:
        try:
            normalized = root.sql(dialect=dialect, normalize=True)
        except SqlglotError:
            normalized = None
    return Classified(ok=True, ordered=ordered, normalized=normalized, reads_table=_reads_table(root))


_CATALOG_SCHEMAS = {"information_schema", "pg_catalog"}


def _reads_table(root: exp.Expression) -> bool:
    """Whether `root` reads a database table: a named table that is no CTE of the query and no catalog."""
    ctes = {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}
    for table in root.find_all(exp.Table):
        name = table.name.lower()
        if not isinstance(table.this, exp.Identifier) or (not table.db and name in ctes):
            continue  # a table function (`json_each(...)`) or one of the query's own CTEs
        if name.startswith("sqlite_") or table.db.lower() in _CATALOG_SCHEMAS:
            continue  # the schema catalog describes the database; it holds none of its data
        return True
    return False


def _session_reach(node: Any) -> str:
    """The name of a refused function or session view `node` is, or ''."""
    if isinstance(node, exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else "").lower()
        if name in _SESSION_FUNCTIONS:
            return f"{name}()"
    elif isinstance(node, exp.Table) and node.name.lower() in _SESSION_TABLES:
        return node.name.lower()
    return ""


def normalize_sql(sql: str, dialect: str = "sqlite") -> str:
    """A canonical form of `sql` (sqlglot re-generation: case, spacing, quoting); the stripped text if unparsable."""
    statements = _parse(sql, dialect)
    if not statements or len(statements) != 1:
        return _strip(sql, dialect)
    try:
        return statements[0].sql(dialect=dialect, normalize=True)
    except SqlglotError:
        return _strip(sql, dialect)
