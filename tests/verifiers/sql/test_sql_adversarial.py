"""The adversarial catalog: queries that scored 1 or damaged the database under other evaluators.

Each runs against a writable SQLite file the test owns, and the file's sha256 must be unchanged.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sqlhelp import make_shop_db, sha256

from rlvr.verifiers.sql import SQLVerifier
from rlvr.verifiers.sql.execute import Limits, execute

FENCE = "`" * 3


@pytest.fixture
def verifier() -> SQLVerifier:
    return SQLVerifier(scoring="inline", query_timeout_s=1.0, timeout_s=5.0)


def _ref(db: Path, gold: str = "SELECT id, name FROM t", **compare: str) -> dict:
    return {"gold": gold, "db": str(db), "rules": compare}


def _count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM t").fetchone()[0]


@pytest.mark.parametrize("attack", [
    "DELETE FROM t",
    "DROP TABLE t",
    "UPDATE t SET name = 'x'",
    "INSERT INTO t (id) VALUES (100000)",
    "CREATE TABLE pwned (x)",
    "ALTER TABLE t RENAME TO t2",
    "SELECT 1; DROP TABLE t",
    "SELECT id, name FROM t; DELETE FROM t",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA writable_schema = ON",
    "VACUUM",
    "REINDEX",
    "ANALYZE",
    "BEGIN IMMEDIATE",
])
def test_writes_are_incorrect_and_file_unchanged(verifier, shop_db, attack):
    before = sha256(shop_db)
    verdict = verifier.verify(f"```sql\n{attack}\n```", _ref(shop_db))
    assert verdict.status == "incorrect", verdict
    assert verdict.reward == 0.0
    # the gold still sees every row afterwards, and the bytes on disk are the same
    assert verifier.verify("SELECT id, name FROM t", _ref(shop_db)).status == "correct"
    assert _count(shop_db) == 1000
    assert sha256(shop_db) == before


@pytest.mark.parametrize("attack", [
    "DELETE FROM t",
    "DROP TABLE t",
    "CREATE TEMP TABLE x AS SELECT 1",
    "ATTACH DATABASE '{tmp}/x.db' AS x",
    "PRAGMA user_version = 7",
    "SELECT load_extension('/nonexistent/lib')",
    "SELECT 1; DROP TABLE t",
    "WITH d AS (SELECT 1) DELETE FROM t",
    "INSERT INTO t (id) SELECT id + 5000 FROM t",
])
def test_engine_refuses_writes_without_the_parser(shop_db, tmp_path, attack):
    """Below sqlglot: the read-only connection and authorizer refuse on their own."""
    before = sha256(shop_db)
    outcome = execute(str(shop_db), attack.format(tmp=tmp_path), "sqlite", Limits(timeout_s=2.0))
    assert outcome.kind == "error", outcome
    assert not (tmp_path / "x.db").exists()
    assert sha256(shop_db) == before


def test_delete_before_gold(verifier, shop_db):
    """A prediction `DELETE FROM t` must not empty the table the gold then reads."""
    before = sha256(shop_db)
    verdict = verifier.verify("DELETE FROM t", _ref(shop_db, "SELECT count(*) FROM t"))
    assert verdict.status == "incorrect"
    assert verifier.verify("SELECT count(*) FROM t", _ref(shop_db, "SELECT count(*) FROM t")).status == "correct"
    assert sha256(shop_db) == before


def test_attach_creates_no_file(verifier, shop_db, tmp_path):
    target = tmp_path / "x.db"
    verdict = verifier.verify(f"```sql\nATTACH DATABASE '{target}' AS x\n```", _ref(shop_db))
    assert verdict.status == "incorrect"
    assert "ATTACH" in verdict.detail
    assert not target.exists()


def test_multiple_statements_rejected(verifier, shop_db):
    verdict = verifier.verify("```sql\nSELECT id, name FROM t; DROP TABLE t\n```", _ref(shop_db))
    assert verdict.status == "incorrect"
    assert "2 statements" in verdict.detail
    # a single trailing semicolon is one statement
    assert verifier.verify("```sql\nSELECT id, name FROM t;\n```", _ref(shop_db)).status == "correct"


def test_recursive_cte_never_terminating_times_out(verifier, shop_db):
    query = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    verdict = verifier.verify(f"```sql\n{query}\n```", _ref(shop_db))
    assert verdict.status == "timeout"
    assert verdict.reward == 0.0
    assert "timed out" in verdict.detail


def test_cross_join_of_a_billion_rows(verifier, shop_db):
    counted = verifier.verify("SELECT count(*) FROM t a, t b, t c", _ref(shop_db))  # 10^9 rows to count
    assert counted.status == "timeout"
    listed = verifier.verify("SELECT a.id, b.name FROM t a, t b, t c", _ref(shop_db))  # 10^9 rows to return
    assert listed.status in ("incorrect", "timeout")
    if listed.status == "incorrect":
        assert "max_rows" in listed.detail


def test_hundred_megabyte_string_is_capped(shop_db):
    """SQLite refuses to build the string (SQLITE_LIMIT_LENGTH): no 100 MB value, in a real worker."""
    with SQLVerifier(query_timeout_s=2.0, timeout_s=10.0, memory_limit_mb=512) as verifier:
        for query in ("SELECT replace(hex(zeroblob(50000000)), '0', 'x')", "SELECT zeroblob(100000000)",
                      "SELECT hex(randomblob(50000000))"):
            verdict = verifier.verify(f"```sql\n{query}\n```", _ref(shop_db))
            assert verdict.status == "incorrect", verdict
            assert "too big" in verdict.detail
        # printf stops at the length limit too (NULL result), or runs into the query time limit
        verdict = verifier.verify("```sql\nSELECT printf('%.*c', 100000000, 'x')\n```", _ref(shop_db))
        assert verdict.status in ("incorrect", "timeout"), verdict


def test_many_rows_of_big_strings_hit_the_byte_cap(shop_db):
    verifier = SQLVerifier(scoring="inline", max_bytes=1_000_000)
    verdict = verifier.verify("SELECT printf('%.*c', 100000, 'x') FROM t", _ref(shop_db))
    assert verdict.status == "incorrect"
    assert "max_bytes" in verdict.detail


def test_gold_and_prediction_both_failing_is_an_error(verifier, shop_db):
    verdict = verifier.verify("SELECT nope FROM missing", _ref(shop_db, "SELECT nope FROM missing"))
    assert verdict.status == "error"
    assert verdict.reward is None
    assert "gold query failed" in verdict.detail


def test_gold_failing_alone_is_an_error(verifier, shop_db):
    verdict = verifier.verify("SELECT id FROM t", _ref(shop_db, "SELECT id FROM no_such_table"))
    assert verdict.status == "error" and verdict.reward is None
    assert "no such table" in verdict.detail


def test_gold_that_writes_is_an_error(verifier, shop_db):
    verdict = verifier.verify("SELECT id FROM t", _ref(shop_db, "DELETE FROM t"))
    assert verdict.status == "error" and verdict.reward is None
    assert _count(shop_db) == 1000


def test_prediction_error_carries_the_db_message(verifier, shop_db):
    verdict = verifier.verify("SELECT nope FROM t", _ref(shop_db))
    assert verdict.status == "incorrect"
    assert "no such column: nope" in verdict.detail


@pytest.mark.parametrize(("policy", "status"), [("score", "correct"), ("incorrect", "incorrect"),
                                                ("error", "error")])
def test_both_empty_is_reported_and_configurable(shop_db, policy, status):
    verifier = SQLVerifier(scoring="inline", empty_gold=policy)
    verdict = verifier.verify("SELECT id FROM t WHERE id < 0", _ref(shop_db, "SELECT id FROM empty"))
    assert verdict.status == status
    assert "gold result is empty" in verdict.detail


def test_missing_database_is_an_error(verifier, tmp_path):
    verdict = verifier.verify("SELECT 1", {"gold": "SELECT 1", "db": str(tmp_path / "nope.sqlite")})
    assert verdict.status == "error"
    assert "does not exist" in verdict.detail
    assert not (tmp_path / "nope.sqlite").exists()


def test_catalog_on_a_real_database_keeps_its_checksum(writable_superhero, tmp_path):
    """The whole catalog, in worker processes, against a writable copy of a real BIRD database."""
    before = sha256(writable_superhero)
    ref = {"gold": "SELECT superhero_name FROM superhero WHERE id < 20", "db": str(writable_superhero)}
    attacks = ["DELETE FROM superhero", "DROP TABLE superhero", f"ATTACH DATABASE '{tmp_path}/x.db' AS x",
               "SELECT 1; DROP TABLE superhero", "UPDATE superhero SET superhero_name = 'x'",
               "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
               "SELECT count(*) FROM superhero a, superhero b, superhero c",
               "SELECT replace(hex(zeroblob(50000000)), '0', 'x')", "PRAGMA journal_mode = WAL"]
    with SQLVerifier(query_timeout_s=1.0, timeout_s=5.0, workers=2) as verifier:
        verdicts = verifier.verify_batch([(f"```sql\n{a}\n```", ref) for a in attacks])
        assert [v.status for v in verdicts] == ["incorrect"] * 5 + ["timeout", "timeout"] + ["incorrect"] * 2
        assert verifier.verify(verifier.reference_response(ref), ref).status == "correct"
    assert sha256(writable_superhero) == before
    assert not (tmp_path / "x.db").exists()


def test_generated_db_helper_is_deterministic(tmp_path):
    a = make_shop_db(tmp_path / "a.sqlite", rows=10)
    b = make_shop_db(tmp_path / "b.sqlite", rows=10)
    with sqlite3.connect(a) as ca, sqlite3.connect(b) as cb:
        assert ca.execute("SELECT * FROM t").fetchall() == cb.execute("SELECT * FROM t").fetchall()


def test_broken_gold_masks_even_a_response_without_query(verifier, shop_db):
    verdict = verifier.verify("I have no idea.", _ref(shop_db, "SELECT x FROM missing"))
    assert verdict.status == "error" and verdict.reward is None


@pytest.mark.parametrize("attack", [
    "REPLACE INTO t (id, name) VALUES (1, 'x')",
    "INSERT OR REPLACE INTO t (id, name) VALUES (1, 'x')",
    "INSERT INTO t (id, name) VALUES (1, 'x') ON CONFLICT(id) DO UPDATE SET name = 'y'",
    "WITH c AS (SELECT 5000 AS id) INSERT INTO t (id) SELECT id FROM c",
    "VACUUM INTO '{tmp}/copy.db'",
    "PRAGMA journal_mode = WAL",
    "SELECT * FROM pragma_journal_mode('wal')",
    "SELECT * FROM pragma_writable_schema(1)",
    "CREATE TEMP VIEW x AS SELECT 1",
    "CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
    "SELECT writefile('{tmp}/w.txt', 'x')",
    "SELECT fts3_tokenizer('simple')",
    "SAVEPOINT s",
])
def test_more_write_paths_are_incorrect_and_file_unchanged(verifier, shop_db, tmp_path, attack):
    before = sha256(shop_db)
    verdict = verifier.verify(f"{FENCE}sql\n{attack.format(tmp=tmp_path)}\n{FENCE}", _ref(shop_db))
    assert verdict.status == "incorrect" and verdict.reward == 0.0, verdict
    assert sha256(shop_db) == before
    assert sorted(os.listdir(tmp_path)) == ["shop.sqlite"]
