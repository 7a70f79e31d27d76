"""`score_sql`: the pure scoring function run inside verifier worker processes.

Pipeline: read the reference -> extract the predicted query -> classify and run the gold ->
classify and run the prediction (each query on its own read-only connection) -> compare the rows
under the equivalence rules.

Outcomes:

| situation | status | reward |
|---|---|---|
| the gold is not one read-only query, fails, times out or is too large | `error` | None |
| the gold returns no rows and `empty_gold='error'` | `error` | None |
| no query in the response | `no_answer` | `no_answer_reward` |
| the prediction is rejected (two statements, a write) or fails | `incorrect` + DB message | `incorrect_reward` |
| the prediction runs past `query_timeout_s` | `timeout` | `timeout_reward` |
| the database is unavailable for the prediction (the server ended its connection twice) | `error` | None |
| the rows match, but the prediction reads no table and the gold does | `incorrect` | `incorrect_reward` |
| the rows match, but not on a perturbed copy of the database (`test_suite`) | `incorrect` | `incorrect_reward` |
| the rows match; the prediction runs past `query_timeout_s` on a perturbed copy | `timeout` | `timeout_reward` |
| the rows match, here and on the perturbed copies or no copy could tell | `correct` | `correct_reward` |

The perturbed copies (`rlvr.verifiers.sql.suite`: test-suite accuracy) decide only for a
prediction that matches on the task's database; `detail` says how many were checked, or why none
could tell (then the task's database alone decides).

Both failing is an `error` (the gold runs first), never "both failed = correct". An empty gold
result is always flagged in `detail`.

Gold results are cached per worker process (keyed by database file, its size and mtime, and
the normalised gold SQL), because a training batch scores many samples of one task; so are its
results on the perturbed copies, which are built once per database file.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from typing import Any

from pydantic import ValidationError

from rlvr.core.types import Verdict
from rlvr.verifiers.sql.config import EquivalenceRules, SQLConfig, SQLReference
from rlvr.verifiers.sql.equivalence import check_equivalence
from rlvr.verifiers.sql.execute import Execution, Limits, duckdb_path, execute, execute_bounded, sqlite_path
from rlvr.verifiers.sql.extract import Extracted, classify, extract_sql
from rlvr.verifiers.sql.suite import check_suite

__all__ = ["as_reference"]

GOLD_CACHE_SIZE = 4096
"""Gold results kept per worker process (least recently used dropped first). A task uses one entry for its
database and about six for the perturbed copies (its result there, the tie checks)."""
GOLD_CACHE_ROWS = 1_000_000
"""Rows kept in all the cached gold results of a process at most (least recently used dropped first)."""


class _GoldCache:
    """Gold results by key; beyond `GOLD_CACHE_SIZE` entries or `GOLD_CACHE_ROWS` rows the least recently used go.

    Thread-safe: inline verifiers may score from several threads (`averify`).
    """

    def __init__(self) -> None:
        self._items: collections.OrderedDict[tuple[Any, ...], Execution] = collections.OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Execution | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[Any, ...], outcome: Execution) -> None:
        if len(outcome.rows) > _CACHE_MAX_ROWS:
            return
        with self._lock:
            previous = self._items.pop(key, None)
            self._rows += len(outcome.rows) - (len(previous.rows) if previous is not None else 0)
            self._items[key] = outcome
            while len(self._items) > GOLD_CACHE_SIZE or self._rows > GOLD_CACHE_ROWS:
                self._rows -= len(self._items.popitem(last=False)[1].rows)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._rows = 0


_CACHE_MAX_ROWS = 10_000
_GOLD_CACHE = _GoldCache()
_DEADLINE_MARGIN_S = 1.0
"""The perturbed copies stop this long (at most a tenth of `timeout_s`) before the item's hard limit, seconds."""


def as_reference(reference: Any) -> SQLReference:
    """Read a reference given as `SQLReference`, a dict, or a JSON string of one.

    Raises:
        ValueError: it is none of these, or a field is missing/invalid (the message names it).
    """
    if isinstance(reference, SQLReference):
        return reference
    if isinstance(reference, str):
        return SQLReference.model_validate_json(reference)
    if isinstance(reference, dict):
        return SQLReference.model_validate(reference)
    raise ValueError(f"an SQL reference must be an object with 'gold' and 'db', got {type(reference).__name__}")


def _file_key(ref: SQLReference) -> tuple[Any, ...] | None:
    """Identity of a file database (path, size, mtime), or None for a server (never cached)."""
    if ref.dialect == "postgres":
        return None
    path = str(sqlite_path(ref.db)) if ref.dialect == "sqlite" else duckdb_path(ref.db)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (ref.dialect, os.path.abspath(path), st.st_size, st.st_mtime_ns)


def _runner(config: SQLConfig) -> Any:
    """`execute` inside the verifier's worker pool (its own hard timeout); a killable worker when inline."""
    return execute_bounded if config.scoring == "inline" else execute


def _run_gold(ref: SQLReference, normalized: str | None, limits: Limits, run: Any = execute,
              run_limits: Limits | None = None) -> Execution:
    """The gold's rows on `ref.db`, cached by file, gold and `limits`; run under `run_limits` (default `limits`)."""
    file_key = _file_key(ref)
    key = None if file_key is None else (*file_key, normalized or ref.gold, limits)
    cached = None if key is None else _GOLD_CACHE.get(key)
    if cached is not None:
        return cached
    outcome: Execution = run(ref.db, ref.gold, ref.dialect, run_limits or limits)
    if key is not None and outcome.ok:
        _GOLD_CACHE.put(key, outcome)
    return outcome


def _verdict(config: SQLConfig, status: str, detail: str, start: float, extracted: str | None) -> Verdict:
    rewards = {"correct": config.correct_reward, "incorrect": config.incorrect_reward,
               "no_answer": config.no_answer_reward, "timeout": config.timeout_reward}
    if status == "error":
        return Verdict.error(f"sql verifier: {detail}", elapsed_s=time.perf_counter() - start, extracted=extracted)
    return Verdict(status=status, reward=rewards[status],  # type: ignore[arg-type]
                   components={"correct": 1.0 if status == "correct" else 0.0},
                   extracted=extracted, detail=detail, elapsed_s=time.perf_counter() - start)


def _gold_outcome(config: SQLConfig, ref: SQLReference, rules: EquivalenceRules) -> tuple[Execution | None, bool, str]:
    """Run the gold: (its rows or None, whether row order is significant, the reason when None)."""
    gold_class = classify(ref.gold, ref.dialect, normalize=True)
    # A gold sqlglot cannot parse still runs on SQLite when the order rule does not need the parse.
    if not gold_class.ok and (gold_class.parsed or ref.dialect != "sqlite" or rules.order == "gold"):
        hint = "" if gold_class.parsed else "; to score it anyway on SQLite, set the order rule to 'always' or 'never'"
        return None, False, f"the gold SQL is not usable: {gold_class.reason}{hint}"
    limits = Limits(config.query_timeout_s, config.max_rows, config.max_bytes)
    gold = _run_gold(ref, gold_class.normalized, limits, _runner(config))
    if not gold.ok:
        return None, False, f"the gold query failed ({gold.kind}): {gold.message}"
    if not gold.rows and config.empty_gold == "error":
        return None, False, "gold result is empty (0 rows); masked (empty_gold='error')"
    ordered = rules.order == "always" or (rules.order == "gold" and bool(gold_class.ordered))
    return gold, ordered, ""


def score_sql(config: SQLConfig, response: Any, reference: Any) -> Verdict:
    """Score one response against one SQL reference (see the module docstring for outcomes).

    The gold runs first, so a broken gold is an `error` whatever the response (even with no query).

    Args:
        config: the verifier configuration.
        response: free-form model output; its last `max_response_chars` characters are read.
        reference: an `SQLReference`, or its dict / JSON form.

    Returns:
        A Verdict; `components={"correct": 1.0 | 0.0}` unless it is an error.
    """
    start = time.perf_counter()
    deadline = time.monotonic() + config.timeout_s - min(_DEADLINE_MARGIN_S, 0.1 * config.timeout_s)
    try:
        ref = as_reference(reference)
        rules = config.rules(ref.rules)
    except (ValidationError, ValueError) as exc:
        return _verdict(config, "error", f"bad reference ({exc}); give {{'gold': SQL, 'db': PATH_OR_URL}}",
                        start, None)
    if not isinstance(response, str):
        return _verdict(config, "error", f"the response must be a string, got {type(response).__name__}", start, None)
    found = extract_sql(response[-config.max_response_chars:], ref.dialect)
    extracted = found.sql if found else None
    gold, ordered, problem = _gold_outcome(config, ref, rules)
    if gold is None:
        return _verdict(config, "error", problem, start, extracted)
    flag = "" if gold.rows else "gold result is empty (0 rows); "
    if found is None:
        return _verdict(config, "no_answer", f"{flag}no SQL query found (no <solution>/<answer> tag, ```sql block "
                                             "or SELECT/WITH statement)", start, None)
    pred_class = classify(found.sql, ref.dialect)
    # An SQL text sqlglot cannot parse still goes to SQLite, whose own parser, single-statement
    # rule and authorizer decide; other dialects get only what sqlglot accepted.
    if not pred_class.ok and (pred_class.parsed or ref.dialect != "sqlite"):
        return _verdict(config, "incorrect", f"{flag}prediction rejected: {pred_class.reason}", start, found.sql)
    limits = Limits(config.query_timeout_s, config.max_rows, config.max_bytes)
    pred: Execution = _runner(config)(ref.db, found.sql, ref.dialect, limits)
    if pred.kind == "timeout":
        return _verdict(config, "timeout", f"{flag}prediction timed out: {pred.message}", start, found.sql)
    if pred.kind == "unavailable":  # the database went away (a killed connection): says nothing of the query
        return _verdict(config, "error", f"the prediction could not run: {pred.message}", start, found.sql)
    if not pred.ok:
        return _verdict(config, "incorrect", f"{flag}prediction failed ({pred.kind}): {pred.message}", start,
                        found.sql)
    if flag and config.empty_gold == "incorrect":
        return _verdict(config, "incorrect", f"{flag}no prediction counts (empty_gold='incorrect')", start, found.sql)
    result = check_equivalence(gold.rows, pred.rows, rules, ordered)
    if not result.equal:
        return _verdict(config, "incorrect", f"{flag}{found.source} query: {result.how}", start, found.sql)
    if pred_class.reads_table is False and classify(ref.gold, ref.dialect, normalize=True).reads_table:
        # constants (`SELECT 2`, a CTE of literals) only copy the gold's rows on this one database (red team)
        return _verdict(config, "incorrect", f"{flag}the prediction reads no table of the database (its rows are "
                                             "constants); the gold does", start, found.sql)
    status, suite = _on_copies(config, ref, found, gold, rules, ordered, deadline)
    return _verdict(config, status, f"{flag}{found.source} query: {result.how}; {suite}", start, found.sql)


def _on_copies(config: SQLConfig, ref: SQLReference, found: Extracted, gold: Execution, rules: EquivalenceRules,
               ordered: bool, deadline: float) -> tuple[str, str]:
    """The verdict's status and detail from the perturbed copies (`rlvr.verifiers.sql.suite`)."""
    if not config.test_suite:
        return "correct", "the task's database alone decides (test_suite=False)"
    limits = Limits(config.query_timeout_s, config.max_rows, config.max_bytes)
    runner = _runner(config)

    def run(db: str, sql: str, bounded: Limits) -> Execution:
        outcome: Execution = runner(db, sql, ref.dialect, bounded)
        return outcome

    def gold_on(db: str, sql: str, bounded: Limits) -> Execution:
        return _run_gold(ref.model_copy(update={"db": db, "gold": sql}), None, limits, runner, bounded)

    outcome = check_suite(ref, found.sql, gold.rows, rules, ordered, limits, deadline, run, gold_on,
                          config.suite_max_bytes)
    if outcome.status == "fail":
        return "incorrect", outcome.detail
    if outcome.status == "timeout":
        return "timeout", outcome.detail
    if outcome.status == "unchecked":
        return "correct", f"checked on the task's database only: {outcome.detail}"
    return "correct", outcome.detail
