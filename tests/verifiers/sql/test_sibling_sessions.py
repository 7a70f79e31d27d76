"""One sample's query cannot act on the sessions of the others, and a killed connection is never a 0.

Issue 20: on PostgreSQL a role may end its own role's connections, so `SELECT pg_terminate_backend(pid)
FROM pg_stat_activity WHERE usename = current_user` made four correct queries graded at the same
time score `incorrect` 0.0 (AdminShutdown). Such queries (and their kin: cancelling backends,
advisory locks, notifications, reading other sessions, settings, server files, functions that run
a query given as text) are refused by the parser; a connection the server ends anyway is retried
once and then an `error` verdict (reward None).
"""

from __future__ import annotations

import threading
import time

import pytest
from test_sql_servers import postgres_url  # noqa: F401 - the real server fixture

from rlvr.verifiers.sql import SQLVerifier
from rlvr.verifiers.sql.execute import Limits, execute
from rlvr.verifiers.sql.extract import classify

ATTACKS = {
    "terminate_own_role": "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = current_user",
    "terminate_qualified": "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity",
    "terminate_quoted_case": 'SELECT "pg_terminate_backend"(1), PG_TERMINATE_BACKEND(2)',
    "cancel": "SELECT id FROM superhero WHERE pg_cancel_backend(id) OR id < 3",
    "advisory_lock": "SELECT id FROM superhero WHERE pg_advisory_lock(1) IS NULL OR id < 3",
    "advisory_try_xact": "SELECT pg_try_advisory_xact_lock(42)",
    "advisory_unlock_all": "SELECT pg_advisory_unlock_all()",
    "notify": "SELECT pg_notify('rlvr', 'hello')",
    "read_other_sessions": "SELECT query FROM pg_stat_activity",
    "locks_view": "SELECT * FROM pg_locks",
    "blocking_pids": "SELECT pg_blocking_pids(1)",
    "text_query_xml": "SELECT query_to_xml('SELECT pg_terminate_backend(1)', true, true, '')",
    "text_query_ts_stat": "SELECT * FROM ts_stat('SELECT to_tsvector(superhero_name) FROM superhero')",
    "set_config": "SELECT set_config('statement_timeout', '0', false)",
    "read_server_file": "SELECT pg_read_file('/etc/passwd')",
    "large_object_import": "SELECT lo_import('/etc/passwd')",
    "in_a_cte": "WITH k AS (SELECT pg_terminate_backend(pid) FROM pg_stat_activity) SELECT 1 FROM k",
    "in_a_subquery": "SELECT id FROM superhero WHERE id IN (SELECT pg_backend_pid() WHERE pg_cancel_backend(1))",
}
CONTROLS = ["SELECT id FROM superhero WHERE id < 3", "SELECT pg_backend_pid() > 0", "SELECT count(*) FROM superhero",
            "SELECT current_user, version() IS NOT NULL"]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_parser_refuses_what_reaches_other_sessions(name):
    verdict = classify(ATTACKS[name], "postgres")
    assert not verdict.ok and verdict.parsed and "other sessions" in verdict.reason, verdict


@pytest.mark.parametrize("sql", CONTROLS)
def test_plain_queries_stay_allowed(sql):
    assert classify(sql, "postgres").ok


@pytest.mark.extras
def test_terminating_siblings_while_four_correct_queries_are_graded(postgres_url):  # noqa: F811
    gold = "SELECT id, superhero_name FROM superhero WHERE id < 50 ORDER BY id"
    ref = {"gold": gold, "db": postgres_url}
    verifier = SQLVerifier(query_timeout_s=5.0, timeout_s=12.0, workers=5)  # five worker processes at once
    slow_correct = f"```sql\n{gold.replace('WHERE', 'WHERE (SELECT pg_sleep(3)::text) = $$$$ AND')}\n```"
    attack = f"```sql\n{ATTACKS['terminate_own_role']} AND pid <> pg_backend_pid()\n```"
    try:
        verifier.verify_batch([("```sql\nSELECT 1\n```", ref)] * 5, workers=5)  # start the five workers
        *verdicts, hacked = verifier.verify_batch([(slow_correct, ref)] * 4 + [(attack, ref)], workers=5)
    finally:
        verifier.close()
    assert [v.status for v in verdicts] == ["correct"] * 4, [v.detail for v in verdicts]
    assert hacked.status == "incorrect" and "pg_terminate_backend" in hacked.detail, hacked


def _terminate_reader_sessions(admin_url: str, stop: threading.Event, once: bool) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        while not stop.is_set():
            ended = conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                 "WHERE usename = 'rlvr_reader' AND state = 'active'").fetchone()[0]
            if ended and once:
                return
            time.sleep(0.02)


@pytest.mark.extras
def test_a_connection_killed_once_is_retried(postgres_url):  # noqa: F811
    stop = threading.Event()
    killer = threading.Thread(target=_terminate_reader_sessions,
                              args=(postgres_url.replace("rlvr_reader@", "postgres@"), stop, True))
    killer.start()
    try:
        outcome = execute(postgres_url, "SELECT 7 FROM (SELECT pg_sleep(0.5)) s", "postgres", Limits(timeout_s=5))
    finally:
        stop.set()
        killer.join()
    assert outcome.kind == "ok" and outcome.rows == [(7,)], outcome


@pytest.mark.extras
def test_a_connection_killed_every_time_is_an_error_not_a_zero(postgres_url):  # noqa: F811
    stop = threading.Event()
    killer = threading.Thread(target=_terminate_reader_sessions,
                              args=(postgres_url.replace("rlvr_reader@", "postgres@"), stop, False))
    gold = "SELECT 1 AS one"
    verifier = SQLVerifier(scoring="inline", query_timeout_s=3.0, timeout_s=10.0)
    ref = {"gold": gold, "db": postgres_url}
    assert verifier.verify(f"```sql\n{gold}\n```", ref).status == "correct"
    killer.start()
    try:
        verdict = verifier.verify("```sql\nSELECT 1 AS one FROM (SELECT pg_sleep(0.5)) s\n```", ref)
    finally:
        stop.set()
        killer.join()
    assert verdict.status == "error" and verdict.reward is None, verdict
