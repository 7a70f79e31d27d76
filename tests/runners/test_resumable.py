"""The resumable-output primitive: run record, torn-tail repair, resume by key, appends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.core.errors import ConfigError, DataError
from rlvr.runners.resumable import AppendWriter, ResumableOutput, RunRecord, complete_lines, meta_path

CONFIG = {"env": "math/easy-arithmetic-v1", "env_args": {"size": 4}, "policy": "oracle"}


def _rows(*keys: int) -> str:
    return "".join(json.dumps({"key": k, "value": k * k}) + "\n" for k in keys)


def _key(lineno: int, raw: bytes) -> int:
    try:
        key = json.loads(raw)["key"]
    except (ValueError, KeyError) as exc:
        raise DataError(f"line {lineno}: not one of ours") from exc
    return int(key)


def test_torn_last_line_is_cut_once_every_complete_line_is_read(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(_rows(1, 2) + '{"key": 3, "val')  # kill -9 mid-write
    assert [n for n, _ in complete_lines(out)] == [1, 2]
    assert out.read_text() == _rows(1, 2)


def test_torn_tail_is_kept_when_the_reader_stops_early(tmp_path: Path) -> None:
    out = tmp_path / "foreign.jsonl"
    text = "not json\n" + _rows(1) + "no newline at the end"
    out.write_text(text)
    with pytest.raises(DataError, match="line 1: not one of ours"):
        ResumableOutput[int](out, CONFIG).resume(_key)
    assert out.read_text() == text  # a file that is not ours is not touched


def test_without_repair_the_torn_line_is_read_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(_rows(1) + "torn")
    assert [raw for _, raw in complete_lines(out, repair=False)] == [_rows(1).encode(), b"torn"]
    assert out.read_text().endswith("torn")


def test_resume_returns_the_done_keys_and_appends_skip_them(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = ResumableOutput[int](out, CONFIG)
    first.prepare(overwrite=False)
    assert first.resume(_key) == set()
    first.check_and_record()
    with first.append() as writer:
        writer.write(_rows(1, 2, 3))
    with out.open("a") as f:
        f.write('{"key": 4, "va')  # the run is killed while writing row 4

    again = ResumableOutput[int](out, CONFIG)
    done = again.resume(_key)
    assert done == {1, 2, 3} and again.found == 3
    again.check_and_record()
    with again.append() as writer:
        writer.write(_rows(*(k for k in range(1, 6) if k not in done)))
    assert [json.loads(line)["key"] for line in out.read_text().splitlines()] == [1, 2, 3, 4, 5]


def test_rows_to_run_again_are_dropped_and_the_rest_kept_in_order(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(_rows(1, 2, 3, 4))
    done = ResumableOutput[int](out, CONFIG).resume(lambda n, raw: None if _key(n, raw) % 2 else _key(n, raw))
    assert done == {2, 4}
    assert out.read_text() == _rows(2, 4)
    assert list(tmp_path.iterdir()) == [out]  # rewritten atomically: no temporary file left


def test_a_repeated_key_is_refused_naming_the_line_or_dropped(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(_rows(1, 2, 1))
    with pytest.raises(DataError, match=r"out\.jsonl:3: duplicate row 1; pass --overwrite"):
        ResumableOutput[int](out, CONFIG).resume(_key)
    assert ResumableOutput[int](out, CONFIG).resume(_key, duplicates="drop") == {1, 2}
    assert out.read_text() == _rows(1, 2)


def test_another_configuration_is_refused_naming_each_changed_field(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    RunRecord(out, CONFIG).write()
    changed = {**CONFIG, "env_args": {"size": 8}, "policy": "noop"}
    with pytest.raises(ConfigError) as info:
        RunRecord(out, changed).check()
    message = str(info.value)
    assert "another configuration (changed: env_args.size: 4 → 8; policy: 'oracle' → 'noop')" in message
    assert "--overwrite" in message
    labelled = RunRecord(out, changed, labels={"env_args": "environment argument"})
    with pytest.raises(ConfigError, match="environment argument size: 4 → 8"):
        labelled.check()
    with pytest.raises(ConfigError, match=r"policy: 'oracle' → None"):  # a field this run lacks counts too
        RunRecord(out, {k: v for k, v in CONFIG.items() if k != "policy"}).check()
    RunRecord(out, CONFIG).check()  # the same configuration resumes


def test_state_keys_are_recorded_but_not_compared(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    RunRecord(out, CONFIG).write(complete=True, rows=12)
    assert json.loads(meta_path(out).read_text()) == {**CONFIG, "complete": True, "rows": 12}
    RunRecord(out, CONFIG).check()


def test_an_output_without_a_record_resumes_and_gets_one(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(_rows(1))  # written before records existed
    output = ResumableOutput[int](out, CONFIG)
    assert output.resume(_key) == {1}
    output.check_and_record()
    assert json.loads(meta_path(out).read_text()) == CONFIG


def test_an_unreadable_record_is_a_data_error_with_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    meta_path(out).write_text("{not json")
    with pytest.raises(DataError, match=r"not a readable run record.*--overwrite"):
        RunRecord(out, CONFIG).check()


def test_overwrite_removes_the_output_and_its_record(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "out.jsonl"
    out.parent.mkdir()
    out.write_text(_rows(1))
    RunRecord(out, CONFIG).write()
    output = ResumableOutput[int](out, {**CONFIG, "policy": "noop"})
    output.prepare(overwrite=True)
    assert not out.exists() and not meta_path(out).exists()
    assert output.resume(_key) == set()
    output.check_and_record()  # nothing to resume: the new configuration is recorded


def test_each_append_is_on_disk_before_the_writer_closes(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    writer = AppendWriter(out)
    writer.write(_rows(1))
    assert out.read_text() == _rows(1)  # flushed: a kill -9 now loses nothing written
    writer.close()
    writer.close()  # closing twice is harmless
