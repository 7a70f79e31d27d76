"""Grader for csv-to-json: compare with a conversion of a pristine copy of the CSV."""

import csv
import json
import os
from pathlib import Path

import pytest

CSV = Path(os.environ.get("TEST_DIR", "/tests")) / "employees.csv"
OUT = Path("/app/out")


def _rows():
    with CSV.open(newline="") as f:
        return list(csv.DictReader(f))


def _load(name):
    path = OUT / name
    assert path.is_file(), f"missing {path}"
    return json.loads(path.read_text())


def test_employees_json():
    got = _load("employees.json")
    assert isinstance(got, list)
    rows = sorted(_rows(), key=lambda r: int(r["id"]))
    assert len(got) == len(rows)
    for obj, row in zip(got, rows, strict=True):
        assert set(obj) == {"id", "name", "department", "salary", "start_date", "active"}
        assert type(obj["id"]) is int and obj["id"] == int(row["id"])
        assert obj["name"] == row["name"]
        assert obj["department"] == row["department"]
        assert isinstance(obj["salary"], (int, float)) and not isinstance(obj["salary"], bool)
        assert obj["salary"] == pytest.approx(float(row["salary"]))
        assert obj["start_date"] == row["start_date"]
        assert obj["active"] is (row["active"] == "Y")


def test_departments_json():
    got = _load("departments.json")
    rows = _rows()
    names = {r["department"] for r in rows}
    assert set(got) == names
    for name in names:
        members = [r for r in rows if r["department"] == name]
        entry = got[name]
        assert set(entry) == {"headcount", "active", "avg_salary"}
        assert entry["headcount"] == len(members)
        assert entry["active"] == sum(r["active"] == "Y" for r in members)
        mean = sum(float(r["salary"]) for r in members) / len(members)
        assert entry["avg_salary"] == pytest.approx(round(mean, 2), abs=0.005)
