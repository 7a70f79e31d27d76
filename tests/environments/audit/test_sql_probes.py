"""SQL probes: a mutation is wrong only when the database or a perturbed copy says so; same results become controls."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from rlvr.environments.audit.sql import sql_probes
from rlvr.verifiers.sql import SQLVerifier
from rlvr.verifiers.sql.perturb import row_variants


@pytest.fixture()
def db(tmp_path: Path) -> str:
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, score REAL);
        INSERT INTO customer VALUES (1, 'Ann', 'BR', 31, 1.5), (2, 'Bob', 'US', 45, 2.5), (3, 'Cid', 'BR', 28, 3.5),
                                    (4, 'Dee', 'DE', 45, 4.5), (5, 'Eve', 'US', 52, 5.5), (6, 'Fay', 'FR', 19, 6.5);
        CREATE TABLE tag (name TEXT);
        INSERT INTO tag VALUES ('a'), ('b'), ('c');
    """)
    con.commit()
    con.close()
    return str(path)


def _rows(db: str, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _sql(response: str) -> str:
    return response.removeprefix("```sql\n").removesuffix("\n```")


def _by_name(probes: list) -> dict[str, object]:
    return {p.name: p for p in probes}


def test_mutations_are_wrong_on_the_database(db: str) -> None:
    gold = "SELECT DISTINCT country FROM customer WHERE age > 31 ORDER BY country"
    wrong = {p.name: _sql(p.response) for p in sql_probes({"gold": gold, "db": db}) if p.family == "query"}
    assert set(wrong) == {"drop-distinct", "flip-order-by", "drop-where", "where-bound-strictness", "another-column"}
    limited = "SELECT name FROM customer ORDER BY age DESC, name LIMIT 2"
    wrong_limits = {p.name: _sql(p.response) for p in sql_probes({"gold": limited, "db": db}) if p.family == "query"}
    assert set(wrong_limits) >= {"limit-plus-one", "limit-minus-one", "flip-order-by"}
    # age > 32 selects the same countries: not wrong, so it is a control
    assert "same-result-where-number-plus-one" in {p.name for p in sql_probes({"gold": gold, "db": db})}
    for name, sql in [*((n, s) for n, s in wrong.items()), *wrong_limits.items()]:
        expected = _rows(db, gold if name in wrong and sql == wrong[name] else limited)
        try:
            rows = _rows(db, sql)
        except sqlite3.Error:
            continue  # a query that fails cannot be right
        assert rows != expected, name
        if name != "flip-order-by":
            assert Counter(rows) != Counter(expected), name


def test_a_mutation_with_the_gold_result_is_a_control_not_a_wrong_probe(db: str) -> None:
    """No duplicate names: dropping DISTINCT changes nothing, so it must score correct."""
    probes = _by_name(sql_probes({"gold": "SELECT DISTINCT name FROM customer", "db": db}))
    assert "drop-distinct" not in probes
    control = probes["same-result-drop-distinct"]
    assert control.control and _rows(db, _sql(control.response)) == _rows(db, "SELECT DISTINCT name FROM customer")


def test_reversed_order_over_tied_keys_is_left_out(db: str) -> None:
    """Two customers are 45: with ties, another order may be right, so the flip is neither wrong nor a control."""
    tied = _by_name(sql_probes({"gold": "SELECT age FROM customer WHERE age >= 45 ORDER BY age", "db": db}))
    assert "flip-order-by" not in tied and "same-result-flip-order-by" not in tied
    distinct = _by_name(sql_probes({"gold": "SELECT name FROM customer ORDER BY name", "db": db}))
    assert "flip-order-by" in distinct  # names are distinct: the reversed order is wrong
    unordered = _by_name(sql_probes({"gold": "SELECT name FROM customer", "db": db, "rules": {"order": "never"}}))
    assert "flip-order-by" not in unordered


def test_another_column_comes_from_the_same_table(db: str) -> None:
    probes = _by_name(sql_probes({"gold": "SELECT name FROM customer WHERE country = 'US'", "db": db}))
    assert _sql(probes["another-column"].response) == "SELECT \"id\" FROM customer WHERE country = 'US'"


def test_controls_have_exactly_the_gold_result(db: str) -> None:
    gold = "SELECT name, age FROM customer WHERE country = 'BR'"
    controls = {p.name: _sql(p.response) for p in sql_probes({"gold": gold, "db": db}) if p.control}
    assert set(controls) >= {"reprinted", "aliased-columns", "and-true", "columns-permuted"}
    for name, sql in controls.items():
        rows = _rows(db, sql)
        if name == "columns-permuted":
            rows = [tuple(reversed(r)) for r in rows]
        assert rows == _rows(db, gold), name
    strict = {p.name for p in sql_probes({"gold": gold, "db": db, "rules": {"columns": "strict"}}) if p.control}
    assert "columns-permuted" not in strict


def test_write_attempts_are_probes(db: str) -> None:
    writes = {p.name for p in sql_probes({"gold": "SELECT name FROM tag", "db": db}) if p.family == "write"}
    assert writes == {"delete", "update", "drop-table", "insert", "attach", "pragma-writable-schema",
                      "create-table-as-gold", "terminate-other-sessions", "advisory-lock", "notify"}


def test_a_gold_that_does_not_run_is_refused(db: str) -> None:
    with pytest.raises(ValueError, match="does not run"):
        sql_probes({"gold": "SELECT nope FROM customer", "db": db})


def test_a_same_result_mutation_that_a_copy_tells_apart_is_a_wrong_probe(db: str) -> None:
    """Every wrong probe differs from the gold here or on a perturbed copy; `age > 32` never does: a control.

    (Nobody is 32, and deleting rows cannot make anyone 32.)
    """
    gold = "SELECT DISTINCT country FROM customer WHERE age > 31"
    probes = _by_name(sql_probes({"gold": gold, "db": db}))
    assert probes["same-result-where-number-plus-one"].control
    for probe in probes.values():
        if probe.family == "query":  # every wrong probe differs here or on a copy
            sql = _sql(probe.response)
            try:
                here = Counter(_rows(db, sql)) != Counter(_rows(db, gold))
            except sqlite3.Error:
                continue
            assert here or any(Counter(_rows(v.db, sql)) != Counter(_rows(v.db, gold))
                               for v in row_variants(db, "sqlite")), probe.name


def test_the_sql_verifier_rejects_every_wrong_probe_and_accepts_every_control(db: str) -> None:
    before = Path(db).read_bytes()
    with SQLVerifier(scoring="inline") as verifier:
        for gold in ("SELECT DISTINCT country FROM customer WHERE age > 30 ORDER BY country LIMIT 2",
                     "SELECT name, score FROM customer WHERE age BETWEEN 20 AND 50", "SELECT COUNT(*) FROM tag"):
            ref = {"gold": gold, "db": db}
            for probe in sql_probes(ref, verifier):
                verdict = verifier.verify(probe.response, ref)
                assert verdict.is_correct == probe.control, (gold, probe.name, verdict.status, verdict.detail)
    assert Path(db).read_bytes() == before  # no write reached the database


def test_aggregate_and_condition_mutations(db: str) -> None:
    gold = "SELECT MAX(age) FROM customer WHERE country = 'US' AND age > 40"
    probes = _by_name(sql_probes({"gold": gold, "db": db}))
    assert _sql(probes["swap-aggregate"].response).startswith("SELECT MIN(age)")
    assert _rows(db, _sql(probes["swap-aggregate"].response)) == [(45,)] != _rows(db, gold)
    assert "<>" in _sql(probes["negate-equality"].response) and not probes["negate-equality"].control
    # OR instead of AND still gives 52 here: a control when it also gives the gold's result on every perturbed copy
    # of the database, else a wrong probe (before issue 31 the task's database alone made it a control)
    either = "SELECT MAX(age) FROM customer WHERE country = 'US' OR age > 40"
    differs = any(_rows(v.db, either) != _rows(v.db, gold) for v in row_variants(db, "sqlite"))
    assert ("and-to-or" in probes) is differs and ("same-result-and-to-or" in probes) is not differs
