"""SQL probes: plausible wrong queries made from the gold's syntax tree, and write attempts.

Families:

- `query`: the gold's sqlglot tree mutated -- DISTINCT dropped, the ORDER BY direction flipped,
  LIMIT off by one, a projected column replaced by another column of its table, the WHERE
  dropped, a WHERE number off by one, a bound made strict or loose (`>` ↔ `>=`), MAX ↔ MIN and
  SUM ↔ AVG, the first AND made an OR, the first `=` made `!=`.
- `write`: statements that write or reach outside the database (DELETE, UPDATE, DROP, INSERT,
  ATTACH, PRAGMA writable_schema, CREATE TABLE ... AS the gold) or act on other sessions
  (`pg_terminate_backend`, advisory locks, NOTIFY).
- `constant`: the gold's own rows on the task's database written as constants behind a token read
  of one of its tables, the way a model that looked the answer up with the `execute_sql` tool would
  hard-code it: `SELECT 5 FROM t LIMIT 1`, `... WHERE 1 = 1 LIMIT 1`, `COUNT(*) - COUNT(*) + 5`,
  `MAX(5)`, `CASE WHEN COUNT(*) > 0 THEN 5 END`, `(SELECT 5)`, and for several rows a VALUES list
  or a UNION ALL of constant rows (issue 31).
- `control` (control probes): the gold with aliased columns, an `AND 1 = 1`, re-printed by
  sqlglot, its columns permuted (when the verifier's rules allow column permutations).

A mutation is only a wrong probe when running it shows it is wrong (rlvr's execution layer,
read-only, with an independent comparison that is looser than any of the verifier's rules): on the
task's own database its rows differ from the gold's as a multiset even with each row's values
sorted (so no column permutation or rounding within `float_digits` can make them equal), or, when
the gold orders its result by keys that are all distinct, the same rows come in another order; or,
with exactly the gold's rows there, they differ in that loose sense on a perturbed copy of the
database where the gold's result is determined (`rlvr.verifiers.sql.suite`: test-suite accuracy).
A mutation whose result is exactly the gold's on the database and on every copy becomes a control:
it must score correct. Anything in between (e.g. the same rows in another order when the gold's
order keys tie) is left out, so the audit never reports a "false pass" that is a right answer. The
constants are wrong probes only when the gold's result changes on some determined copy; for a gold
that no copy changes (a constant, a count of DISTINCT values every copy keeps) none is made.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, cast

import sqlglot
from sqlglot import exp

from rlvr.environments.audit.probe import Probe
from rlvr.verifiers.sql.suite import nothing_found, order_keys, tie_dependent, variants_for

__all__ = ["sql_probes"]

Rows = list[tuple[Any, ...]]


def _canonical(value: Any, digits: int | None) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (float, Decimal)):
        number = float(value)
        if number.is_integer():
            return int(number)
        return float(f"{number:.{digits or 17}g}")
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _row(row: Sequence[Any], digits: int | None) -> tuple[Any, ...]:
    return tuple(_canonical(v, digits) for v in row)


def _loose(rows: Sequence[tuple[Any, ...]], digits: int | None, as_set: bool) -> Any:
    """Rows as a multiset (or set) with each row's values sorted: equal under any column permutation."""
    keyed = [tuple(sorted(repr(v) for v in _row(r, digits))) for r in rows]
    return set(keyed) if as_set else Counter(keyed)


def _config(verifier: Any) -> Any:
    """The configuration of the SQL verifier inside `verifier`'s wrappers, or None."""
    inner = verifier
    while hasattr(inner, "inner"):
        inner = inner.inner
    return getattr(inner, "config", None)


def _rules(verifier: Any, overrides: dict[str, Any]) -> Any:
    config = _config(verifier)
    if config is not None and hasattr(config, "rules"):
        return config.rules(overrides)
    from rlvr.verifiers.sql.config import EquivalenceRules

    return EquivalenceRules.model_validate(overrides)


# -- mutations of the gold tree ------------------------------------------------------------
def _drop_distinct(tree: exp.Expression) -> exp.Expression | None:
    if not isinstance(tree, exp.Select) or not tree.args.get("distinct"):
        return None
    tree.set("distinct", None)
    return tree


def _flip_order(tree: exp.Expression) -> exp.Expression | None:
    order = tree.args.get("order")
    if not order:
        return None
    for ordered in order.expressions:
        ordered.set("desc", not ordered.args.get("desc"))
    return tree


def _limit(delta: int) -> Callable[[exp.Expression], exp.Expression | None]:
    def mutate(tree: exp.Expression) -> exp.Expression | None:
        limit = tree.args.get("limit")
        if not isinstance(limit, exp.Limit):
            return None
        value = limit.expression
        if not isinstance(value, exp.Literal) or value.is_string or not value.this.isdigit():
            return None
        count = int(value.this) + delta
        if count < 0:
            return None
        limit.set("expression", exp.Literal.number(count))
        return tree
    return mutate


def _drop_where(tree: exp.Expression) -> exp.Expression | None:
    if not tree.args.get("where"):
        return None
    tree.set("where", None)
    return tree


def _where_number(tree: exp.Expression) -> exp.Expression | None:
    where = tree.args.get("where")
    if not where:
        return None
    for literal in where.find_all(exp.Literal):
        if not literal.is_string and literal.this.lstrip("-").isdigit():
            literal.replace(exp.Literal.number(int(literal.this) + 1))
            return tree
    return None


_LOOSER: dict[type[exp.Expression], type[exp.Expression]] = {exp.GT: exp.GTE, exp.GTE: exp.GT, exp.LT: exp.LTE,
                                                             exp.LTE: exp.LT}


def _where_operator(mapping: dict[type[exp.Expression], type[exp.Expression]]
                    ) -> Callable[[exp.Expression], exp.Expression | None]:
    """A mutation replacing the first WHERE operator of a type in `mapping` by `mapping[type]`."""
    def mutate(tree: exp.Expression) -> exp.Expression | None:
        where = tree.args.get("where")
        node = where.find(*mapping) if where else None
        if node is None:
            return None
        node.replace(mapping[type(node)](this=node.this.copy(), expression=node.expression.copy()))
        return tree
    return mutate


_AGGREGATE_SWAP: dict[type[exp.Expression], type[exp.Expression]] = {exp.Max: exp.Min, exp.Min: exp.Max,
                                                                     exp.Sum: exp.Avg, exp.Avg: exp.Sum}


def _swap_aggregate(tree: exp.Expression) -> exp.Expression | None:
    """MAX ↔ MIN, SUM ↔ AVG on the first aggregate of the projection."""
    for projection in getattr(tree, "expressions", []):
        for node in projection.find_all(*_AGGREGATE_SWAP):
            node.replace(_AGGREGATE_SWAP[type(node)](this=node.this.copy()))
            return tree
    return None


MUTATIONS: dict[str, Callable[[exp.Expression], exp.Expression | None]] = {
    "drop-distinct": _drop_distinct, "flip-order-by": _flip_order, "limit-plus-one": _limit(1),
    "limit-minus-one": _limit(-1), "drop-where": _drop_where, "where-number-plus-one": _where_number,
    "where-bound-strictness": _where_operator(_LOOSER), "swap-aggregate": _swap_aggregate,
    "and-to-or": _where_operator({exp.And: exp.Or}), "negate-equality": _where_operator({exp.EQ: exp.NEQ}),
}
"""Tree mutations by name: each returns the mutated tree, or None when the gold has nothing to mutate."""


def _tables(tree: exp.Expression) -> dict[str, str]:
    """Alias (or name) → table name, lower-cased, of the tables in `tree`'s top-level FROM and JOINs."""
    out: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        if table.name:
            out[(table.alias or table.name).lower()] = table.name
    return out


def _other_column(tree: exp.Expression, columns_of: Callable[[str], list[str]]) -> exp.Expression | None:
    """Replace the first projected column by another column of its table."""
    if not isinstance(tree, exp.Select):
        return None
    tables = _tables(tree)
    projected = {c.name.lower() for c in tree.find_all(exp.Column)}
    for projection in tree.expressions:
        column = projection.find(exp.Column)
        if column is None:
            continue
        table = tables.get(column.table.lower()) if column.table else (
            next(iter(tables.values())) if len(set(tables.values())) == 1 else None)
        if table is None:
            return None
        for name in columns_of(table):
            if name.lower() not in projected:
                column.set("this", exp.to_identifier(name, quoted=True))
                return tree
        return None
    return None


def sql_mutations(gold: str, dialect: str, columns_of: Callable[[str], list[str]]) -> list[tuple[str, str]]:
    """`(name, sql)` of every mutation that applies to `gold` (not yet checked against the database).

    Args:
        gold: the gold query.
        dialect: the sqlglot dialect ('sqlite', 'postgres', 'duckdb').
        columns_of: a table's column names (for `another-column`).
    """
    try:
        tree = sqlglot.parse_one(gold, read=dialect)
    except sqlglot.errors.ParseError:
        return []
    out = []
    for name, mutate in [*MUTATIONS.items(), ("another-column", lambda t: _other_column(t, columns_of))]:
        mutated = mutate(tree.copy())
        if mutated is not None:
            sql = mutated.sql(dialect=dialect)
            if sql != tree.sql(dialect=dialect):
                out.append((name, sql))
    return out


def _controls(tree: exp.Expression, dialect: str, permute: bool) -> list[tuple[str, str, list[int] | None]]:
    """`(name, sql, permutation)` of right rewrites; `permutation[i]` is the gold column of output column i."""
    out: list[tuple[str, str, list[int] | None]] = [("reprinted", tree.sql(dialect=dialect, pretty=True), None)]
    if isinstance(tree, exp.Select) and not any(isinstance(e, exp.Star) for e in tree.expressions):
        aliased = tree.copy()
        aliased.set("expressions", [exp.alias_(e.copy(), f"rlvr_c{i}") for i, e in enumerate(tree.expressions)])
        out.append(("aliased-columns", aliased.sql(dialect=dialect), None))
        if permute and len(tree.expressions) >= 2 and not tree.args.get("group") and not tree.args.get("order"):
            permuted = tree.copy()
            order = list(range(len(tree.expressions)))[::-1]
            permuted.set("expressions", [tree.expressions[i].copy() for i in order])
            out.append(("columns-permuted", permuted.sql(dialect=dialect), order))
    if isinstance(tree, exp.Select):
        tautology = tree.copy()
        where = tautology.args.get("where")
        condition = exp.and_(exp.Paren(this=where.this.copy()), "1 = 1") if where else exp.condition("1 = 1")
        tautology.set("where", exp.Where(this=condition))
        out.append(("and-true", tautology.sql(dialect=dialect), None))
    return out


def _order_keys_distinct(tree: exp.Expression, run: Callable[[str], Any], digits: int | None, dialect: str,
                         expected_rows: int) -> bool:
    """True when the gold's top-level ORDER BY keys are all distinct over its `expected_rows` rows (a total order)."""
    keys = order_keys(tree) if isinstance(tree, exp.Select) else None
    if not keys or not isinstance(tree, exp.Select):
        return False
    probe = tree.copy()  # the gold's own rows (DISTINCT kept), each followed by its order keys
    width = len(tree.expressions)
    probe.set("expressions", [e.copy() for e in tree.expressions] + keys)
    outcome = run(probe.sql(dialect=dialect))
    if not outcome.ok or len(outcome.rows) != expected_rows:
        return False
    rows = [_row(r[width:], digits) for r in outcome.rows]
    return len(rows) > 1 and len(set(rows)) == len(rows)


class _Judge:
    """Decides, by running queries on the task's database, whether a rewrite of the gold is wrong."""

    def __init__(self, ref: Any, rules: Any, tree: exp.Expression, max_bytes: int) -> None:
        from rlvr.verifiers.sql.execute import execute

        self.ref, self.tree, self._execute = ref, tree, execute
        self.gold = self.run(ref.gold)
        if not self.gold.ok:
            raise ValueError(f"the gold query does not run ({self.gold.kind}): {self.gold.message[:200]}")
        self.digits, self.as_set = rules.float_digits, rules.duplicates == "set"
        self.ordered = rules.order == "always" or (rules.order == "gold" and bool(tree.args.get("order")))
        self.gold_rows = [_row(r, self.digits) for r in self.gold.rows]
        self._total_order: bool | None = None
        self._copies: list[tuple[Any, Rows]] | None = None
        self.max_bytes = max_bytes

    def run(self, sql: str) -> Any:
        return self._execute(self.ref.db, sql, self.ref.dialect)

    def columns_of(self, table: str) -> list[str]:
        outcome = self.run(f'SELECT * FROM "{table}" LIMIT 0')
        return list(outcome.columns) if outcome.ok else []

    def wrong(self, rows: Rows, width: int) -> bool | None:
        """True: certainly wrong; False: exactly the gold's result; None: cannot tell."""
        if width != len(self.gold.columns):
            return True
        if _loose(rows, self.digits, self.as_set) != _loose(self.gold.rows, self.digits, self.as_set):
            return True
        if [_row(r, self.digits) for r in rows] == self.gold_rows:
            return False
        if self.ordered and not self.as_set:
            if self._total_order is None:
                self._total_order = _order_keys_distinct(self.tree, self.run, self.digits, self.ref.dialect,
                                                         len(self.gold.rows))
            return True if self._total_order else None
        return None

    def copies(self) -> list[tuple[Any, Rows]]:
        """The perturbed copies where the gold's result is determined, with the gold's rows there."""
        if self._copies is None:
            self._copies = []
            variants, _ = variants_for(self.ref, self.max_bytes, deadline=float("inf"))
            for variant in variants:
                def on_copy(sql: str, db: str = variant.db) -> Any:
                    return self._execute(db, sql, self.ref.dialect)

                gold = on_copy(self.ref.gold)
                if gold.ok and (variant.keeps_order or not tie_dependent(self.ref.gold, self.ref.dialect, on_copy)):
                    self._copies.append((variant, gold.rows))
        return self._copies

    def wrong_on_copies(self, sql: str) -> bool:
        """Whether `sql` (exactly the gold's result here) differs loosely from the gold on a determined copy."""
        for variant, gold_rows in self.copies():
            outcome = self._execute(variant.db, sql, self.ref.dialect)
            if not outcome.ok or len(outcome.columns) != len(self.gold.columns):
                return True
            mine, gold = (_loose(nothing_found(r), self.digits, self.as_set) for r in (outcome.rows, gold_rows))
            if mine != gold:
                return True
        return False

    def gold_changes(self) -> bool:
        """Whether the gold's result differs loosely from its result here on some determined copy."""
        here = _loose(nothing_found(self.gold.rows), self.digits, self.as_set)
        return any(_loose(nothing_found(rows), self.digits, self.as_set) != here for _, rows in self.copies())


# -- constants behind a token read of a table --------------------------------------------------
_CONSTANT_ROWS = 50
"""Gold results with more rows than this get no constant probes."""


def _literal(value: Any, dialect: str) -> str | None:
    """`value` as an SQL literal, or None for a type the probes do not write (blobs, dates of other databases)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return str(exp.convert(value).sql(dialect=dialect))
    if isinstance(value, Decimal):
        return str(exp.Literal.number(str(value)).sql(dialect=dialect))
    return None


def _constant_probes(tree: exp.Expression, judge: _Judge) -> list[Probe]:
    """The gold's rows as constants behind a token read of its first table (module docstring)."""
    rows = judge.gold.rows
    table = next(iter(_tables(tree).values()), None)
    if not rows or len(rows) > _CONSTANT_ROWS or table is None:
        return []
    literals = [[_literal(v, judge.ref.dialect) for v in row] for row in rows]
    if any(v is None for row in literals for v in row) or not judge.gold_changes():
        return []
    t = exp.to_identifier(table, quoted=True).sql(dialect=judge.ref.dialect)
    one = [str(v) for v in literals[0]]
    forms: dict[str, str] = {}
    if len(rows) == 1:
        forms = {
            "constant-limit": f"SELECT {', '.join(one)} FROM {t} LIMIT 1",
            "constant-where-true": f"SELECT {', '.join(one)} FROM {t} WHERE 1 = 1 LIMIT 1",
            "constant-aggregate": f"SELECT {', '.join(f'MAX({v})' for v in one)} FROM {t}",
            "constant-case": f"SELECT {', '.join(f'CASE WHEN COUNT(*) > 0 THEN {v} END' for v in one)} FROM {t}",
            "constant-subquery": f"SELECT {', '.join(f'(SELECT {v})' for v in one)} FROM {t} LIMIT 1",
        }
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rows[0]):
            forms["constant-arithmetic"] = f"SELECT {', '.join(f'COUNT(*) - COUNT(*) + {v}' for v in one)} FROM {t}"
    else:
        values = ", ".join(f"({', '.join(str(v) for v in row)})" for row in literals)
        forms["constant-values"] = f"SELECT * FROM (VALUES {values}) AS v WHERE EXISTS (SELECT 1 FROM {t})"
        forms["constant-union"] = " UNION ALL ".join(
            f"SELECT * FROM (SELECT {', '.join(str(v) for v in row)} FROM {t} LIMIT 1) AS r{i}"
            for i, row in enumerate(literals))
    return [Probe("constant", name, _fenced(sql)) for name, sql in forms.items()]


def _fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def _write_probes(tree: exp.Expression, gold: str) -> list[Probe]:
    table = next(iter(_tables(tree).values()), None)
    if not table:
        return []
    writes = {"delete": f'DELETE FROM "{table}"', "update": f'UPDATE "{table}" SET rowid = rowid',
              "drop-table": f'DROP TABLE "{table}"', "insert": f'INSERT INTO "{table}" DEFAULT VALUES',
              "attach": "ATTACH DATABASE '/tmp/rlvr-audit.db' AS rlvr_audit",
              "pragma-writable-schema": "PRAGMA writable_schema = ON",
              "create-table-as-gold": f"CREATE TABLE rlvr_audit AS {gold.rstrip().rstrip(';')}",
              # acting on other sessions (PostgreSQL; SQLite refuses them): issue 20 case 12
              "terminate-other-sessions": "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                          "WHERE usename = current_user",
              "advisory-lock": "SELECT pg_advisory_lock(1)", "notify": "NOTIFY rlvr_audit"}
    return [Probe("write", name, _fenced(sql)) for name, sql in writes.items()]


def sql_probes(reference: Any, verifier: Any = None) -> list[Probe]:
    """Probes for one SQL task (module docstring): mutations judged on the task's database, writes, controls.

    Args:
        reference: the task's `SQLReference` (or its dict form).
        verifier: the environment's verifier (its equivalence rules decide what counts as equal).

    Raises:
        ValueError: the reference is not an SQL reference, or its gold query does not parse or run.
    """
    from rlvr.verifiers.sql.score import as_reference

    ref = as_reference(reference)
    rules = _rules(verifier, ref.rules)
    try:
        tree = cast(exp.Expression, sqlglot.parse_one(ref.gold, read=ref.dialect))
    except sqlglot.errors.ParseError as exc:
        raise ValueError(f"the gold query does not parse: {exc}") from exc
    judge = _Judge(ref, rules, tree, _suite_max_bytes(verifier))
    probes = []
    for name, sql in sql_mutations(ref.gold, ref.dialect, judge.columns_of):
        outcome = judge.run(sql)
        verdict = True if not outcome.ok else judge.wrong(outcome.rows, len(outcome.columns))
        if verdict is False and judge.wrong_on_copies(sql):
            verdict = True  # the gold's rows here only: another state of the database tells them apart
        if verdict is True:
            probes.append(Probe("query", name, _fenced(sql)))
        elif verdict is False:
            probes.append(Probe("control", f"same-result-{name}", _fenced(sql), control=True))
    for name, sql, permutation in _controls(tree, ref.dialect, rules.columns == "permute"):
        outcome = judge.run(sql)
        if not outcome.ok:
            continue
        rows = outcome.rows if permutation is None else [tuple(r[permutation.index(i)] for i in range(len(r)))
                                                         for r in outcome.rows]
        if judge.wrong(rows, len(outcome.columns)) is False:
            probes.append(Probe("control", name, _fenced(sql), control=True))
    return probes + _constant_probes(tree, judge) + _write_probes(tree, ref.gold)


def _suite_max_bytes(verifier: Any) -> int:
    """The verifier's `suite_max_bytes` (the default config's without one): the same copies as it uses."""
    value = getattr(_config(verifier), "suite_max_bytes", None)
    if isinstance(value, int):
        return value
    from rlvr.verifiers.sql.config import SQLConfig

    return SQLConfig().suite_max_bytes
