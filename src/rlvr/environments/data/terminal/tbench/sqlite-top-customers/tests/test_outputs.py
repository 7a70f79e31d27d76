"""Grader for sqlite-top-customers: run the agent's query on the shipped data and on other data."""

import csv
import os
import sqlite3
from pathlib import Path

import pytest

TESTS = Path(os.environ.get("TEST_DIR", "/tests"))
QUERY = Path("/app/queries/top_customers.sql")


def _db(seed):
    conn = sqlite3.connect(":memory:")
    conn.executescript((TESTS / seed).read_text())
    return conn


def _reference(conn):
    """Top 5 computed in Python from the raw rows."""
    names = dict(conn.execute("SELECT id, name FROM customers"))
    ok = {
        oid: cid
        for oid, cid, date, status in conn.execute("SELECT id, customer_id, order_date, status FROM orders")
        if date.startswith("2023-") and status in ("shipped", "delivered")
    }
    revenue = {}
    for oid, qty, price in conn.execute("SELECT order_id, quantity, unit_price FROM order_items"):
        if oid in ok:
            revenue[ok[oid]] = revenue.get(ok[oid], 0.0) + qty * price
    ranked = sorted(((cid, round(r, 2)) for cid, r in revenue.items()), key=lambda cr: (-cr[1], cr[0]))
    return [(cid, names[cid], rev) for cid, rev in ranked[:5]]


def _run_query(conn):
    assert QUERY.is_file(), "missing /app/queries/top_customers.sql"
    cur = conn.execute(QUERY.read_text())
    assert [d[0] for d in cur.description] == ["customer_id", "name", "revenue"]
    return cur.fetchall()


def _same(rows, expected):
    assert len(rows) == len(expected) == 5
    for got, want in zip(rows, expected, strict=True):
        assert int(got[0]) == want[0] and got[1] == want[1], f"{got} != {want}"
        assert float(got[2]) == pytest.approx(want[2], abs=0.001), f"{got} != {want}"


def test_query_on_shop_db():
    conn = _db("shop.sql")
    _same(_run_query(conn), _reference(conn))


def test_query_on_other_data():
    conn = _db("other_shop.sql")
    _same(_run_query(conn), _reference(conn))


def test_csv_report():
    path = Path("/app/reports/top_customers.csv")
    assert path.is_file(), "missing /app/reports/top_customers.csv"
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["customer_id", "name", "revenue"]
    _same(rows[1:], _reference(_db("shop.sql")))
