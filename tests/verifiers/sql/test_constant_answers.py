"""Answers copied as constants are wrong; right queries stay right on every perturbed copy (issue 31 item 1).

A model with the `execute_sql` tool can look the gold's rows up, then hard-code them behind a token
read of a table (`SELECT 5 FROM t LIMIT 1` for `SELECT count(*) FROM t`). On the task's database the
rows are equal; on a perturbed copy where the gold's result changes (half the rows deleted, the output
columns' values shifted: `rlvr.verifiers.sql.suite`) they are not. The second table holds right
queries written another way, including the cases a test suite can get wrong (ties under a LIMIT,
empty results, NULLs, joins that rely on a foreign key): they must stay `correct`.

Decisions recorded here: a key lookup that replaces the *computation* (`WHERE id = 20` for "the
largest order") is a copied answer and is `incorrect`; a key lookup that names the *entity* the
question names (`WHERE id = 3` for the customer named c3) is a right answer (deleting rows never
changes which row a key names). A gold that no copy changes (an empty count, a constant) cannot tell
a computed answer from a copied one: the verdict comes from the task's database alone and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlhelp import make_shop_db, make_store_db

from rlvr.verifiers.sql import SQLVerifier

COUNT = "SELECT COUNT(*) FROM t WHERE price > 1497"  # 2 rows: ids 999 and 1000
NAMES = "SELECT name FROM t WHERE price > 1497"
FIVE = "SELECT count(*) FROM t"  # the case, on a table of 5 rows
TOP = "SELECT customer_id FROM orders ORDER BY amount DESC LIMIT 1"  # order 20 (990.5) of customer 5


@pytest.fixture(scope="module")
def verifier():
    with SQLVerifier(query_timeout_s=2) as v:
        yield v


@pytest.fixture(scope="module")
def dbs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("constants")
    return {"shop": make_shop_db(root / "shop.sqlite"), "five": make_shop_db(root / "five.sqlite", rows=5),
            "store": make_store_db(root / "store.sqlite")}


def _verify(verifier, db: Path, gold: str, pred: str):
    return verifier.verify(f"<solution>{pred}</solution>", {"gold": gold, "db": str(db)})


# (id, database, gold, prediction): each prediction copies the gold's rows on the task's database
COPIED = [
    ("issue-31-token-read", "five", FIVE, "SELECT 5 FROM t LIMIT 1"),
    ("where-true", "five", FIVE, "SELECT 5 FROM t WHERE 1 LIMIT 1"),
    ("count-minus-count", "five", FIVE, "SELECT count(*) - count(*) + 5 FROM t"),
    ("scalar-max", "five", FIVE, "SELECT max(5, min(id)) FROM t"),
    ("case-when", "five", FIVE, "SELECT CASE WHEN count(*) > 0 THEN 5 ELSE 0 END FROM t"),
    ("case-on-the-count", "five", FIVE, "SELECT CASE WHEN count(*) = 5 THEN 5 ELSE 0 END FROM t"),
    ("constant-union", "five", FIVE, "SELECT 5 FROM t UNION SELECT 5 FROM t"),
    ("subquery-constant", "five", FIVE, "SELECT (SELECT 5) FROM t LIMIT 1"),
    ("no-table", "five", FIVE, "SELECT (SELECT 5)"),
    ("cte-constant-joined", "five", FIVE, "WITH c AS (SELECT 5 AS n) SELECT n FROM c, t LIMIT 1"),
    ("no-table-count", "shop", COUNT, "SELECT 2"),
    ("no-table-union", "shop", COUNT, "SELECT 2 UNION SELECT 2"),
    ("no-table-derived", "shop", COUNT, "SELECT * FROM (SELECT 2)"),
    ("cte-shadowing-the-table", "shop", COUNT, "WITH t AS (SELECT 2 AS n) SELECT n FROM t"),
    ("schema-catalog", "shop", COUNT, "SELECT 2 FROM sqlite_master LIMIT 1"),
    ("no-table-names", "shop", NAMES, "SELECT 'item999' UNION ALL SELECT 'item1000'"),
    ("positional-lookup", "shop", NAMES, "SELECT name FROM t ORDER BY id DESC LIMIT 2"),
    ("string-for-a-name", "store", "SELECT name FROM customer WHERE country = 'JP'",
     "SELECT 'c8' FROM customer LIMIT 1"),
    ("value-behind-a-real-filter", "store", "SELECT amount FROM orders WHERE id = 7",
     "SELECT 70.0 FROM orders WHERE id = 7"),
    ("date-behind-a-real-filter", "store", "SELECT joined FROM customer WHERE name = 'c3'",
     "SELECT '2023-03-13' FROM customer WHERE name = 'c3'"),
    ("latest-date", "store", "SELECT max(day) FROM orders", "SELECT '2024-12-12' FROM orders LIMIT 1"),
    ("order-by-limit-gold", "store", TOP, "SELECT 5 FROM orders LIMIT 1"),
    ("key-found-with-the-tool", "store", "SELECT id FROM orders WHERE amount = (SELECT max(amount) FROM orders)",
     "SELECT id FROM orders WHERE id = 20"),
    ("keys-found-with-the-tool", "store", "SELECT id FROM orders ORDER BY amount DESC LIMIT 3",
     "SELECT id FROM orders WHERE id IN (20, 18, 19) ORDER BY amount DESC"),
    ("max-of-a-filter", "store", "SELECT max(amount) FROM orders WHERE customer_id = 3",
     "SELECT 140.0 FROM orders WHERE customer_id = 3 LIMIT 1"),
    ("average", "store", "SELECT avg(amount) FROM orders", "SELECT 176.025 FROM orders LIMIT 1"),
    ("group-by-as-values", "store", "SELECT country, count(*) FROM customer GROUP BY country",
     "SELECT * FROM (VALUES ('BR', 2), ('DE', 1), ('FR', 1), ('JP', 1), ('US', 3)) "
     "WHERE EXISTS (SELECT 1 FROM customer)"),
    ("distinct-count", "store", "SELECT count(DISTINCT country) FROM customer", "SELECT 5 FROM customer LIMIT 1"),
    ("join-count", "store", "SELECT count(*) FROM orders o JOIN customer c ON c.id = o.customer_id "
     "WHERE c.country = 'US'", "SELECT 9 FROM orders LIMIT 1"),
]


@pytest.mark.parametrize(("db", "gold", "pred"), [c[1:] for c in COPIED], ids=[c[0] for c in COPIED])
def test_copied_answers_are_incorrect(verifier, dbs, db, gold, pred):
    verdict = _verify(verifier, dbs[db], gold, pred)
    assert verdict.status == "incorrect", verdict.detail
    assert verdict.reward == 0.0


# (id, database, gold, prediction): right queries written another way
RIGHT = [
    ("count-of-a-column", "five", FIVE, "SELECT count(id) FROM t"),
    ("bound-another-way", "shop", COUNT, "SELECT COUNT(*) FROM t WHERE price >= 1498.5"),
    ("through-a-cte", "shop", COUNT, "WITH x AS (SELECT * FROM t) SELECT COUNT(*) FROM x WHERE price > 1497"),
    ("schema-qualified", "shop", COUNT, "SELECT COUNT(*) FROM main.t WHERE price > 1497"),
    ("by-key-range", "shop", NAMES, "SELECT name FROM t WHERE id > 998"),  # price = 1.5 * id on every copy
    ("constant-gold", "shop", "SELECT 1 + 1", "SELECT 2"),
    ("group-by-ordinal", "store", "SELECT country, count(*) FROM customer GROUP BY country",
     "SELECT country, count(name) FROM customer GROUP BY 1 ORDER BY 2 DESC"),
    ("join-as-subqueries", "store",
     "SELECT c.name, count(*) FROM orders o JOIN customer c ON c.id = o.customer_id GROUP BY c.name",
     "SELECT name, (SELECT count(*) FROM orders WHERE customer_id = customer.id) FROM customer "
     "WHERE id IN (SELECT customer_id FROM orders)"),
    ("join-count-as-in", "store", "SELECT count(*) FROM orders o JOIN customer c ON c.id = o.customer_id "
     "WHERE c.country = 'US'", "SELECT count(*) FROM orders WHERE customer_id IN "
     "(SELECT id FROM customer WHERE country = 'US')"),
    ("distinct-as-group-by", "store", "SELECT DISTINCT country FROM customer",
     "SELECT country FROM customer GROUP BY country"),
    ("max-as-order-by-limit", "store", "SELECT max(amount) FROM orders",
     "SELECT amount FROM orders ORDER BY amount DESC LIMIT 1"),
    ("max-of-a-filter-as-order-by-limit", "store", "SELECT max(amount) FROM orders WHERE customer_id = 3",
     "SELECT amount FROM orders WHERE customer_id = 3 ORDER BY amount DESC LIMIT 1"),  # a copy drops c3's orders
    ("average-as-division", "store", "SELECT avg(amount) FROM orders",
     "SELECT sum(amount) / count(amount) FROM orders"),
    ("tie-broken-another-way", "store", TOP,
     "SELECT customer_id FROM orders ORDER BY amount DESC, customer_id LIMIT 1"),
    ("empty-result", "store", "SELECT name FROM customer WHERE country = 'XX'",
     "SELECT name FROM customer WHERE country = 'XX' AND id > 0"),
    ("nulls-counted", "store", "SELECT count(*) FROM customer WHERE note IS NULL",
     "SELECT count(*) - count(note) FROM customer"),
    ("nulls-returned", "store", "SELECT name, note FROM customer WHERE country = 'US'",
     "SELECT name, CASE WHEN note IS NULL THEN NULL ELSE note END FROM customer WHERE country IN ('US')"),
    ("latest-date-by-order", "store", "SELECT max(day) FROM orders",
     "SELECT day FROM orders ORDER BY day DESC LIMIT 1"),
    ("entity-key-lookup", "store", "SELECT joined FROM customer WHERE name = 'c3'",
     "SELECT joined FROM customer WHERE id = 3"),
    ("function-of-the-output", "store", "SELECT upper(name) FROM customer WHERE country = 'JP'",
     "SELECT upper(name) FROM customer WHERE country LIKE 'jp'"),
    ("date-part", "store", "SELECT count(*) FROM orders WHERE day LIKE '2024-03-%'",
     "SELECT count(*) FROM orders WHERE strftime('%m', day) = '03'"),
]


@pytest.mark.parametrize(("db", "gold", "pred"), [c[1:] for c in RIGHT], ids=[c[0] for c in RIGHT])
def test_right_queries_stay_correct_on_every_copy(verifier, dbs, db, gold, pred):
    verdict = _verify(verifier, dbs[db], gold, pred)
    assert verdict.status == "correct", verdict.detail


def test_a_gold_no_copy_changes_is_decided_here_and_says_so(verifier, dbs):
    """The limit of the check: a count that is 0 on every copy cannot tell a computed 0 from a copied one."""
    gold = "SELECT count(*) FROM orders WHERE amount > 5000"
    copied = _verify(verifier, dbs["store"], gold, "SELECT 0 FROM orders LIMIT 1")
    assert copied.status == "correct"
    assert "checked on the task's database only: the gold's result is the same on every perturbed copy" \
        in copied.detail


def test_the_detail_names_the_copy_and_both_results(verifier, dbs):
    verdict = _verify(verifier, dbs["five"], FIVE, "SELECT 5 FROM t LIMIT 1")
    assert "not on the perturbed copy rows-" in verdict.detail
    assert "the gold's result changed there, the prediction's rows are not the new ones" in verdict.detail
    right = _verify(verifier, dbs["five"], FIVE, "SELECT count(*) FROM t")
    assert "also on 5 perturbed copies" in right.detail or "also on 4 perturbed copies" in right.detail


def test_test_suite_off_restores_the_single_database_verdict(dbs):
    with SQLVerifier(query_timeout_s=2, test_suite=False, scoring="inline") as verifier:
        verdict = _verify(verifier, dbs["five"], FIVE, "SELECT 5 FROM t LIMIT 1")
        assert verdict.status == "correct" and "test_suite=False" in verdict.detail
        assert _verify(verifier, dbs["five"], FIVE, "SELECT (SELECT 5)").status == "incorrect"  # reads no table


def test_a_database_over_the_size_cap_is_checked_here_only(dbs):
    with SQLVerifier(query_timeout_s=2, suite_max_bytes=1024, scoring="inline") as verifier:
        verdict = _verify(verifier, dbs["five"], FIVE, "SELECT 5 FROM t LIMIT 1")
        assert verdict.status == "correct"
        assert "checked on the task's database only: no perturbed copy" in verdict.detail
        assert "over the 1024" in verdict.detail
