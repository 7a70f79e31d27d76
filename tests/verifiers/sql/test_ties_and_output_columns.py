"""What the perturbed-copy check reads from the gold: ties under its LIMIT, and its output columns.

A copy where the gold's LIMIT cuts through tied rows, or where two rows of an ordered result tie, is
skipped (a right query may break the tie another way); the value copy shifts only the columns the
gold's output comes from, never those it compares or joins on.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from sqlhelp import make_store_db

from rlvr.verifiers.sql.config import EquivalenceRules, SQLReference
from rlvr.verifiers.sql.execute import Limits, execute
from rlvr.verifiers.sql.schema import read_schema
from rlvr.verifiers.sql.suite import check_suite, output_columns, tie_dependent


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("ties") / "scores.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE s (id INTEGER PRIMARY KEY, name TEXT, score INTEGER, team TEXT)")
        conn.executemany("INSERT INTO s VALUES (?, ?, ?, ?)", [(1, "a", 10, "x"), (2, "b", 9, "y"), (3, "c", 9, "x"),
                                                                (4, "d", 7, "y"), (5, "e", 7, "y"), (6, "f", 1, "x")])
    conn.close()
    return str(path)


TIES = [
    ("unique top", "SELECT name FROM s ORDER BY score DESC LIMIT 1", False),
    ("tie at the cut", "SELECT name FROM s ORDER BY score DESC LIMIT 2", True),
    ("cut between two scores", "SELECT name FROM s ORDER BY score DESC LIMIT 3", False),
    ("tied rows with equal output", "SELECT team FROM s WHERE team = 'y' ORDER BY score DESC LIMIT 2", False),
    ("limit past the rows", "SELECT name FROM s ORDER BY score LIMIT 10", False),
    ("no order, rows dropped", "SELECT name FROM s LIMIT 2", True),
    ("no order, nothing dropped", "SELECT count(*) FROM s LIMIT 1", False),
    ("offset inside a tie", "SELECT name FROM s ORDER BY score DESC LIMIT 1 OFFSET 1", True),
    ("ordinal key", "SELECT name, score FROM s ORDER BY 2 DESC LIMIT 2", True),
    ("alias key", "SELECT name, score * 2 AS double FROM s ORDER BY double DESC LIMIT 1", False),
    ("ties broken by a second key", "SELECT name FROM s ORDER BY score DESC, name LIMIT 2", False),
    ("nested tie", "SELECT team FROM s WHERE id = (SELECT id FROM s WHERE score < 10 ORDER BY score DESC LIMIT 1)",
     True),
    ("nested unique", "SELECT team FROM s WHERE id = (SELECT id FROM s ORDER BY score DESC LIMIT 1)", False),
    ("correlated", "SELECT name FROM s AS o WHERE score = (SELECT score FROM s WHERE team = o.team ORDER BY score "
     "DESC LIMIT 1)", True),
    ("no limit", "SELECT name FROM s ORDER BY score", False),
]
# (id, gold, tied when row order is compared): ties between returned rows count too
ORDERED = [
    ("tie inside the window", "SELECT name FROM s ORDER BY score DESC LIMIT 3", True),
    ("no tie inside the window", "SELECT name FROM s ORDER BY score DESC LIMIT 1", False),
    ("ties in a whole ordered result", "SELECT name FROM s ORDER BY score", True),
    ("a total order", "SELECT name FROM s ORDER BY score, name", False),
    ("tied rows that are equal", "SELECT score FROM s ORDER BY score", False),
    ("ties inside a subquery's window do not count", "SELECT count(*) FROM (SELECT name FROM s ORDER BY score DESC "
     "LIMIT 3)", False),
]


@pytest.mark.parametrize(("gold", "tied"), [c[1:] for c in TIES], ids=[c[0] for c in TIES])
def test_tie_dependent(scores, gold, tied):
    assert tie_dependent(gold, "sqlite", lambda sql: execute(scores, sql)) is tied


@pytest.mark.parametrize(("gold", "tied"), [c[1:] for c in ORDERED], ids=[c[0] for c in ORDERED])
def test_tie_dependent_when_order_is_compared(scores, gold, tied):
    assert tie_dependent(gold, "sqlite", lambda sql: execute(scores, sql), ordered=True) is tied
    assert not tie_dependent(gold, "sqlite", lambda sql: execute(scores, sql))


COLUMNS = [
    ("projected column", "SELECT amount FROM orders WHERE id = 7", {("orders", "amount")}),
    ("filter column left out", "SELECT amount FROM orders WHERE amount > 100", set()),
    ("join through aliases", "SELECT c.country, o.day FROM orders AS o JOIN customer AS c ON c.id = o.customer_id "
     "WHERE o.id = 3", {("customer", "country"), ("orders", "day")}),
    ("aggregate of a column", "SELECT max(amount) FROM orders", {("orders", "amount")}),
    ("count of rows", "SELECT count(*) FROM orders", set()),
    ("star, less the compared id", "SELECT * FROM customer WHERE id = 2",
     {("customer", c) for c in ("name", "country", "joined", "note")}),
    ("through a cte", "WITH x AS (SELECT joined AS j FROM customer) SELECT j FROM x", {("customer", "joined")}),
    ("through a derived table", "SELECT d.a FROM (SELECT amount AS a FROM orders) AS d", {("orders", "amount")}),
    ("both sides of a union", "SELECT joined FROM customer UNION SELECT day FROM orders",
     {("customer", "joined"), ("orders", "day")}),
    ("compared in a case", "SELECT CASE WHEN country = 'US' THEN 1 ELSE 0 END FROM customer", set()),
    ("inside a scalar subquery", "SELECT (SELECT max(amount) FROM orders)", set()),
]


@pytest.mark.parametrize(("gold", "expected"), [c[1:] for c in COLUMNS], ids=[c[0] for c in COLUMNS])
def test_output_columns(tmp_path_factory, gold, expected):
    db = tmp_path_factory.getbasetemp() / "store.sqlite"
    if not db.exists():
        make_store_db(db)
    found = {(t.lower(), c.lower()) for t, c in output_columns(gold, "sqlite", read_schema(str(db), "sqlite"))}
    assert found == expected


def test_no_time_left_leaves_the_verdict_to_the_database_and_says_so(tmp_path: Path):
    db = make_store_db(tmp_path / "store.sqlite")
    ref = SQLReference(gold="SELECT count(*) FROM orders", db=str(db))
    limits = Limits(2.0)
    gold = execute(str(db), ref.gold)

    def run(database: str, sql: str, bounded: Limits) -> object:
        return execute(database, sql, "sqlite", bounded)

    built = check_suite(ref, "SELECT 20 FROM orders LIMIT 1", gold.rows, EquivalenceRules(), False, limits,
                        time.monotonic() + 30, run, run, 10**9)
    assert built.status == "fail"
    late = check_suite(ref, "SELECT 20 FROM orders LIMIT 1", gold.rows, EquivalenceRules(), False, limits,
                       time.monotonic(), run, run, 10**9)  # the copies exist, but no time is left to use them
    assert late.status == "unchecked" and "no time left" in late.detail
