"""verify_file: streaming, bad rows, resume after a torn write, sample rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlvr.core.errors import ConfigError, DataError
from rlvr.environments.math import make_easy_arithmetic
from rlvr.runners.resumable import meta_path
from rlvr.runners.rows import extract_response
from rlvr.runners.verify import sample_rows, scan_output, verify_file
from rlvr.verifiers.math import MathVerifier
from rlvr.verifiers.testing import ConstantVerifier


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "response": f"\\boxed{{{i}}}", "reference": i if i % 2 else str(i)} for i in range(n)]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def math() -> MathVerifier:
    return MathVerifier(scoring="inline")


def test_rows_get_verdicts_in_order(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(20)])
    stats = verify_file(inp, tmp_path / "out.jsonl", math, batch_size=3)
    out = _read(tmp_path / "out.jsonl")
    assert [r["_line"] for r in out] == list(range(1, 21)) and [r["id"] for r in out] == list(range(20))
    assert all(r["verdict"]["status"] == "correct" for r in out)
    assert stats.written == 20 and stats.accuracy == 1.0 and stats.bad_rows == 0


def test_bad_rows_are_written_and_counted(tmp_path: Path, math: MathVerifier) -> None:
    lines = [
        json.dumps({"response": "\\boxed{1}", "reference": "1", "expected": "correct"}),
        "{oops",
        json.dumps({"response": "x"}),
        "",
        json.dumps([1]),
        json.dumps({"response": 5, "reference": "5"}),
        json.dumps({"response": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "\\boxed{2}"}],
                    "reference": "3", "expected": "correct"}),
    ]
    bad: list[str] = []
    stats = verify_file(_write(tmp_path / "in.jsonl", lines), tmp_path / "out.jsonl", math, on_bad=bad.append)
    out = {r["_line"]: r for r in _read(tmp_path / "out.jsonl")}
    assert sorted(out) == [1, 2, 3, 5, 6, 7]
    assert out[2]["_bad_row"] and out[2]["_raw"] == "{oops\n"
    assert "line 2: not valid JSON" in out[2]["verdict"]["detail"]
    assert out[3]["verdict"] == {**out[3]["verdict"], "status": "error", "reward": None}
    assert "line 3: missing key 'reference'" in out[3]["verdict"]["detail"]
    assert "line 6: key 'response' is an int" in out[6]["verdict"]["detail"]
    assert out[7]["verdict"]["status"] == "incorrect"
    assert len(bad) == 4 and stats.bad_rows == 4 and stats.blank_lines == 1
    assert stats.scored == 2 and stats.accuracy == 0.5
    assert (stats.expected_total, stats.expected_match) == (2, 1)


def test_resume_discards_torn_line_and_skips_done_rows(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(10)])
    out = tmp_path / "out.jsonl"
    verify_file(inp, out, math)
    full = out.read_text().splitlines(keepends=True)
    out.write_text("".join(full[:4]) + full[4][:25])  # as if killed mid-write of row 5
    done, _ = scan_output(out)
    assert done == {1, 2, 3, 4} and out.read_text() == "".join(full[:4])
    stats = verify_file(inp, out, math)
    assert stats.resumed == 4 and stats.written == 6 and sum(stats.statuses.values()) == 10
    assert [r["_line"] for r in _read(out)] == list(range(1, 11))
    again = verify_file(inp, out, math)
    assert again.written == 0 and again.resumed == 10


def test_resume_refuses_foreign_output(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(2)])
    out = _write(tmp_path / "out.jsonl", ['{"not": "ours"}'])
    with pytest.raises(DataError, match="--overwrite"):
        verify_file(inp, out, math)
    _write(out, ['{"_line": 7, "verdict": {"status": "correct"}}'])
    with pytest.raises(DataError, match="another input"):
        verify_file(inp, out, math)
    stats = verify_file(inp, out, math, overwrite=True)
    assert stats.written == 2 and stats.resumed == 0
    with pytest.raises(ConfigError, match="must differ"):
        verify_file(inp, inp, math)
    with pytest.raises(ConfigError, match="does not exist"):
        verify_file(tmp_path / "missing.jsonl", out, math)


def test_verifier_errors_are_error_verdicts(tmp_path: Path) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(3)])
    stats = verify_file(inp, tmp_path / "out.jsonl", ConstantVerifier("error", None))
    assert stats.statuses["error"] == 3 and stats.bad_rows == 0 and stats.accuracy == 0.0


def test_extract_response() -> None:
    assert extract_response("x") == "x"
    assert extract_response([{"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}]) == "a"
    assert extract_response([{"role": "user", "content": "u"}]) is None
    assert extract_response(3) is None


def test_sample_rows_match_their_expected_status(math: MathVerifier) -> None:
    env = make_easy_arithmetic(size=10, scoring="inline")
    rows = list(sample_rows(env, 5))
    assert {r["kind"] for r in rows} == {"reference", "off_by_one", "empty", "no_answer"} and len(rows) == 20
    for row in rows:
        assert math.verify(row["response"], row["reference"]).status == row["expected"], row
        json.dumps(row)


def test_sample_rows_under_the_reasoning_gym_grader() -> None:
    from rlvr.environments.math import make_reasoning_gym

    env = make_reasoning_gym(task="spell_backward", size=10, scoring="inline")
    rows = list(sample_rows(env, 3))
    assert len(rows) == 9  # no off-by-one row for a non-numeric answer
    for row in rows:
        assert env.verifier.verify(row["response"], row["reference"]).status == row["expected"], row


def test_null_and_chat_without_assistant_are_named(tmp_path: Path, math: MathVerifier) -> None:
    lines = [
        json.dumps({"response": None, "reference": "1"}),
        json.dumps({"response": [{"role": "user", "content": "q"}], "reference": "1"}),
        json.dumps({"response": "\\boxed{1}", "reference": None}),
        json.dumps({"response": {"text": "x"}, "reference": "1"}),
    ]
    verify_file(_write(tmp_path / "in.jsonl", lines), tmp_path / "out.jsonl", math)
    details = [r["verdict"]["detail"] for r in _read(tmp_path / "out.jsonl")]
    assert details == [
        "line 1: key 'response' is null",
        "line 2: key 'response' is a chat list with no assistant message",
        "line 3: key 'reference' is null",
        "line 4: key 'response' is a dict, expected a string or chat messages",
    ]


def test_resume_with_other_keys_is_refused_and_names_the_change(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps({"id": i, "resp": "\\boxed{1}", "gold": "1"}) for i in range(5)])
    out = tmp_path / "out.jsonl"
    first = verify_file(inp, out, math)
    assert first.bad_rows == 5
    hint = first.key_hint("response", "reference")
    assert hint is not None and "all 5 rows lack key 'response' or 'reference'" in hint
    assert "--response-key" in hint and "--reference-key" in hint and "available keys: gold, id, resp" in hint
    meta = json.loads(meta_path(out).read_text())
    assert meta["response_key"] == "response" and meta["verifier"] == "math" and meta["input"] == str(inp.resolve())
    with pytest.raises(ConfigError, match=r"response_key: 'response' → 'resp'.*reference_key.*--overwrite"):
        verify_file(inp, out, math, response_key="resp", reference_key="gold")
    assert len(_read(out)) == 5  # untouched
    stats = verify_file(inp, out, math, response_key="resp", reference_key="gold", overwrite=True)
    assert stats.written == 5 and stats.bad_rows == 0 and stats.accuracy == 1.0
    assert stats.key_hint("resp", "gold") is None
    again = verify_file(inp, out, math, response_key="resp", reference_key="gold")
    assert again.resumed == 5 and again.written == 0


def test_resume_with_other_verifier_options_is_refused(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(3)])
    out = tmp_path / "out.jsonl"
    verify_file(inp, out, math)
    with pytest.raises(ConfigError, match=r"verifier option timeout_s: 10\.0 → 3\.0"):
        verify_file(inp, out, MathVerifier(scoring="inline", timeout_s=3))
    with pytest.raises(ConfigError, match=r"verifier: 'math' → 'constant'"):
        verify_file(inp, out, ConstantVerifier("correct", 1.0))
    # execution-only options (scoring, workers) do not block a resume
    assert verify_file(inp, out, MathVerifier(scoring="inline", workers=2)).resumed == 3


def test_output_without_a_record_is_resumed(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(4)])
    out = tmp_path / "out.jsonl"
    verify_file(inp, out, math)
    meta_path(out).unlink()  # as written by an older rlvr
    stats = verify_file(inp, out, math, response_key="other")
    assert stats.resumed == 4 and meta_path(out).is_file()


def test_input_rows_with_output_keys_are_replaced_with_one_warning(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in _rows(6)])
    first = tmp_path / "first.jsonl"
    verify_file(inp, first, math)
    seen: list[str] = []
    second = tmp_path / "second.jsonl"
    stats = verify_file(first, second, ConstantVerifier("incorrect", 0.0), batch_size=2, on_warning=seen.append)
    assert len(seen) == 1 and "'_line', 'verdict'" in seen[0] and "replaces" in seen[0]
    rows = _read(second)
    assert [r["verdict"]["status"] for r in rows] == ["incorrect"] * 6 and stats.statuses["incorrect"] == 6
    with pytest.warns(UserWarning, match="already have"):
        verify_file(first, tmp_path / "third.jsonl", math)


def test_bad_rows_in_input_do_not_stay_bad_when_fixed(tmp_path: Path, math: MathVerifier) -> None:
    inp = _write(tmp_path / "in.jsonl", [json.dumps({"response": "\\boxed{1}", "reference": "1", "_bad_row": True})])
    stats = verify_file(inp, tmp_path / "out.jsonl", math, on_warning=lambda _m: None)
    assert stats.bad_rows == 0 and "_bad_row" not in _read(tmp_path / "out.jsonl")[0]
