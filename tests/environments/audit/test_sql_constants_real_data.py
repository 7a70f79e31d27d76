"""Every real gold's answer copied as constants is rejected; its controls stay correct (issue 31 item 1).

For each gold of ../shared/data/sql (BIRD mini-dev superhero / student_club / toxicology, Spider
department_store; skipped when absent), the audit's `constant` probes write the gold's own rows as
constants behind a token read of a table (`SELECT 'c8' FROM customer LIMIT 1`, a VALUES list, ...):
every one must score incorrect, and the control probes (the gold re-printed, aliased, with
`AND 1 = 1`, its columns permuted) correct, with the verifier's default perturbed copies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.environments.audit.sql import sql_probes
from rlvr.verifiers.sql import SQLVerifier

SQL = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "sql"

# Golds that get no constant probe, and why (a golden list: a change here is a change of behaviour).
NO_CONSTANTS = {
    "SELECT superhero_name, height_cm, RANK() OVER": "over 50 rows",
    "SELECT superhero_name FROM superhero AS T1 WHERE EXISTS": "over 50 rows",
    "SELECT T1.superhero_name, T2.publisher_name FROM superhero AS T1 INNER JOIN publisher AS T2 ON T1.publisher_id "
    "= T2.id WHERE T1.eye_colour_id = T1.hair_colour_id": "over 50 rows",
    "SELECT DISTINCT T2.molecule_id FROM atom AS T1": "over 50 rows",
    "SELECT count(DISTINCT product_type_code) FROM products": "no copy changes it: every copy keeps both types",
}


def _golds() -> list[tuple[str, str]]:
    pairs = []
    for db_id in ("superhero", "student_club", "toxicology"):
        for row in json.loads((SQL / "bird" / f"mini_dev_{db_id}.json").read_text()):
            pairs.append((row["gold_sql"], str(SQL / "bird" / db_id / f"{db_id}.sqlite")))
    spider = SQL / "spider" / "department_store"
    lines = (spider / "train_gold_department_store.sql").read_text().splitlines()
    for gold in sorted({line.split("\t")[0] for line in lines if line.strip()}):
        pairs.append((gold, str(spider / "department_store.sqlite")))
    return pairs


@pytest.mark.skipif(not (SQL / "bird" / "mini_dev_superhero.json").is_file(), reason=f"shared data {SQL} is absent")
def test_copied_answers_to_every_real_gold_are_incorrect():
    items, without = [], []
    with SQLVerifier(workers=2) as verifier:
        for gold, db in _golds():
            ref = {"gold": gold, "db": db}
            probes = [p for p in sql_probes(ref, verifier) if p.family == "constant" or p.control]
            if not any(p.family == "constant" for p in probes):
                without.append(gold)
            items += [(p, ref) for p in probes]
        verdicts = verifier.verify_batch([(p.response, ref) for p, ref in items])
    wrong = [(p.name, ref["gold"][:80], v.status, v.detail[-160:]) for (p, ref), v in zip(items, verdicts, strict=True)
             if v.is_correct != p.control]
    assert not wrong
    constants = sum(not p.control for p, _ in items)
    assert constants >= 500, constants  # 131 golds x 3-6 forms
    assert sorted(next(k for k in NO_CONSTANTS if g.startswith(k)) for g in without) == sorted(NO_CONSTANTS)
