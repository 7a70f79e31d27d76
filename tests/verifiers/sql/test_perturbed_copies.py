"""The perturbed copies are sound databases of the same schema: constraints kept, deterministic, bounded.

Real databases (../shared/data/sql, skipped when absent) and generated ones: every copy passes
`PRAGMA integrity_check`, creates no foreign-key violation the original did not have, keeps every
non-empty table non-empty, and a leaf table's two halves of a pair are complementary; the value copy
changes only the named non-key columns, by order-keeping shifts; two byte-identical databases give
byte-identical copies.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from sqlhelp import make_shop_db, make_store_db

from rlvr.verifiers.sql.perturb import row_variants, value_variant
from rlvr.verifiers.sql.schema import PerturbError, read_schema


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    """Copies go to this test's own temporary folder, not the shared one."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def _rows(db: str | Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _violations(db: str | Path) -> set[tuple]:
    return {(r[0], r[1], r[2]) for r in _rows(db, "PRAGMA foreign_key_check")}


def _sound(original: Path, copy: str) -> None:
    schema = read_schema(str(original), "sqlite")
    assert _rows(copy, "PRAGMA integrity_check") == [("ok",)]
    assert _violations(copy) <= _violations(original)  # no reference the original kept is broken
    for table in schema.tables:
        before = _rows(original, f'SELECT count(*) FROM "{table}"')[0][0]
        after = _rows(copy, f'SELECT count(*) FROM "{table}"')[0][0]
        assert after <= before and (after > 0 or before == 0), table
        # every remaining row is a row of the original, unchanged
        kept = set(_rows(copy, f'SELECT * FROM "{table}"'))
        assert kept <= set(_rows(original, f'SELECT * FROM "{table}"')), table


def test_row_copies_of_a_generated_store_are_sound_and_complementary(tmp_path):
    db = make_store_db(tmp_path / "store.sqlite")
    variants = row_variants(str(db), "sqlite")
    assert [v.name for v in variants] == ["rows-0a", "rows-0b", "rows-1a", "rows-1b"]
    for variant in variants:
        _sound(db, variant.db)
    # `orders` is a leaf: pair 0 (deleting up the references) splits it exactly in two
    a = set(_rows(variants[0].db, "SELECT id FROM orders"))
    b = set(_rows(variants[1].db, "SELECT id FROM orders"))
    assert not a & b and a | b == set(_rows(db, "SELECT id FROM orders"))
    # pair 1 deletes down the references: an order survives only with its customer
    for variant in variants[2:]:
        assert not _rows(variant.db, "SELECT id FROM orders WHERE customer_id NOT IN (SELECT id FROM customer)")


def test_two_identical_databases_give_identical_copies(tmp_path):
    first = make_store_db(tmp_path / "one.sqlite")
    second = tmp_path / "two.sqlite"
    shutil.copyfile(first, second)
    for x, y in zip(row_variants(str(first), "sqlite"), row_variants(str(second), "sqlite"), strict=True):
        assert x.db != y.db
        for table in ("customer", "orders"):
            query = f"SELECT * FROM {table} ORDER BY id"
            assert _rows(x.db, query) == _rows(y.db, query)


def test_copies_are_built_once_and_read_only(tmp_path):
    db = make_shop_db(tmp_path / "shop.sqlite", rows=50)
    first = row_variants(str(db), "sqlite")
    assert row_variants(str(db), "sqlite") == first
    copy = Path(first[0].db)
    assert copy.parent == tmp_path / f"rlvr-sql-suite-{os.geteuid()}"
    assert copy.stat().st_mode & 0o777 == 0o400


def test_undeclared_references_are_inferred_and_followed(tmp_path):
    db = tmp_path / "loose.sqlite"
    with sqlite3.connect(db) as conn:
        conn.executescript("""
            CREATE TABLE publisher (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE hero (id INTEGER PRIMARY KEY, name TEXT, publisher_id INTEGER, height INTEGER);
            CREATE TABLE Customers (Customer_ID INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE Visits (visit INTEGER PRIMARY KEY, Customer_ID INTEGER);
        """)
        conn.executemany("INSERT INTO publisher VALUES (?, ?)", [(i, f"p{i}") for i in range(1, 9)])
        conn.executemany("INSERT INTO hero VALUES (?, ?, ?, ?)",
                         [(i, f"h{i}", 1 + i % 8, 150 + i) for i in range(1, 41)])
        conn.executemany("INSERT INTO Customers VALUES (?, ?)", [(i, f"c{i}") for i in range(1, 9)])
        conn.executemany("INSERT INTO Visits VALUES (?, ?)", [(i, 1 + i % 8) for i in range(1, 31)])
    conn.close()
    refs = {(r.child, r.columns, r.parent, r.parent_columns) for r in read_schema(str(db), "sqlite").references}
    assert refs == {("hero", ("publisher_id",), "publisher", ("id",)),
                    ("Visits", ("Customer_ID",), "Customers", ("Customer_ID",))}
    for variant in row_variants(str(db), "sqlite"):
        assert not _rows(variant.db, "SELECT id FROM hero WHERE publisher_id NOT IN (SELECT id FROM publisher)")
        assert not _rows(variant.db, "SELECT visit FROM Visits WHERE Customer_ID NOT IN (SELECT Customer_ID "
                                     "FROM Customers)")


def test_a_name_match_whose_values_are_not_all_keys_is_no_reference(tmp_path):
    db = tmp_path / "loose.sqlite"
    with sqlite3.connect(db) as conn:
        conn.executescript("""
            CREATE TABLE publisher (id INTEGER PRIMARY KEY);
            CREATE TABLE hero (id INTEGER PRIMARY KEY, publisher_id INTEGER);
            INSERT INTO publisher VALUES (1), (2);
            INSERT INTO hero VALUES (1, 1), (2, 99);
        """)
    conn.close()
    assert read_schema(str(db), "sqlite").references == ()


def test_without_rowid_tables_and_what_they_reference_keep_all_rows(tmp_path):
    db = tmp_path / "wr.sqlite"
    with sqlite3.connect(db) as conn:
        conn.executescript("""
            CREATE TABLE kind (id INTEGER PRIMARY KEY, label TEXT);
            CREATE TABLE tag (name TEXT PRIMARY KEY, kind_id INTEGER REFERENCES kind(id)) WITHOUT ROWID;
            CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT);
        """)
        conn.executemany("INSERT INTO kind VALUES (?, ?)", [(i, f"k{i}") for i in range(1, 11)])
        conn.executemany("INSERT INTO tag VALUES (?, ?)", [(f"t{i}", 1 + i % 10) for i in range(1, 21)])
        conn.executemany("INSERT INTO note VALUES (?, ?)", [(i, f"n{i}") for i in range(1, 21)])
    conn.close()
    for variant in row_variants(str(db), "sqlite"):
        _sound(db, variant.db)
        assert _rows(variant.db, "SELECT count(*) FROM tag") == [(20,)]
        assert _rows(variant.db, "SELECT count(*) FROM kind") == [(10,)]
        assert _rows(variant.db, "SELECT count(*) FROM note")[0][0] < 20


def test_triggers_are_dropped_so_deleting_writes_nothing_else(tmp_path):
    db = make_store_db(tmp_path / "store.sqlite")
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE log (n INTEGER)")
        conn.execute("CREATE TRIGGER on_delete AFTER DELETE ON orders BEGIN INSERT INTO log VALUES (old.id); END")
    conn.close()
    for variant in row_variants(str(db), "sqlite"):
        assert _rows(variant.db, "SELECT count(*) FROM log") == [(0,)]
        assert _rows(variant.db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == [(0,)]


def test_value_copy_shifts_only_the_named_non_key_columns_keeping_order(tmp_path):
    db = make_store_db(tmp_path / "store.sqlite")
    variant = value_variant(str(db), "sqlite", {("orders", "amount"), ("customer", "joined"), ("customer", "country"),
                                                ("customer", "name"), ("orders", "customer_id"), ("orders", "nope")})
    assert variant is not None and variant.keeps_order
    assert "orders.amount" in variant.how and "customer.joined" in variant.how and "customer.country" in variant.how
    # name is UNIQUE and customer_id a foreign key: keys never change; `nope` does not exist
    assert _rows(variant.db, "SELECT id, name, note FROM customer") == _rows(db, "SELECT id, name, note FROM customer")
    assert _rows(variant.db, "SELECT id, customer_id, day FROM orders") == _rows(db, "SELECT id, customer_id, day "
                                                                                   "FROM orders")
    shifted = _rows(variant.db, "SELECT amount FROM orders ORDER BY id")
    assert shifted == [(a + 1.0,) for (a,) in _rows(db, "SELECT amount FROM orders ORDER BY id")]
    assert _rows(variant.db, "SELECT joined, country FROM customer WHERE id = 3") == [("2023-03-14", "~DE")]
    for column in ("amount", "id"):  # order and ties as before
        assert _rows(variant.db, f"SELECT id FROM orders ORDER BY amount, {column}") == \
            _rows(db, f"SELECT id FROM orders ORDER BY amount, {column}")
    _sound_values = _rows(variant.db, "PRAGMA integrity_check")
    assert _sound_values == [("ok",)] and not _violations(variant.db)
    assert value_variant(str(db), "sqlite", {("customer", "id"), ("orders", "customer_id")}) is None


def test_a_check_constraint_that_refuses_the_shift_leaves_the_column(tmp_path):
    db = tmp_path / "checked.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE grade (id INTEGER PRIMARY KEY, score INTEGER CHECK (score <= 10), name TEXT)")
        conn.executemany("INSERT INTO grade VALUES (?, ?, ?)", [(i, i, f"g{i}") for i in range(1, 11)])
    conn.close()
    variant = value_variant(str(db), "sqlite", {("grade", "score"), ("grade", "name")})
    assert variant is not None
    assert _rows(variant.db, "SELECT score, name FROM grade WHERE id = 10") == [(10, "~g10")]
    with pytest.raises(PerturbError, match="no column could be changed"):
        value_variant(str(db), "sqlite", {("grade", "score")})


def test_what_cannot_be_copied_says_why(tmp_path):
    db = make_shop_db(tmp_path / "shop.sqlite", rows=50)
    with pytest.raises(PerturbError, match="PostgreSQL"):
        row_variants("postgresql://u@localhost/db", "postgres")
    with pytest.raises(PerturbError, match="over the 1024"):
        row_variants(str(db), "sqlite", max_bytes=1024)
    with pytest.raises(PerturbError, match="cannot read"):
        row_variants(str(tmp_path / "missing.sqlite"), "sqlite")
    with pytest.raises(PerturbError, match="time left"):
        row_variants(str(tmp_path / "shop.sqlite"), "sqlite", deadline=0.0)


def test_a_cache_folder_others_may_write_is_refused(tmp_path):
    folder = tmp_path / f"rlvr-sql-suite-{os.geteuid()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    db = make_shop_db(tmp_path / "shop.sqlite", rows=10)
    with pytest.raises(PerturbError, match="closed to others' writes"):
        row_variants(str(db), "sqlite")


@pytest.mark.parametrize("db_path", ["bird/superhero/superhero.sqlite", "bird/student_club/student_club.sqlite",
                                     "bird/toxicology/toxicology.sqlite",
                                     "spider/department_store/department_store.sqlite"])
def test_real_databases_give_sound_copies(sql_data, db_path):
    original = sql_data / db_path
    for variant in row_variants(str(original), "sqlite"):
        _sound(original, variant.db)


def test_the_copies_folder_is_trimmed_least_recently_used_first(tmp_path, monkeypatch):
    import rlvr.verifiers.sql.copies as copies

    first = make_shop_db(tmp_path / "first.sqlite", rows=2000)
    old = [Path(v.db) for v in row_variants(str(first), "sqlite")]
    size = sum(p.stat().st_size for p in old)
    for path in old:
        os.utime(path, (1, 1))  # long unused
    monkeypatch.setattr(copies, "CACHE_BYTES", size)  # room for about one database's copies
    second = make_shop_db(tmp_path / "second.sqlite", rows=2000)
    new = [Path(v.db) for v in row_variants(str(second), "sqlite")]
    assert all(p.is_file() for p in new)
    assert not all(p.is_file() for p in old)
    again = row_variants(str(first), "sqlite")  # rebuilt on demand, same content
    assert all(Path(v.db).is_file() for v in again)
