"""Helpers of the SQL verifier tests: a generated SQLite database and the shared real databases."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "sql"
BIRD_DBS = ("superhero", "student_club", "toxicology")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_shop_db(path: Path, rows: int = 1000) -> Path:
    """A small shop database the tests own: `t` has `rows` rows (ids 1..rows), `empty` none."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, price REAL, category TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)",
                         [(i, f"item{i}", i * 1.5, "abc"[i % 3]) for i in range(1, rows + 1)])
        conn.execute("CREATE TABLE empty (id INTEGER)")
    conn.close()
    return path


def make_store_db(path: Path) -> Path:
    """A store the tests own, with a declared foreign key, dates, NULLs and a tie:

    `customer` (8 rows: id, name, country, joined ISO date, note NULL for half), `orders` (20 rows: id,
    customer_id -> customer.id, day ISO date, amount). Scores: the top amount (990.5, order 20) is unique,
    the next two (500.0) tie.
    """
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, country TEXT, "
                     "joined TEXT, note TEXT)")
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES "
                     "customer(id), day TEXT, amount REAL)")
        countries = ["BR", "US", "DE", "US", "FR", "BR", "US", "JP"]
        conn.executemany("INSERT INTO customer VALUES (?, ?, ?, ?, ?)",
                         [(i, f"c{i}", countries[i - 1], f"2023-0{i}-1{i}", None if i % 2 else f"vip{i}")
                          for i in range(1, 9)])
        amounts = [10.0 * i for i in range(1, 18)] + [500.0, 500.0, 990.5]
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)",
                         [(i, 1 + (i * 3) % 8, f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", amounts[i - 1])
                          for i in range(1, 21)])
    conn.close()
    return path


def bird_rows(data: Path, db_id: str) -> list[dict]:
    rows = json.loads((data / "bird" / f"mini_dev_{db_id}.json").read_text())
    return [r for r in rows if r["db_id"] == db_id]


def spider_golds(data: Path) -> list[str]:
    lines = (data / "spider" / "department_store" / "train_gold_department_store.sql").read_text().splitlines()
    return [line.split("\t")[0] for line in lines if line.strip()]
