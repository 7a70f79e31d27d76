"""Grader for cron-backup-job: the crontab's schedules by meaning, the script by running it."""

import os
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path

SCRIPT = "/app/bin/backup.sh"
CRON = Path("/app/cron/backup.cron")
EXPECTED_MEMBERS = {
    "docs/plan.txt",
    "docs/runbook.md",
    "docs/tmp-notes.txt",
    "reports/2024.csv",
    "reports/q1 summary.csv",
}
NAMES = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
    "sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
}  # fmt: skip
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def _expand(field, lo, hi):
    values = set()
    for part in field.lower().split(","):
        rng, _, step = part.partition("/")
        step = int(step) if step else 1
        if rng == "*":
            start, end = lo, hi
        elif "-" in rng:
            a, b = rng.split("-")
            start, end = int(NAMES.get(a, a)), int(NAMES.get(b, b))
        else:
            start = int(NAMES.get(rng, rng))
            end = hi if step > 1 else start
        values.update(range(start, end + 1, step))
    return values


def _jobs():
    assert CRON.is_file(), "missing /app/cron/backup.cron"
    jobs = []
    for line in CRON.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", line):
            continue
        fields = line.split(None, 5)
        assert len(fields) == 6, f"not a crontab job line: {line!r}"
        sets = [_expand(f, lo, hi) for f, (lo, hi) in zip(fields[:5], RANGES, strict=True)]
        sets[4] = {0 if d == 7 else d for d in sets[4]}
        jobs.append((sets, fields[5]))
    return jobs


def _every(i):
    lo, hi = RANGES[i]
    return set(range(lo, hi + 1)) if i != 4 else set(range(7))


def test_crontab_schedules():
    jobs = _jobs()
    assert len(jobs) == 3, f"want exactly 3 jobs, found {len(jobs)}"
    daily = [j for j in jobs if "backup.sh" in j[1] and "KEEP=30" not in j[1]]
    monthly = [j for j in jobs if "backup.sh" in j[1] and "KEEP=30" in j[1]]
    cleanup = [j for j in jobs if "/app/bin/cleanup_tmp.sh" in j[1]]
    assert len(daily) == len(monthly) == len(cleanup) == 1
    sets, cmd = daily[0]
    assert sets == [{30}, {2}, _every(2), _every(3), _every(4)]
    assert re.search(r"(^|\s)/app/bin/backup\.sh\s*>>\s*/app/logs/backup\.log\s+2>&1\s*$", cmd), cmd
    sets, cmd = monthly[0]
    assert sets == [{0}, {4}, {1}, _every(3), _every(4)]
    assert re.search(r"(^|\s)KEEP=30\s+(bash\s+)?/app/bin/backup\.sh", cmd), cmd
    sets, cmd = cleanup[0]
    assert sets == [{0, 15, 30, 45}, set(range(8, 19)), _every(2), _every(3), {1, 2, 3, 4, 5}]


def _members(archive):
    with tarfile.open(archive, "r:gz") as tar:
        return {re.sub(r"^\./", "", m.name) for m in tar.getmembers() if m.isfile()}


def _run(env):
    clean = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"), **env}
    return subprocess.run([SCRIPT], capture_output=True, text=True, env=clean, timeout=30)


def test_backup_with_defaults():
    assert os.access(SCRIPT, os.X_OK), "backup.sh must be executable"
    proc = _run({})
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"/app/backups/data-\d{8}-\d{6}\.tar\.gz", path), path
    assert _members(path) == EXPECTED_MEMBERS


def test_rotation_keeps_newest():
    with tempfile.TemporaryDirectory() as dest:
        old = [f"data-2020010{d}-0{d}0000.tar.gz" for d in range(1, 10)]
        for name in [*old, "notes.txt", "data-manual.txt"]:
            Path(dest, name).write_text("old")
        proc = _run({"DEST_DIR": dest, "KEEP": "4", "SOURCE_DIR": "/app/data"})
        assert proc.returncode == 0, proc.stderr
        created = proc.stdout.strip().splitlines()[-1]
        left = sorted(os.listdir(dest))
        assert left == sorted([*old[-3:], os.path.basename(created), "notes.txt", "data-manual.txt"])
        assert _members(created) == EXPECTED_MEMBERS


def test_missing_source_fails_cleanly():
    with tempfile.TemporaryDirectory() as dest:
        Path(dest, "data-20200101-000000.tar.gz").write_text("old")
        proc = _run({"DEST_DIR": dest, "KEEP": "0", "SOURCE_DIR": os.path.join(dest, "missing")})
        assert proc.returncode == 1
        assert proc.stderr.strip(), "expected an error message on stderr"
        assert os.listdir(dest) == ["data-20200101-000000.tar.gz"]
