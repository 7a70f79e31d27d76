"""Grader for count-log-errors: recompute the counts from pristine copies of the logs."""

import gzip
import hashlib
import os
from collections import Counter
from pathlib import Path

DATA = Path(os.environ.get("TEST_DIR", "/tests")) / "data"
REPORT = Path("/app/report")


def _fields(line):
    out = {}
    for token in line.split():
        key, sep, value = token.partition("=")
        if sep and key not in out:
            out[key] = value
    return out


def _expected():
    counts = Counter()
    for name in ("app.log", "app.log.1", "app.log.2"):
        for line in (DATA / name).read_text().splitlines():
            f = _fields(line)
            if f.get("level") == "ERROR":
                counts[f["service"]] += 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def test_errors_by_service():
    path = REPORT / "errors_by_service.tsv"
    assert path.is_file(), "missing /app/report/errors_by_service.tsv"
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    got = []
    for ln in lines:
        parts = ln.split("\t")
        assert len(parts) == 2, f"not SERVICE<TAB>COUNT: {ln!r}"
        got.append((parts[0], int(parts[1])))
    assert got == _expected()


def test_total_errors():
    path = REPORT / "total_errors.txt"
    assert path.is_file(), "missing /app/report/total_errors.txt"
    assert path.read_text().strip() == str(sum(n for _, n in _expected()))


def test_logs_untouched():
    for name in ("app.log", "app.log.1"):
        assert (Path("/app/logs") / name).read_bytes() == (DATA / name).read_bytes()
    with gzip.open("/app/logs/app.log.2.gz", "rb") as fh:
        data = fh.read()
    assert hashlib.sha256(data).digest() == hashlib.sha256((DATA / "app.log.2").read_bytes()).digest()
