"""PostgreSQL (a real server started here) and DuckDB: gold-vs-gold and the adversarial checks that apply.

The PostgreSQL server is the Debian package's binaries (`/usr/lib/postgresql/*/bin`), run as the
unprivileged `postgres` user when the tests run as root, on a free loopback port, in a temporary
folder, and stopped at the end. A real BIRD database (superhero) is copied into it table by
table; the verifier connects as a role that may only SELECT. Gold queries are translated from
SQLite to each engine's dialect with sqlglot.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlglot
from sqlhelp import DATA, bird_rows

from rlvr.verifiers.sql import SQLVerifier
from rlvr.verifiers.sql.execute import Limits, execute

pytestmark = pytest.mark.extras

SUPERHERO = DATA / "bird" / "superhero" / "superhero.sqlite"
_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE PRECISION", "FLOAT": "DOUBLE PRECISION", "DOUBLE": "DOUBLE PRECISION"}


def _sqlite_tables(path: Path) -> list[tuple[str, list[tuple[str, str]], list[tuple]]]:
    """(table, [(column, engine type)], rows) for every table of a SQLite file."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = []
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        for name in names:
            cols = [(r[1], _TYPES.get(r[2].upper(), "TEXT")) for r in conn.execute(f'PRAGMA table_info("{name}")')]
            out.append((name, cols, conn.execute(f'SELECT * FROM "{name}"').fetchall()))
        return out
    finally:
        conn.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server on loopback holding the superhero database; yields a read-only role's URL."""
    psycopg = pytest.importorskip("psycopg")
    if not SUPERHERO.is_file():
        pytest.skip(f"shared SQL data {SUPERHERO} is absent")
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries are not installed (apt-get install postgresql)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as an unprivileged user")
    root = Path(tempfile.mkdtemp(prefix="rlvr-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    root.chmod(0o755)
    port = _free_port()
    subprocess.run(_as_postgres([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                                 "-E", "UTF8", "--no-sync"]), check=True, capture_output=True, timeout=120)
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-o", options,
                                 "-w", "-t", "60", "start"]), check=True, capture_output=True, timeout=120)
    try:
        admin = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE superhero")
            conn.execute("CREATE ROLE rlvr_reader LOGIN")
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/superhero") as conn:
            for name, cols, rows in _sqlite_tables(SUPERHERO):
                conn.execute(f'CREATE TABLE "{name}" ({", ".join(f"{c} {t}" for c, t in cols)})')
                with conn.cursor().copy(f'COPY "{name}" FROM STDIN') as copy:
                    for row in rows:
                        copy.write_row(row)
            conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO rlvr_reader")
            conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        yield f"postgresql://rlvr_reader@127.0.0.1:{port}/superhero"
    finally:
        subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _pg_fingerprint(url: str) -> str:
    """md5 of every row of every table, read as the superuser: any write changes it."""
    import psycopg

    admin = url.replace("rlvr_reader@", "postgres@")
    with psycopg.connect(admin) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                                             "ORDER BY tablename")]
        query = "SELECT md5(string_agg(x::text, chr(10) ORDER BY x::text)) FROM {} x"
        parts = [f"{t}:{conn.execute(query.format(t)).fetchone()[0]}" for t in tables]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def _golds(dialect: str) -> list[str]:
    rows = bird_rows(DATA, "superhero")
    return [sqlglot.transpile(r["gold_sql"], read="sqlite", write=dialect)[0] for r in rows]


@pytest.fixture(scope="module")
def verifier() -> SQLVerifier:
    return SQLVerifier(scoring="inline", query_timeout_s=2.0, timeout_s=10.0)


def test_postgres_gold_vs_gold(postgres_url, verifier):
    golds = _golds("postgres")
    verdicts = [verifier.verify(f"```sql\n{g}\n```", {"gold": g, "db": postgres_url}) for g in golds]
    statuses = [v.status for v in verdicts]
    # a gold the translation cannot run on PostgreSQL is a grader error (reward None), never a 0 or a 1
    assert set(statuses) <= {"correct", "error"}
    assert statuses.count("correct") >= 0.8 * len(golds), [v.detail for v in verdicts if v.status == "error"][:5]
    assert all(v.reward is None for v in verdicts if v.status == "error")


def test_postgres_wrong_queries_are_incorrect(postgres_url, verifier):
    ref = {"gold": "SELECT superhero_name FROM superhero WHERE height_cm > 200 ORDER BY superhero_name",
           "db": postgres_url}
    assert verifier.verify("SELECT superhero_name FROM superhero WHERE height_cm > 200 ORDER BY 1", ref).is_correct
    for wrong in ("SELECT superhero_name FROM superhero WHERE height_cm > 200 ORDER BY superhero_name DESC",
                  "SELECT superhero_name FROM superhero WHERE height_cm > 190 ORDER BY superhero_name",
                  "SELECT full_name FROM superhero WHERE height_cm > 200 ORDER BY superhero_name"):
        assert verifier.verify(wrong, ref).status == "incorrect"
    failing = verifier.verify("SELECT nope FROM superhero", ref)
    assert failing.status == "incorrect" and 'column "nope" does not exist' in failing.detail


PG_ATTACKS = [
    ("DELETE FROM superhero", "incorrect"),
    ("DROP TABLE superhero", "incorrect"),
    ("SELECT 1; DROP TABLE superhero", "incorrect"),
    ("WITH d AS (DELETE FROM superhero RETURNING *) SELECT count(*) FROM d", "incorrect"),
    ("SELECT * INTO stolen FROM superhero", "incorrect"),
    ("SELECT * FROM superhero FOR UPDATE", "incorrect"),
    ("SELECT set_config('default_transaction_read_only', 'off', false)", "incorrect"),
    ("SELECT pg_sleep(30)", "timeout"),
    ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c", "timeout"),
    ("SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 1000) b, generate_series(1, 1000) c",
     "timeout"),
    # huge results: capped (max_bytes / max_rows) or stopped by the time limit, whichever comes first
    ("SELECT repeat('x', 100000000)", "incorrect|timeout"),
    ("SELECT a FROM generate_series(1, 1000000000) a", "incorrect|timeout"),
]


@pytest.mark.parametrize(("attack", "status"), PG_ATTACKS, ids=[a[:40] for a, _ in PG_ATTACKS])
def test_postgres_adversarial(postgres_url, verifier, attack, status):
    before = _pg_fingerprint(postgres_url)
    ref = {"gold": "SELECT id FROM superhero WHERE id < 10", "db": postgres_url}
    verdict = verifier.verify(f"```sql\n{attack}\n```", ref)
    assert verdict.status in status.split("|"), verdict
    assert verdict.reward == 0.0
    assert verifier.verify("SELECT id FROM superhero WHERE id < 10", ref).is_correct
    assert _pg_fingerprint(postgres_url) == before


def test_postgres_engine_refuses_writes_without_the_parser(postgres_url):
    before = _pg_fingerprint(postgres_url)
    for attack in ("DELETE FROM superhero", "UPDATE superhero SET id = 0", "CREATE TABLE x (a int)",
                   "SELECT 1; DELETE FROM superhero"):
        outcome = execute(postgres_url, attack, "postgres", Limits(timeout_s=2.0))
        assert outcome.kind == "error", (attack, outcome)
    assert _pg_fingerprint(postgres_url) == before


def test_postgres_gold_failing_and_empty(postgres_url, verifier):
    both = verifier.verify("SELECT x FROM nowhere", {"gold": "SELECT x FROM nowhere", "db": postgres_url})
    assert both.status == "error" and both.reward is None
    empty = verifier.verify("SELECT id FROM superhero WHERE id < 0", {"gold": "SELECT id FROM superhero WHERE 1 = 0",
                                                                     "db": postgres_url})
    assert empty.status == "correct" and "gold result is empty" in empty.detail
    unreachable = verifier.verify("SELECT 1", {"gold": "SELECT 1", "db": "postgresql://nobody@127.0.0.1:1/none"})
    assert unreachable.status == "error" and "cannot connect" in unreachable.detail


# -- DuckDB -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory) -> Path:
    duckdb = pytest.importorskip("duckdb")
    if not SUPERHERO.is_file():
        pytest.skip(f"shared SQL data {SUPERHERO} is absent")
    import pyarrow as pa

    path = tmp_path_factory.mktemp("duck") / "superhero.duckdb"
    arrow_types = {"BIGINT": pa.int64(), "DOUBLE PRECISION": pa.float64(), "TEXT": pa.string()}
    conn = duckdb.connect(str(path))
    try:
        for name, cols, rows in _sqlite_tables(SUPERHERO):
            conn.execute(f'CREATE TABLE "{name}" ({", ".join(f"{c} {t}" for c, t in cols)})')
            schema = pa.schema([(c, arrow_types[t]) for c, t in cols])
            source = pa.Table.from_pylist([dict(zip([c for c, _ in cols], r, strict=True)) for r in rows], schema)
            conn.register("source", source)
            conn.execute(f'INSERT INTO "{name}" SELECT * FROM source')
            conn.unregister("source")
    finally:
        conn.close()
    return path


def test_duckdb_gold_vs_gold(duckdb_file, verifier):
    url = f"duckdb:///{duckdb_file}"
    golds = _golds("duckdb")
    verdicts = [verifier.verify(f"```sql\n{g}\n```", {"gold": g, "db": url}) for g in golds]
    statuses = [v.status for v in verdicts]
    assert set(statuses) <= {"correct", "error"}
    assert statuses.count("correct") >= 0.8 * len(golds), [v.detail for v in verdicts if v.status == "error"][:5]


DUCK_ATTACKS = [
    ("DELETE FROM superhero", "incorrect"),
    ("DROP TABLE superhero", "incorrect"),
    ("ATTACH '{tmp}/x.duckdb' AS x", "incorrect"),
    ("SELECT 1; DROP TABLE superhero", "incorrect"),
    ("INSTALL httpfs", "incorrect"),
    ("SELECT * FROM read_csv('/etc/passwd')", "incorrect"),
    ("COPY superhero TO '{tmp}/out.csv'", "incorrect"),
    ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c", "timeout"),
    ("SELECT count(*) FROM range(100000) a, range(100000) b, range(100000) c", "timeout"),
    ("SELECT repeat('x', 100000000)", "incorrect|timeout"),
]


@pytest.mark.parametrize(("attack", "status"), DUCK_ATTACKS, ids=[a[:40] for a, _ in DUCK_ATTACKS])
def test_duckdb_adversarial(duckdb_file, verifier, tmp_path, attack, status):
    before = hashlib.sha256(duckdb_file.read_bytes()).hexdigest()
    ref = {"gold": "SELECT id FROM superhero WHERE id < 10", "db": f"duckdb:///{duckdb_file}"}
    start = time.monotonic()
    verdict = verifier.verify(f"```sql\n{attack.format(tmp=tmp_path)}\n```", ref)
    assert verdict.status in status.split("|"), verdict
    assert time.monotonic() - start < 60  # never a hang
    assert verifier.verify("SELECT id FROM superhero WHERE id < 10", ref).is_correct
    assert hashlib.sha256(duckdb_file.read_bytes()).hexdigest() == before
    assert not list(tmp_path.iterdir())


def test_duckdb_engine_refuses_writes_without_the_parser(duckdb_file, tmp_path):
    for attack in ("DELETE FROM superhero", f"ATTACH '{tmp_path}/y.duckdb' AS y", "SET enable_external_access = true",
                   f"COPY superhero TO '{tmp_path}/o.csv'"):
        outcome = execute(str(duckdb_file), attack, "duckdb", Limits(timeout_s=2.0))
        assert outcome.kind == "error", (attack, outcome)
    assert not list(tmp_path.iterdir())


# -- answers copied as constants (issue 31 item 1) ----------------------------------------------------
def test_duckdb_copied_answers_are_incorrect_on_perturbed_copies(duckdb_file):
    ref = {"gold": "SELECT count(*) FROM superhero WHERE height_cm > 200", "db": f"duckdb:///{duckdb_file}"}
    count = execute(str(duckdb_file), ref["gold"], "duckdb").rows[0][0]
    with SQLVerifier(scoring="inline", query_timeout_s=2.0, timeout_s=30.0) as verifier:
        copied = verifier.verify(f"```sql\nSELECT {count} FROM superhero LIMIT 1\n```", ref)
        assert copied.status == "incorrect" and "perturbed copy" in copied.detail, copied.detail
        right = verifier.verify("SELECT count(id) FROM superhero WHERE height_cm >= 201", ref)
        assert right.status == "correct" and "also on" in right.detail, right.detail
        name = {"gold": "SELECT height_cm FROM superhero WHERE superhero_name = 'Copycat'", "db": ref["db"]}
        height = execute(str(duckdb_file), name["gold"], "duckdb").rows[0][0]
        hard_coded = verifier.verify(f"SELECT {height} FROM superhero WHERE superhero_name = 'Copycat'", name)
        assert hard_coded.status == "incorrect" and "values:" in hard_coded.detail, hard_coded.detail


def test_postgres_is_checked_on_its_database_only_and_says_so(postgres_url, verifier):
    """A server database cannot be copied through a role that may only SELECT: no perturbed copy (documented)."""
    ref = {"gold": "SELECT count(*) FROM superhero", "db": postgres_url}
    verdict = verifier.verify("SELECT 750 FROM superhero LIMIT 1", ref)
    assert verdict.status == "correct"
    assert "checked on the task's database only: no perturbed copy (PostgreSQL databases are not perturbed" \
        in verdict.detail
