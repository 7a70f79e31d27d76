"""`rlvr verify --verifier judge|ruler --prompt-key KEY [--group-key KEY]` against a loopback judge server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judge_http import JudgeServer, Reply, ids_in, ruler_reply, serve
from rlvr.runners.cli import app


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    yield from serve()


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _verdicts(path: Path) -> dict[int, dict[str, Any]]:
    return {row["_line"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_ruler_scores_rows_sharing_the_group_key_in_one_call(judge_server: JudgeServer, tmp_path: Path) -> None:
    judge_server.reply = lambda body: ruler_reply(body, lambda tid, text: 0.9 if "good" in text else 0.1)
    rows = [{"task": f"t{i % 3}", "question": [{"role": "user", "content": f"question {i % 3}"}],
             "completion": "good answer" if i < 3 else f"bad answer {i}"} for i in range(9)]
    rows.append({"question": "orphan", "completion": "x"})  # no group key: a bad row, not a crash
    source = _write(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    args = ["verify", str(source), "-o", str(out), "--verifier", "ruler",
            "--verifier-arg", f"base_url={judge_server.url}", "--verifier-arg", "model=m",
            "--prompt-key", "question", "--group-key", "task", "--response-key", "completion", "--batch-size", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 3 and all(len(ids_in(b)) == 3 for b in judge_server.requests)
    questions = sorted(b["messages"][1]["content"].split("question ")[1][0] for b in judge_server.requests)
    assert questions == ["0", "1", "2"]
    done = _verdicts(out)
    assert [done[i]["verdict"]["reward"] for i in range(1, 10)] == [0.9] * 3 + [0.1] * 6
    assert done[10]["_bad_row"] and "missing key 'task'" in done[10]["verdict"]["detail"]
    meta = json.loads((tmp_path / "out.jsonl.meta.json").read_text())
    assert meta["group_key"] == "task" and meta["prompt_key"] == "question"
    again = CliRunner().invoke(app, args)  # resumed: nothing left to judge
    assert again.exit_code == 0 and len(judge_server.requests) == 3


def test_judge_needs_no_reference_column(judge_server: JudgeServer, tmp_path: Path) -> None:
    judge_server.reply = lambda body: Reply('{"reasoning": "fine", "score": 0.7}')
    source = _write(tmp_path / "in.jsonl", [{"prompt": "Say hi.", "response": "hi"},
                                            {"prompt": "2+2?", "response": "4", "reference": 4}])
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["verify", str(source), "-o", str(out), "--verifier", "judge", "--verifier-arg",
                                      f"base_url={judge_server.url}", "--verifier-arg", "model=m",
                                      "--prompt-key", "prompt"])
    assert result.exit_code == 0, result.output
    assert [r["verdict"]["status"] for r in _verdicts(out).values()] == ["correct", "correct"]
    sent = {b["messages"][1]["content"].split("\n")[2]: b["messages"][1]["content"] for b in judge_server.requests}
    assert "REFERENCE ANSWER" not in sent["Say hi."] and "REFERENCE ANSWER:\n```\n4\n```" in sent["2+2?"]


def test_prompt_and_group_keys_are_refused_for_other_verifiers(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.jsonl", [{"prompt": "q", "response": "4", "reference": "4"}])
    for extra, message in ((["--prompt-key", "prompt"], "--prompt-key is for judge verifiers"),
                           (["--group-key", "prompt"], "--group-key needs a group verifier")):
        result = CliRunner().invoke(app, ["verify", str(source), "-o", str(tmp_path / "o.jsonl"), *extra])
        assert result.exit_code != 0 and message in result.output
