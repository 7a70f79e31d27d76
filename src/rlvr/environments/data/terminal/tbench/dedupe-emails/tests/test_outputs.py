"""Grader for dedupe-emails: recompute the three outputs from a pristine copy of the input."""

import os
import re
from pathlib import Path

SOURCE = Path(os.environ.get("TEST_DIR", "/tests")) / "subscribers.txt"
DATA = Path("/app/data")
VALID = re.compile(r"^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)+$")


def _expected():
    entries = []
    for raw in SOURCE.read_bytes().decode().split("\n"):
        line = raw.strip(" \t\r\n")
        if not line or line.startswith("#"):
            continue
        entries.append(line.lower())
    valid = sorted({e for e in entries if VALID.match(e)}, key=str.encode)
    invalid = list(dict.fromkeys(e for e in entries if not VALID.match(e)))
    return valid, invalid, len(entries) - len(valid) - len(invalid)


def _lines(name):
    path = DATA / name
    assert path.is_file(), f"missing {path}"
    data = path.read_bytes()
    assert b"\r" not in data, f"{name} must use \\n line endings"
    return data.decode().splitlines()


def test_clean():
    assert _lines("clean.txt") == _expected()[0]


def test_invalid():
    assert _lines("invalid.txt") == _expected()[1]


def test_stats_and_input_untouched():
    valid, invalid, dups = _expected()
    assert _lines("stats.txt") == [f"valid={len(valid)}", f"invalid={len(invalid)}", f"duplicates={dups}"]
    assert (DATA / "subscribers.txt").read_bytes() == SOURCE.read_bytes()
