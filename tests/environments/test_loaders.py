"""Dataset loaders: jsonl/json/parquet files, line-numbered errors, the Hub failure, TaskList."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from rlvr.core.errors import DataError
from rlvr.core.types import Task
from rlvr.environments import loaders
from rlvr.environments.loaders import Rows, TaskList, load_rows, require_field

ROWS = [{"question": "1+1?", "answer": "#### 2"}, {"question": "2+2?", "answer": "#### 4"}]


def _jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_jsonl_rows_know_their_lines(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [json.dumps(ROWS[0]), "", json.dumps(ROWS[1])])
    rows = load_rows(path)
    assert isinstance(rows, Rows) and list(rows) == ROWS
    assert rows.where(1) == f"{path}:3"  # blank line 2 skipped, location kept


def test_json_list_and_split_mapping(tmp_path: Path) -> None:
    plain = tmp_path / "a.json"
    plain.write_text(json.dumps(ROWS))
    assert list(load_rows(plain)) == ROWS
    splits = tmp_path / "b.json"
    splits.write_text(json.dumps({"test": ROWS[:1], "train": ROWS}))
    assert list(load_rows(splits, split="test")) == ROWS[:1]
    with pytest.raises(DataError, match="no split 'dev'"):
        load_rows(splits, split="dev")


def test_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    rows = load_rows(path)
    assert list(rows) == ROWS
    assert rows.where(1) == f"{path} row 1"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question": "x"}', "{not json"], r"d\.jsonl:2: not valid JSON"),
        (['{"question": "x"}', "[1, 2]"], r"d\.jsonl:2: expected a JSON object per line, got list"),
    ],
    ids=["bad-json", "not-object"],
)
def test_bad_jsonl_lines_name_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    with pytest.raises(DataError, match=message):
        load_rows(_jsonl(tmp_path / "d.jsonl", lines))


def test_missing_file_and_suffix(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        load_rows(tmp_path / "nope.jsonl")
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n")
    with pytest.raises(DataError, match=r"unsupported suffix '\.csv'"):
        load_rows(csv)
    with pytest.raises(DataError, match="pass path="):
        load_rows()


def test_require_field_names_location_field_and_keys() -> None:
    with pytest.raises(DataError, match=r"f\.jsonl:3: missing field 'answer' \(row has keys: question\)"):
        require_field({"question": "q"}, "answer", "f.jsonl:3")
    with pytest.raises(DataError, match="field 'answer' should be str, got int"):
        require_field({"answer": 3}, "answer", "f.jsonl:3")


def test_hub_failure_is_a_clear_data_error(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(loaders, "hub_unreachable", lambda: None)

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("Couldn't reach 'openai/gsm8k' on the Hub")

    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    with pytest.raises(DataError, match=r"Hugging Face Hub.*pass path=FILE.*--env-arg path=FILE"):
        load_rows(hf_id="openai/gsm8k", hf_config="main", split="test")


def test_hub_rows_are_loaded_through_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(loaders, "hub_unreachable", lambda: None)
    seen: dict[str, Any] = {}

    def fake(hf_id: str, config: str | None, split: str) -> list[dict[str, Any]]:
        seen.update(hf_id=hf_id, config=config, split=split)
        return ROWS

    monkeypatch.setattr(datasets, "load_dataset", fake)
    rows = load_rows(hf_id="openai/gsm8k", hf_config="main", split="test")
    assert list(rows) == ROWS and seen == {"hf_id": "openai/gsm8k", "config": "main", "split": "test"}
    assert rows.where(0) == "hf:openai/gsm8k[test] row 0"


def _no_hub_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy",
                "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)


def test_unreachable_hub_fails_fast_without_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    _no_hub_env(monkeypatch)
    tried: list[Any] = []

    def refuse(address: Any, timeout: float) -> None:
        tried.append((address, timeout))
        raise OSError("Network is unreachable")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("load_dataset must not be called"))
    start = time.monotonic()
    with pytest.raises(DataError, match=r"huggingface\.co:443 is unreachable.*pass path=FILE.*HF_DATASETS_OFFLINE=1"):
        load_rows(hf_id="openai/gsm8k", hf_config="main", split="test")
    assert time.monotonic() - start < 1 and tried == [(("huggingface.co", 443), loaders.HUB_CHECK_TIMEOUT_S)]


def test_hub_check_is_skipped_offline_or_behind_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_hub_env(monkeypatch)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("no connect expected"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert loaders.hub_unreachable() is None
    monkeypatch.delenv("HF_DATASETS_OFFLINE")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert loaders.hub_unreachable() is None


def test_hub_check_uses_hf_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_hub_env(monkeypatch)
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.local:8080")
    tried: list[Any] = []

    class _Conn:
        def __enter__(self) -> _Conn:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def connect(address: Any, timeout: float) -> _Conn:
        tried.append(address)
        return _Conn()

    monkeypatch.setattr(socket, "create_connection", connect)
    assert loaders.hub_unreachable() is None and tried == [("mirror.local", 8080)]


def test_task_list_is_lazy_and_cached() -> None:
    built: list[int] = []

    def convert(i: int, item: str) -> Task:
        built.append(i)
        return Task(id=str(i), prompt=[{"role": "user", "content": item}], reference=item)

    tasks = TaskList(["a", "b", "c"], convert)
    assert len(tasks) == 3 and built == []
    assert tasks[-1].reference == "c" and tasks[2] is tasks[-1]
    assert built == [2]
    assert [t.id for t in tasks[0:2]] == ["0", "1"]
    assert [t.id for t in tasks] == ["0", "1", "2"]
    with pytest.raises(IndexError):
        tasks[3]
