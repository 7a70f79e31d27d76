"""Scoring on perturbed copies of the task's database: test-suite accuracy (Zhong, Yu and Klein 2020).

A prediction whose rows equal the gold's on the task's database is run again, with the gold, on the
copies `rlvr.verifiers.sql.perturb` builds: rows deleted (`row_variants`), and values shifted in the
columns the gold's output comes from (`value_variant`; found with sqlglot's scopes, leaving out the
columns the gold compares or joins on). It stays correct only when it matches the gold on every copy
where the gold's result is determined, under the same equivalence rules. A query that copies the
gold's rows as constants (`SELECT 5 FROM t LIMIT 1`), or looks an answer up by a key found with the
`execute_sql` tool instead of computing it, keeps its rows on a copy where the gold's change.

Determined: a LIMIT (top-level, or in an uncorrelated subquery) that cuts through rows whose ORDER BY
keys tie, or a LIMIT without ORDER BY that drops rows, picks rows arbitrarily on that copy, and when
row order is compared, two returned rows whose keys tie may come in either order; a right query may
break the tie another way (deleting rows can make a tie where there was none), so the copy is
skipped. A LIMIT in a correlated subquery cannot be checked: every row copy is skipped. The `values`
copy keeps every row in its place and every comparison between values, so its ties are those of the
task's database, where the prediction already agreed with the gold: it is never skipped for ties.

On the copies (never on the task's database), one row of NULLs and no row at all are the same
result: deleting rows empties filters that matched on the task's database, where `SELECT max(x)
... WHERE ...` gives one row of NULL and the right `SELECT x ... WHERE ... ORDER BY x DESC LIMIT 1`
gives none. (A count gives 0, not NULL: 0 and no row stay different.)

Outcomes (`SuiteResult.status`):

| situation | status |
|---|---|
| on a determined copy the prediction's rows differ from the gold's, or it fails or is too large there | 'fail' |
| the prediction runs past its full `query_timeout_s` on a copy | 'timeout' |
| it matches on every determined copy checked, and the gold's result changed on one of them at least | 'pass' |
| no copy (PostgreSQL, a file over `suite_max_bytes`, a failed build), none determined, none where | 'unchecked' |
| the gold's result changed, or the item's time ran out first | |

'unchecked' leaves the verdict to the task's database alone (where a prediction that reads no table
still cannot match a gold that reads one); the verdict's detail gives the reason. A gold whose result
no deletion of rows and no shift of its output's values changes (a constant, `SELECT count(*) FROM t
WHERE 0`, the DISTINCT values of a column every copy keeps) cannot tell a computed answer from a
copied one: that is the limit of this check.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

from rlvr.verifiers.sql.config import EquivalenceRules, SQLReference
from rlvr.verifiers.sql.equivalence import check_equivalence
from rlvr.verifiers.sql.execute import Execution, Limits
from rlvr.verifiers.sql.perturb import Variant, row_variants, value_variant
from rlvr.verifiers.sql.schema import PerturbError, Schema, read_schema

__all__ = ["check_suite", "nothing_found", "order_keys", "output_columns", "tie_dependent", "variants_for"]

MIN_QUERY_S = 0.05
"""A copy is not started with less time than this left for the item (seconds)."""

_CACHE_SIZE = 4096
"""Entries kept per in-process cache (output columns, tie checks) before it is emptied."""

Run = Callable[[str, str, Limits], Execution]
"""Runs `sql` on database `db` under `limits`: `run(db, sql, limits)`."""


@dataclass(frozen=True)
class SuiteResult:
    """The outcome of the perturbed copies (module docstring).

    Attributes:
        status: 'pass', 'fail', 'timeout' or 'unchecked'.
        detail: which copy decided and how, or why nothing was checked.
    """

    status: Literal["pass", "fail", "timeout", "unchecked"]
    detail: str


# -- the gold's ties --------------------------------------------------------------------------------
def order_keys(select: exp.Select) -> list[exp.Expression] | None:
    """The expressions `select`'s ORDER BY sorts by, ordinals and output aliases replaced by what they name.

    Returns:
        Copies of the key expressions ([] without ORDER BY), or None when one cannot be resolved
        (an ordinal past the projection, or naming `*`).
    """
    order = select.args.get("order")
    if not order:
        return []
    aliases = {e.alias.lower(): e.this for e in select.expressions if isinstance(e, exp.Alias)}
    keys = []
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and not key.is_string and key.this.isdigit():
            index = int(key.this) - 1
            if not 0 <= index < len(select.expressions):
                return None
            key = select.expressions[index]
            key = key.this if isinstance(key, exp.Alias) else key
            if isinstance(key, exp.Star):
                return None
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            key = aliases[key.name.lower()]
        keys.append(key.copy())
    return keys


def _literal_int(node: Any) -> int | None:
    value = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else None
    if isinstance(value, exp.Literal) and not value.is_string and str(value.this).isdigit():
        return int(value.this)
    return None


def _cuts_a_tie(node: exp.Query, dialect: str, run: Callable[[str], Execution], inside: bool) -> bool:
    """Whether `node`, run on its own, has rows its ORDER BY cannot tell apart where that matters.

    That is at the cut of its OFFSET and of its LIMIT, and with `inside` between any two rows it
    returns (an ordered comparison).
    """
    limit, offset = node.args.get("limit"), node.args.get("offset")
    n = _literal_int(limit) if limit is not None else None
    o = _literal_int(offset) if offset is not None else 0
    if (limit is not None and n is None) or o is None:
        return True  # a computed limit: not checked
    probe = node.copy()
    probe.set("limit", None)
    probe.set("offset", None)
    end = o + n if n is not None else None
    plain = run((probe.copy().limit(end + 1) if end is not None else probe).sql(dialect=dialect))
    if not plain.ok:
        return True  # on its own it fails: a correlated subquery, or something the database refuses
    count = len(plain.rows)
    cuts = [b for b in (o, end) if b is not None and 0 < b < count]  # a cut with rows on both sides
    if inside:
        cuts += range(o + 1, min(count, end if end is not None else count))
    if not cuts:
        return False
    keys = order_keys(probe) if isinstance(probe, exp.Select) else None
    if not keys:
        return True  # no usable ORDER BY: which rows are cut, or their order, is arbitrary
    width = len(plain.columns)
    keyed = probe.copy()
    keyed.set("expressions", [*keyed.expressions, *keys])
    outcome = run((keyed.limit(end + 1) if end is not None else keyed).sql(dialect=dialect))
    if not outcome.ok or [tuple(r[:width]) for r in outcome.rows] != [tuple(r) for r in plain.rows]:
        return True  # the keys changed the rows (DISTINCT): not checked
    rows = outcome.rows
    return any(rows[b - 1][width:] == rows[b][width:] and rows[b - 1][:width] != rows[b][:width] for b in cuts)


def tie_dependent(gold: str, dialect: str, run: Callable[[str], Execution], ordered: bool = False) -> bool:
    """Whether the gold's result on a database depends on how ties are broken (module docstring).

    Args:
        gold: the gold query.
        dialect: sqlglot dialect.
        run: runs one query on the database in question.
        ordered: whether row order is compared; then ties between any two rows of the gold's ordered
            result count too, not only at a LIMIT's cut.

    Returns:
        True when a LIMIT/OFFSET of the gold cuts through tied rows, has no ORDER BY and drops rows,
        sits in a correlated subquery, or cannot be checked, or (`ordered`) the gold's ORDER BY leaves
        two returned rows tied; False otherwise.
    """
    try:
        tree = sqlglot.parse_one(gold, read=dialect)
    except SqlglotError:
        return True
    for node in tree.find_all(exp.Select, exp.SetOperation):
        limited = node.args.get("limit") is not None or node.args.get("offset") is not None
        inside = ordered and node is tree and bool(node.args.get("order"))
        if (limited or inside) and _cuts_a_tie(node, dialect, run, inside):
            return True  # (a correlated subquery fails on its own: also True)
    return False


# -- the columns the gold's output comes from ------------------------------------------------------
def _base_columns(scope: Scope, column: exp.Column, seen: int = 0) -> set[tuple[str, str]]:
    """(table, column) of the database behind `column` of `scope`, through derived tables and CTEs."""
    source = scope.sources.get(column.table)
    if isinstance(source, exp.Table):
        return {(source.name, column.name)}
    if not isinstance(source, Scope) or seen > 32:
        return set()
    out: set[tuple[str, str]] = set()
    for branch in _branches(source):
        for projection in _selects(branch):
            if projection.alias_or_name == column.name:
                for inner in projection.find_all(exp.Column):
                    out |= _base_columns(branch, inner, seen + 1)
    return out


def _selects(scope: Scope) -> list[Any]:
    """The projections of a SELECT scope."""
    node = scope.expression
    return list(node.selects) if isinstance(node, exp.Query) else []


def _branches(scope: Scope) -> list[Scope]:
    """The SELECT scopes of a scope: itself, or every branch of a set operation."""
    if scope.set_operation_scopes:
        return [b for child in scope.set_operation_scopes for b in _branches(child)]
    return [scope]


_OUTPUTS: dict[tuple[str, str, int], frozenset[tuple[str, str]]] = {}
_OUTPUTS_LOCK = threading.Lock()


def output_columns(gold: str, dialect: str, schema: Schema) -> frozenset[tuple[str, str]]:
    """(table, column) pairs the gold's output values come from, except those the gold compares or joins on.

    A column under a comparison anywhere in the gold (WHERE, HAVING, ON, CASE WHEN, IN) is left out:
    shifting it would change which rows the gold selects, not what it reports. Empty when sqlglot
    cannot qualify the gold with the schema.
    """
    key = (gold, dialect, id(schema))
    with _OUTPUTS_LOCK:
        if key in _OUTPUTS:
            return _OUTPUTS[key]
    try:
        tree = sqlglot.parse_one(gold, read=dialect)
        mapping: dict[str, object] = {t: {c: "TEXT" for c in cols} for t, cols in schema.tables.items()}
        root = build_scope(qualify(tree, schema=mapping, dialect=dialect, validate_qualify_columns=False,
                                   quote_identifiers=False))
    except (SqlglotError, ValueError, KeyError, TypeError, RecursionError):
        root = None
    found: set[tuple[str, str]] = set()
    compared: set[tuple[str, str]] = set()
    if root is not None:
        for branch in _branches(root):
            for projection in _selects(branch):
                for column in projection.find_all(exp.Column):
                    if column.find_ancestor(exp.Select) is branch.expression:  # not inside a subquery
                        found |= _base_columns(branch, column)
        for scope in root.traverse():
            for column in scope.columns:
                if column.find_ancestor(exp.Predicate) is not None:
                    compared |= _base_columns(scope, column)
    result = frozenset(found - compared)
    with _OUTPUTS_LOCK:
        if len(_OUTPUTS) >= _CACHE_SIZE:
            _OUTPUTS.clear()
        _OUTPUTS[key] = result
    return result


# -- the copies, the gold on them, and the prediction ----------------------------------------------
def variants_for(ref: SQLReference, max_bytes: int, deadline: float) -> tuple[list[Variant], list[str]]:
    """The perturbed copies of `ref.db` for its gold: the row copies, and the value copy when it has columns.

    Returns:
        (copies, reasons): the reasons say which copies are missing and why.
    """
    variants: list[Variant] = []
    reasons: list[str] = []
    try:
        variants += row_variants(ref.db, ref.dialect, max_bytes=max_bytes, deadline=deadline)
        columns = output_columns(ref.gold, ref.dialect, read_schema(ref.db, ref.dialect))
        shifted = value_variant(ref.db, ref.dialect, columns, max_bytes=max_bytes, deadline=deadline) \
            if columns else None
        if shifted is not None:
            variants.append(shifted)
    except PerturbError as exc:
        reasons.append(str(exc))
    return variants, reasons


_TIES: dict[tuple[str, str, bool], bool] = {}
_TIES_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Copy:
    variant: Variant
    gold: Execution
    changed: bool


def _gold_on_copies(ref: SQLReference, variants: Sequence[Variant], gold_rows: Sequence[tuple[Any, ...]],
                    rules: EquivalenceRules, ordered: bool, gold_on: Run, limits: Limits,
                    deadline: float, skipped: dict[str, list[str]]) -> list[_Copy]:
    """The determined copies (the gold's result there, whether it changed), those whose gold changed first.

    `skipped` gathers the other copies' names by reason.
    """
    copies: list[_Copy] = []
    for variant in variants:
        left = deadline - time.monotonic()
        if left < MIN_QUERY_S:
            skipped.setdefault("no time left", []).append(variant.name)
            continue
        bounded = dataclasses.replace(limits, timeout_s=min(limits.timeout_s, left))
        gold = gold_on(variant.db, ref.gold, bounded)
        if not gold.ok:
            skipped.setdefault(f"the gold: {gold.kind}", []).append(variant.name)
            continue
        key = (variant.db, ref.gold, ordered)
        with _TIES_LOCK:
            tied = False if variant.keeps_order else _TIES.get(key)
        if tied is None:
            def on_copy(sql: str, db: str = variant.db, lim: Limits = bounded) -> Execution:
                return gold_on(db, sql, lim)

            tied = tie_dependent(ref.gold, ref.dialect, on_copy, ordered)
            with _TIES_LOCK:
                if len(_TIES) >= _CACHE_SIZE:
                    _TIES.clear()
                _TIES[key] = tied
        if tied:
            skipped.setdefault("the gold's rows tie where its LIMIT or order counts", []).append(variant.name)
            continue
        changed = not check_equivalence(nothing_found(gold_rows), nothing_found(gold.rows), rules, ordered).equal
        copies.append(_Copy(variant, gold, changed))
    copies.sort(key=lambda c: not c.changed)
    return copies


def check_suite(ref: SQLReference, pred_sql: str, gold_rows: Sequence[tuple[Any, ...]], rules: EquivalenceRules,
                ordered: bool, limits: Limits, deadline: float, run: Run, gold_on: Run,
                max_bytes: int) -> SuiteResult:
    """Compare prediction and gold on the perturbed copies of `ref.db` (module docstring for the outcomes).

    Args:
        ref: the task's reference.
        pred_sql: the prediction, whose rows equal the gold's on `ref.db`.
        gold_rows: the gold's rows on `ref.db`.
        rules: the equivalence rules (as on `ref.db`).
        ordered: whether row order counts (as on `ref.db`).
        limits: per-query limits (`timeout_s` is lowered to the time left).
        deadline: `time.monotonic()` value by which the item must be done.
        run: runs the prediction.
        gold_on: runs the gold, or a query derived from it, on a copy (cached by the caller).
        max_bytes: a larger database file is not copied.
    """
    variants, reasons = variants_for(ref, max_bytes, deadline)
    if not variants:
        return SuiteResult("unchecked", f"no perturbed copy ({'; '.join(reasons) or 'none built'})")
    skipped: dict[str, list[str]] = {}
    copies = _gold_on_copies(ref, variants, gold_rows, rules, ordered, gold_on, limits, deadline, skipped)
    checked = changed = 0
    for copy in copies:
        left = deadline - time.monotonic()
        if left < MIN_QUERY_S:
            skipped.setdefault("no time left", []).append(copy.variant.name)
            break
        full = left >= limits.timeout_s
        pred = run(copy.variant.db, pred_sql, dataclasses.replace(limits, timeout_s=min(limits.timeout_s, left)))
        where = f"on the perturbed copy {copy.variant.how}"
        if pred.kind == "timeout":
            if full:
                return SuiteResult("timeout", f"the prediction timed out {where}: {pred.message}")
            skipped.setdefault("no time left", []).append(copy.variant.name)
            break
        if pred.kind == "unavailable":
            skipped.setdefault(pred.message[:120], []).append(copy.variant.name)
            continue
        if not pred.ok:
            return SuiteResult("fail", f"the prediction failed ({pred.kind}) {where}: {pred.message}")
        result = check_equivalence(nothing_found(copy.gold.rows), nothing_found(pred.rows), rules, ordered)
        if not result.equal:
            how = "the gold's result changed there, the prediction's rows are not the new ones" if copy.changed \
                else result.how
            return SuiteResult("fail", f"the rows equal the gold's on the task's database but not {where} ({how}: "
                                       f"gold {_preview(copy.gold.rows)}, prediction {_preview(pred.rows)})")
        checked += 1
        changed += copy.changed
    note = "".join(f"; skipped {', '.join(names)} ({why})" for why, names in skipped.items())
    if not changed:
        if any(c.changed for c in copies):
            why = "no time left for the perturbed copies where the gold's result changed"
        elif copies:
            why = "the gold's result is the same on every perturbed copy"
        else:
            why = "no perturbed copy where the gold's result is determined"
        return SuiteResult("unchecked", f"{why}{note}")
    return SuiteResult("pass", f"also on {checked} perturbed copies ({changed} where the gold's result changed){note}")


def nothing_found(rows: Sequence[tuple[Any, ...]]) -> Sequence[tuple[Any, ...]]:
    """`rows`, or no rows for one row of NULLs: how results compare on the copies (module docstring)."""
    return [] if len(rows) == 1 and all(v is None for v in rows[0]) else rows


def _preview(rows: Sequence[tuple[Any, ...]], limit: int = 3) -> str:
    shown = ", ".join(repr(tuple(r))[:60] for r in rows[:limit])
    return f"{len(rows)} row(s){': ' + shown if shown else ''}{' ...' if len(rows) > limit else ''}"
