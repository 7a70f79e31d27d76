"""A query stops at its limit even when all its time is spent inside one SQLite function call.

SQLite's progress handler runs between virtual-machine instructions, so one `instr` on megabyte
strings or blobs (issue 20: 8.7 s with `timeout_s=1`) never reaches it (`LIKE`/`GLOB`, `replace`,
`group_concat` and `hex(randomblob())` stay fast under the length cap: measured, not listed).
`execute` reports such late rows as `timeout`;
`execute_bounded` (the `execute_sql` tool, inline verification) returns at the limit because the
query runs in a worker process that is killed there.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rlvr.verifiers.sql import SQLVerifier
from rlvr.verifiers.sql.execute import BOUND_GRACE_S, Limits, execute, execute_bounded

SQL_DATA = Path("/work/shared/data/sql/bird")

SLOW_SINGLE_CALLS = {
    "instr": "SELECT instr(printf('%.*c', 4000000, 'a'), printf('%.*c', 100000, 'a') || 'b')",
    "instr_zeroblob": "SELECT instr(zeroblob(4000000), zeroblob(100000) || x'01')",
    "instr_of_replace_hex": ("SELECT instr(replace(hex(zeroblob(2000000)), '0', 'a'), "
                             "replace(hex(zeroblob(50000)), '0', 'a') || 'b')"),
    "instr_in_a_where_clause": ("WITH t(s) AS (SELECT printf('%.*c', 4000000, 'a')) SELECT count(*) FROM t "
                                "WHERE instr(s, substr(s, 1, 100000) || 'b') > 0"),
}
LIMIT_S = 0.5


@pytest.mark.parametrize("name", sorted(SLOW_SINGLE_CALLS))
def test_bounded_execution_returns_at_the_limit(shop_db, name):
    assert execute_bounded(str(shop_db), "SELECT 1").kind == "ok"  # a warm worker: time the query, not a start
    start = time.monotonic()
    outcome = execute_bounded(str(shop_db), SLOW_SINGLE_CALLS[name], limits=Limits(timeout_s=LIMIT_S))
    elapsed = time.monotonic() - start
    assert outcome.kind in ("timeout", "error"), outcome
    assert outcome.kind == "timeout" or "too big" in outcome.message, outcome
    assert elapsed < LIMIT_S + BOUND_GRACE_S + 1.5, elapsed  # slack for a loaded 2-core machine


def test_late_rows_of_an_unbounded_call_are_a_timeout(shop_db):
    """In-process `execute` (inside the verifier's own pool) never returns late rows as `ok`."""
    sql = "SELECT instr(printf('%.*c', 1000000, 'a'), printf('%.*c', 30000, 'a') || 'b')"
    outcome = execute(str(shop_db), sql, limits=Limits(timeout_s=0.05))
    assert outcome.kind == "timeout", outcome


def test_bounded_execution_still_answers_normal_queries(shop_db):
    first = execute_bounded(str(shop_db), "SELECT 1 + 1")
    assert first.kind == "ok" and first.rows == [(2,)]
    # after a killed worker the next query gets a fresh one
    execute_bounded(str(shop_db), SLOW_SINGLE_CALLS["instr"], limits=Limits(timeout_s=0.2))
    again = execute_bounded(str(shop_db), "SELECT 2 * 21")
    assert again.kind == "ok" and again.rows == [(42,)]


def test_inline_verifier_prediction_stops_at_its_limit(shop_db):
    verifier = SQLVerifier(scoring="inline", query_timeout_s=0.5, timeout_s=2.0)
    ref = {"gold": "SELECT 1", "db": str(shop_db)}
    assert verifier.verify("```sql\nSELECT 1\n```", ref).status == "correct"
    start = time.monotonic()
    verdict = verifier.verify(f"```sql\n{SLOW_SINGLE_CALLS['instr']}\n```", ref)
    assert verdict.status == "timeout" and time.monotonic() - start < 0.5 + BOUND_GRACE_S + 1.5, verdict


def test_interactive_tool_answers_within_its_limit():
    questions = SQL_DATA / "mini_dev_superhero.json"
    if not questions.is_file():
        pytest.skip(f"shared data {questions} is absent")
    from rlvr.environments.sql import make_text2sql_interactive

    env = make_text2sql_interactive(str(questions), db_dir=str(SQL_DATA), limit=1, scoring="inline",
                                    tool_timeout_s=1.0)
    env.reset_sync(env.tasks[0])
    env.step_sync("<sql>SELECT 1</sql>")
    start = time.monotonic()
    step = env.step_sync(f"<sql>{SLOW_SINGLE_CALLS['instr']}</sql>")
    assert "Error: timeout" in step.messages[-1].content
    assert time.monotonic() - start < 1.0 + BOUND_GRACE_S + 1.5
