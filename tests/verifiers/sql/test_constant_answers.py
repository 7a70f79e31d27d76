"""A prediction that reads no table of the database is not an answer to a gold that does (red team, second pass).

Constants (`SELECT 2`, `SELECT 'ink' UNION ALL SELECT 'pad'`, a CTE of literals named like a real
table, a select from the schema catalog) copy the gold's rows on the one database the verifier has,
which a model with the `execute_sql` tool can look up first; on any other state of the database they
are wrong (test-suite-sql-eval's distilled databases reject them for the same reason).
"""

from __future__ import annotations

import pytest

from rlvr.verifiers.sql import SQLVerifier

COUNT = "SELECT COUNT(*) FROM t WHERE price > 1497"  # 2 rows: ids 999 and 1000
NAMES = "SELECT name FROM t WHERE price > 1497"


@pytest.fixture(scope="module")
def verifier():
    with SQLVerifier(query_timeout_s=2) as v:
        yield v


@pytest.mark.parametrize(("gold", "pred", "status"), [
    (COUNT, "SELECT 2", "incorrect"),
    (COUNT, "SELECT 2 UNION SELECT 2", "incorrect"),
    (COUNT, "SELECT * FROM (SELECT 2)", "incorrect"),
    (COUNT, "WITH t AS (SELECT 2 AS n) SELECT n FROM t", "incorrect"),  # a CTE shadowing the real table
    (COUNT, "SELECT 2 FROM sqlite_master LIMIT 1", "incorrect"),  # the catalog holds no data
    (NAMES, "SELECT 'item999' UNION ALL SELECT 'item1000'", "incorrect"),
    # controls: real queries, and constants against a gold that is itself a constant
    (COUNT, "SELECT COUNT(*) FROM t WHERE price >= 1498.5", "correct"),
    (COUNT, "WITH x AS (SELECT * FROM t) SELECT COUNT(*) FROM x WHERE price > 1497", "correct"),
    (COUNT, "SELECT COUNT(*) FROM main.t WHERE price > 1497", "correct"),
    (NAMES, "SELECT name FROM t WHERE id > 998", "correct"),  # price = 1.5 * id holds on every copy
    # the last two rows by id coincide with the gold on this database only: wrong on a copy missing row 1000
    (NAMES, "SELECT name FROM t ORDER BY id DESC LIMIT 2", "incorrect"),
    ("SELECT 1 + 1", "SELECT 2", "correct"),
])
def test_constant_answers(verifier, shop_db, gold, pred, status):
    verdict = verifier.verify(f"<solution>{pred}</solution>", {"gold": gold, "db": str(shop_db)})
    assert verdict.status == status, verdict.detail
