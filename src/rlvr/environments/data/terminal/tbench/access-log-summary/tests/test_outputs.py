"""Grader for access-log-summary: recompute the summary from a pristine copy of the log."""

import json
import os
import shlex
from collections import Counter
from pathlib import Path

import pytest

LOG = Path(os.environ.get("TEST_DIR", "/tests")) / "access.log"
SUMMARY = Path("/app/report/summary.json")


def _expected():
    ips, statuses, paths, size = set(), Counter(), Counter(), 0
    lines = [ln for ln in LOG.read_text().splitlines() if ln.strip()]
    for line in lines:
        head, _, rest = line.partition(" [")
        _, _, rest = rest.partition("] ")
        fields = shlex.split(rest)
        request, status, nbytes = fields[0], fields[1], fields[2]
        ips.add(head.split()[0])
        statuses[status] += 1
        paths[request.split()[1].split("?")[0]] += 1
        size += 0 if nbytes == "-" else int(nbytes)
    top = sorted(paths.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:5]
    errors = sum(n for s, n in statuses.items() if s.startswith("5"))
    return {
        "total_requests": len(lines),
        "unique_ips": len(ips),
        "status_counts": dict(statuses),
        "bytes_total": size,
        "top_paths": [{"path": p, "count": n} for p, n in top],
        "server_error_rate": round(errors / len(lines), 4),
    }


def _summary():
    assert SUMMARY.is_file(), "missing /app/report/summary.json"
    return json.loads(SUMMARY.read_text())


def test_counts():
    got, want = _summary(), _expected()
    assert set(got) == set(want)
    for key in ("total_requests", "unique_ips", "bytes_total", "status_counts"):
        assert got[key] == want[key], key


def test_top_paths_and_error_rate():
    got, want = _summary(), _expected()
    assert got["top_paths"] == want["top_paths"]
    assert got["server_error_rate"] == pytest.approx(want["server_error_rate"], abs=1e-9)
