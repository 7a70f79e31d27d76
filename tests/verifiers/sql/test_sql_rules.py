"""Comparison rules, extraction and classification, on results and queries with known answers."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlhelp import make_shop_db

from rlvr.core.errors import ConfigError
from rlvr.verifiers.registry import get_verifier
from rlvr.verifiers.sql import EquivalenceRules, SQLConfig, SQLReference, SQLVerifier
from rlvr.verifiers.sql.equivalence import canonical, check_equivalence
from rlvr.verifiers.sql.extract import classify, extract_sql, normalize_sql

DEFAULT = EquivalenceRules()
FENCE = "`" * 3


@pytest.fixture
def verifier() -> SQLVerifier:
    return SQLVerifier(scoring="inline", query_timeout_s=1.0, timeout_s=5.0)


def _ref(db: Path, gold: str = "SELECT id, name FROM t") -> dict:
    return {"gold": gold, "db": str(db)}


def _eq(gold, pred, ordered=False, **rules):
    return check_equivalence(gold, pred, EquivalenceRules(**rules), ordered).equal


@pytest.mark.parametrize(("gold", "pred", "ordered", "rules", "equal"), [
    ([(1,), (2,)], [(2,), (1,)], False, {}, True),
    ([(1,), (2,)], [(2,), (1,)], True, {}, False),
    ([(1,), (1,), (2,)], [(1,), (2,)], False, {}, False),  # multiset counts duplicates
    ([(1,), (1,), (2,)], [(1,), (2,)], False, {"duplicates": "set"}, True),
    ([(1,), (2,), (1,)], [(1,), (2,)], True, {"duplicates": "set"}, True),
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], False, {}, True),  # column permutation (test-suite)
    ([(1, "a"), (2, "b")], [("a", 1), ("b", 2)], False, {"columns": "strict"}, False),
    ([(1, 2), (3, 4)], [(2, 1), (3, 4)], False, {}, False),  # swapping values in one row is not a permutation
    ([(1,)], [(1.0,)], False, {}, True),
    ([(1,)], [(1.0,)], False, {"coerce": "strict"}, False),
    ([(1,)], [("1",)], False, {}, False),
    ([(1,)], [("1",)], False, {"coerce": "loose"}, True),
    ([(1.5,)], [(" 1.50",)], False, {"coerce": "loose"}, True),
    ([(Decimal("2.50"),)], [(2.5,)], False, {}, True),
    ([(10 / 3,)], [(3.333333333333333,)], False, {}, True),
    ([(10 / 3,)], [(3.3333,)], False, {}, False),
    ([(0.1 + 0.2,)], [(0.3,)], False, {"float_digits": None}, False),
    ([(None,)], [(None,)], False, {}, True),
    ([(None,)], [(None,)], False, {"nulls": "never_match"}, False),
    ([(None,)], [("",)], False, {}, False),
    ([(True,)], [(1,)], False, {}, True),
    ([], [], False, {}, True),
    ([(1,)], [], False, {}, False),
    ([(1, 2)], [(1,)], False, {}, False),
])
def test_compare_rules(gold, pred, ordered, rules, equal):
    assert _eq(gold, pred, ordered, **rules) is equal


def test_order_follows_the_gold_top_level_order_by(shop_db):
    v = SQLVerifier(scoring="inline")
    ref = {"gold": "SELECT id FROM t WHERE id < 5 ORDER BY id DESC", "db": str(shop_db)}
    assert v.verify("SELECT id FROM t WHERE id < 5 ORDER BY id", ref).status == "incorrect"
    unordered = {"gold": "SELECT id FROM t WHERE id IN (SELECT id FROM t ORDER BY id DESC LIMIT 4)", "db": str(shop_db)}
    # the same four ids in another order (an equivalent query: it must also match on the perturbed copies)
    assert v.verify("SELECT id FROM t ORDER BY id DESC LIMIT 4", unordered).status == "correct"
    always = {**ref, "rules": {"order": "always"}, "gold": "SELECT id FROM t WHERE id < 5"}
    assert v.verify("SELECT id FROM t WHERE id < 5 ORDER BY id DESC", always).status == "incorrect"


@given(st.lists(st.tuples(st.integers(-5, 5), st.text(max_size=3), st.none() | st.floats(allow_nan=False)),
                max_size=12), st.randoms())
@settings(max_examples=60, deadline=None)
def test_property_result_equals_itself_and_its_shuffle(rows, rng):
    shuffled = list(rows)
    rng.shuffle(shuffled)
    assert check_equivalence(rows, rows, DEFAULT, ordered=True).equal
    assert check_equivalence(rows, shuffled, DEFAULT, ordered=False).equal


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(), st.decimals()))
def test_property_canonical_is_hashable_and_stable(value):
    for rules in (DEFAULT, EquivalenceRules(coerce="strict"), EquivalenceRules(coerce="loose", float_digits=None)):
        first = canonical(value, rules)
        hash(first)
        if value is not None:
            assert first == canonical(value, rules)


@pytest.mark.parametrize(("response", "sql", "source"), [
    ("```sql\nSELECT a FROM t;\n```", "SELECT a FROM t", "fence"),
    ("first ```sql\nSELECT 1\n``` then ```SQL\nSELECT 2\n```", "SELECT 2", "fence"),
    ("```\nSELECT 3\n```", "SELECT 3", "fence"),
    ("<solution>SELECT b FROM t</solution>", "SELECT b FROM t", "tag"),
    ("<answer>The query is SELECT b FROM t WHERE y = 'a'.</answer>", "SELECT b FROM t WHERE y = 'a'", "tag"),
    ("<solution>DROP TABLE t</solution>", "DROP TABLE t", "tag"),
    ("```sql\nSELECT 1\n```\n<answer>\n```sql\nSELECT 2\n```\n</answer>", "SELECT 2", "tag"),
    ("So the query is SELECT name FROM t WHERE x = 1; which returns names.", "SELECT name FROM t WHERE x = 1",
     "statement"),
    ("Answer: SELECT a FROM t UNION SELECT b FROM u\n\nDone.", "SELECT a FROM t UNION SELECT b FROM u", "statement"),
    ("WITH c AS (SELECT 1 AS x) SELECT x FROM c", "WITH c AS (SELECT 1 AS x) SELECT x FROM c", "statement"),
    ("DROP TABLE t", "DROP TABLE t", "statement"),
])
def test_extraction(response, sql, source):
    found = extract_sql(response)
    assert found is not None
    assert (found.sql, found.source) == (sql, source)


@pytest.mark.parametrize("response", ["", "I don't know.", "The table has 3 rows.", "<solution></solution>"])
def test_no_query_is_no_answer(response, shop_db):
    assert extract_sql(response) is None
    verdict = SQLVerifier(scoring="inline").verify(response, {"gold": "SELECT 1", "db": str(shop_db)})
    assert verdict.status == "no_answer" and verdict.reward == 0.0


@pytest.mark.parametrize(("sql", "ok", "fragment"), [
    ("SELECT a FROM t ORDER BY a", True, ""),
    ("(SELECT a FROM t)", True, ""),
    ("SELECT a FROM t UNION SELECT b FROM u", True, ""),
    ("SELECT 1; DROP TABLE t", False, "2 statements"),
    ("DELETE FROM t", False, "DELETE"),
    ("PRAGMA writable_schema = 1", False, "PRAGMA"),
    ("ATTACH DATABASE 'x.db' AS x", False, "ATTACH"),
    ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", False, "DELETE"),
])
def test_classify(sql, ok, fragment):
    dialect = "postgres" if "RETURNING" in sql else "sqlite"
    result = classify(sql, dialect)
    assert result.ok is ok
    assert fragment in result.reason


def test_classify_ordered_and_normalized():
    assert classify("SELECT a FROM t ORDER BY a").ordered is True
    assert classify("SELECT a FROM (SELECT a FROM t ORDER BY a)").ordered is False
    assert normalize_sql("select   A from T ;") == normalize_sql("SELECT a FROM t")
    assert classify("SELECT a FROM t", normalize=True).normalized == "SELECT a FROM t"


def test_postgres_into_and_for_update_are_writes():
    assert not classify("SELECT * INTO copy FROM t", "postgres").ok
    assert not classify("SELECT * FROM t FOR UPDATE", "postgres").ok


def test_config_and_reference_validation(tmp_path):
    with pytest.raises(ValueError, match="query_timeout_s"):
        SQLConfig(timeout_s=5, query_timeout_s=5)
    with pytest.raises(ValueError, match="unknown equivalence rule"):
        SQLReference(gold="SELECT 1", db="x.sqlite", rules={"ordr": "always"})
    with pytest.raises(ValueError):
        SQLReference(gold="SELECT 1", db="x.sqlite", rules={"order": "sometimes"})
    assert SQLReference(gold="SELECT 1", db="postgresql://u@localhost/db").dialect == "postgres"
    assert SQLReference(gold="SELECT 1", db="duckdb:///x.duckdb").dialect == "duckdb"
    verdict = SQLVerifier(scoring="inline").verify("SELECT 1", {"gold": "SELECT 1"})
    assert verdict.status == "error" and "db" in verdict.detail
    with pytest.raises(ConfigError, match="unknown option"):
        get_verifier("sql", ordr="always")
    assert get_verifier("sql", order="always").config.order == "always"


def test_reference_as_json_string(shop_db):
    ref = json.dumps({"gold": "SELECT count(*) FROM t", "db": str(shop_db)})
    assert SQLVerifier(scoring="inline").verify("SELECT count(id) FROM t", ref).status == "correct"


def test_cli_verify_jsonl(shop_db, tmp_path):
    """`rlvr verify --verifier sql` on a JSONL of predictions with custom field names."""
    ref = {"gold": "SELECT name FROM t WHERE id <= 3 ORDER BY id", "db": str(shop_db)}
    rows = [
        {"completion": "```sql\nSELECT name FROM t WHERE id < 4 ORDER BY id\n```", "sql_ref": ref, "want": "correct"},
        {"completion": "```sql\nSELECT name FROM t WHERE id < 4 ORDER BY id DESC\n```", "sql_ref": ref,
         "want": "incorrect"},
        {"completion": "```sql\nDROP TABLE t\n```", "sql_ref": ref, "want": "incorrect"},
        {"completion": "no idea", "sql_ref": ref, "want": "no_answer"},
        {"completion": "SELECT 1", "sql_ref": {**ref, "gold": "SELECT x FROM nowhere"}, "want": "error"},
    ]
    data = tmp_path / "preds.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "verdicts.jsonl"
    cli = Path(sys.executable).parent / "rlvr"
    proc = subprocess.run([str(cli), "verify", "--verifier", "sql", str(data), "-o", str(out), "--response-key",
                           "completion", "--reference-key", "sql_ref", "--expected-key", "want",
                           "--verifier-arg", "query_timeout_s=2", "--verifier-arg", "timeout_s=6"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["verdict"]["status"] for r in results] == [r["want"] for r in rows]
    assert results[-1]["verdict"]["reward"] is None


@pytest.fixture(scope="module")
def small_ref(tmp_path_factory) -> dict:
    db = make_shop_db(tmp_path_factory.mktemp("prop") / "shop.sqlite", rows=50)
    return {"gold": "SELECT id, name FROM t WHERE id <= 5", "db": str(db)}


ODD = ["SELECT", "```sql\n```", "<solution>;</solution>", "WITH x AS", "SELECT * FROM t; SELECT 1",
       "SELECT ' FROM t", "```sql\nSELECT (\n```"]


@given(text=st.text(max_size=300) | st.sampled_from(ODD))
@settings(max_examples=80, deadline=None)
def test_property_arbitrary_text_never_raises(small_ref, text):
    verdict = SQLVerifier(scoring="inline", query_timeout_s=1.0, timeout_s=5.0).verify(text, small_ref)
    assert verdict.status in ("incorrect", "no_answer", "timeout")
    assert verdict.reward == 0.0


def test_unparsable_gold_is_an_error_unless_order_is_given(shop_db):
    v = SQLVerifier(scoring="inline")
    gold = "SELECT id FROM t WHERE id < 3 GLOB"  # sqlglot cannot parse it, SQLite cannot run it either
    assert v.verify("SELECT 1", {"gold": gold, "db": str(shop_db)}).status == "error"
    odd = "SELECT id FROM t WHERE id < 3 AND name REGEXP_LIKE_NOT_SQL"
    verdict = v.verify("SELECT 1", {"gold": odd, "db": str(shop_db), "rules": {"order": "never"}})
    assert verdict.status == "error" and "gold query failed" in verdict.detail


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
