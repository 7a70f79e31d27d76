"""Regression tests from the review of the SQL verifier: each one failed (or hung) before its fix.

Plus the write paths the adversarial catalog did not list yet (they already failed safely).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from sqlhelp import make_shop_db, sha256

from rlvr.environments.sql import make_text2sql_interactive
from rlvr.environments.sql_data import format_cell
from rlvr.verifiers.sql import EquivalenceRules, SQLVerifier
from rlvr.verifiers.sql.equivalence import canonical, check_equivalence
from rlvr.verifiers.sql.extract import classify, extract_sql

FENCE = "`" * 3


@pytest.fixture
def verifier() -> SQLVerifier:
    return SQLVerifier(scoring="inline", query_timeout_s=1.0, timeout_s=5.0)


def _ref(db: Path, gold: str = "SELECT id, name FROM t") -> dict:
    return {"gold": gold, "db": str(db)}


# -- extraction: a comment after the final `;`, CRLF and one-line fences, inline code ----------------
@pytest.mark.parametrize("response", [
    f"{FENCE}sql\nSELECT id, name FROM t; -- every item\n{FENCE}",
    f"{FENCE}sql\nSELECT id, name FROM t;\n-- returns every item\n{FENCE}",
    f"{FENCE}sql\nSELECT id, name FROM t;\n/* done */\n{FENCE}",
    "<answer>SELECT id, name FROM t; -- every item</answer>",
    "SELECT id, name FROM t; -- every item",
    f"{FENCE}sql\r\nSELECT id, name\r\nFROM t\r\n{FENCE}",
    f"{FENCE}sql SELECT id, name FROM t{FENCE}",
    "The query is `SELECT id, name FROM t`.",
])
def test_query_markup_variants_are_read(verifier, shop_db, response):
    found = extract_sql(response)
    assert found is not None and found.sql.replace("\r\n", " ").replace("\n", " ") == "SELECT id, name FROM t", found
    assert verifier.verify(response, _ref(shop_db)).status == "correct"


def test_comment_only_statement_is_not_a_second_statement(verifier, shop_db):
    assert classify("SELECT 1; -- done").ok
    assert not classify("SELECT 1; -- done\nDROP TABLE t").ok
    # a gold with a trailing comment runs instead of being "2 statements" (an error verdict)
    verdict = verifier.verify("SELECT id, name FROM t", _ref(shop_db, "SELECT id, name FROM t; -- all"))
    assert verdict.status == "correct", verdict


# -- comparison: integral floats, wide results, look-alike columns ---------------------------------
def test_integral_float_equals_its_int_at_any_magnitude():
    rules = EquivalenceRules()
    for n in (1, 10**8, 123456789012, 10**15):
        assert canonical(float(n), rules) == canonical(n, rules), n
    assert canonical(123456789011.99998, rules) == canonical(123456789012, rules)  # float sum noise
    assert canonical(123456789012.0, rules) != canonical(123456789000, rules)  # no longer rounded together
    assert canonical(1 / 3, rules) == canonical(0.333333333, rules)  # small floats: significant digits as before


def test_very_wide_permuted_result():
    gold = [tuple(range(2000))]
    pred = [tuple(reversed(range(2000)))]
    assert check_equivalence(gold, pred, EquivalenceRules(), ordered=False).equal


def test_look_alike_columns_neither_hang_nor_miss_the_permutation():
    rules = EquivalenceRules()
    # 12 identical columns and one that matches nothing: a 12! search before the fix
    gold = [("abc"[i % 3],) * 12 + (i,) for i in range(300)]
    pred = [(*row[:-1], row[-1] + 1) for row in gold]
    assert not check_equivalence(gold, pred, rules, ordered=False).equal
    # one row, many equal values, one differing column
    assert not check_equivalence([(0,) * 15 + (1,)], [(0,) * 15 + (2,)], rules, ordered=False).equal
    # 12 distinct columns holding the same multiset of values, shuffled: found by the pair checks
    gold = [(*tuple(r * k % 13 for k in range(1, 13)), r) for r in range(26)]
    perm = list(range(13))
    random.Random(0).shuffle(perm)
    shuffled = [tuple(row[j] for j in perm) for row in gold]
    assert check_equivalence(gold, shuffled, rules, ordered=False).equal
    assert check_equivalence(gold, shuffled, rules, ordered=True).equal
    broken = [(*row[:-1], row[-1] + 100) for row in gold]
    assert not check_equivalence(gold, broken, rules, ordered=False).equal


# -- references: database URLs ------------------------------------------------------------------
@pytest.mark.parametrize(("db", "fragment"), [
    ("mysql://user@host/db", "unsupported database URL scheme 'mysql'"),
    ("file:/tmp/x.sqlite", "unsupported database URL scheme 'file'"),
])
def test_unknown_database_scheme_is_an_error_naming_it(verifier, db, fragment):
    verdict = verifier.verify("SELECT 1", {"gold": "SELECT 1", "db": db})
    assert verdict.status == "error" and verdict.reward is None
    assert fragment in verdict.detail


def test_directory_as_database_says_so(verifier, tmp_path):
    verdict = verifier.verify("SELECT 1", {"gold": "SELECT 1", "db": str(tmp_path)})
    assert verdict.status == "error" and verdict.reward is None and "is not a file" in verdict.detail


# -- write paths not in the adversarial catalog ---------------------------------------------------
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


# -- interactive environment ---------------------------------------------------------------------
@pytest.fixture
def shop_env(tmp_path):
    db = make_shop_db(tmp_path / "shop.sqlite", rows=20)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "Ids and names?", "query": "SELECT id, name FROM t"}) + "\n")
    return make_text2sql_interactive(str(questions), db=str(db), scoring="inline", max_turns=2, format_weight=0.1)


def test_query_on_the_last_turn_earns_no_format_bonus(shop_env):
    shop_env.reset_sync(shop_env.tasks[0])
    first = shop_env.step_sync("<sql>SELECT 1</sql>")
    assert first.info["components"]["format"] == 1.0
    last = shop_env.step_sync("<sql>SELECT 2</sql>")
    assert last.truncated and last.info["components"]["format"] == 0.0
    assert last.verdict.status == "no_answer" and last.verdict.reward == pytest.approx(0.1)


def test_tool_accepts_a_trailing_comment_and_keeps_rows_on_one_line(shop_env):
    shop_env.reset_sync(shop_env.tasks[0])
    step = shop_env.step_sync("<sql>SELECT 'a' || char(10) || 'b' AS v; -- two lines</sql>")
    assert step.info["components"]["tool_errors"] == 0.0
    assert "1 row\nv\na\\nb\n" in step.messages[-1].content
    assert format_cell("x\r\ny") == "x\\r\\ny"
