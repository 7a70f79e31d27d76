"""Grader for tar-backup-exclusions."""

import subprocess
import tarfile
from pathlib import Path

ARCHIVE = Path("/app/backups/project.tar.gz")
EXPECTED_FILES = {
    "project/.env.example",
    "project/README.md",
    "project/build-notes/web.log.txt",
    "project/docs/catalog.md",
    "project/docs/changelog.txt",
    "project/logs/README.md",
    "project/src/app/__init__.py",
    "project/src/app/main.py",
    "project/web/.env",
    "project/web/index.html",
}


def _members():
    assert ARCHIVE.is_file(), "missing /app/backups/project.tar.gz"
    with ARCHIVE.open("rb") as fh:
        assert fh.read(2) == b"\x1f\x8b", "not gzip-compressed"
    with tarfile.open(ARCHIVE, "r:gz") as tar:
        members = tar.getmembers()
        contents = {m.name.removeprefix("./"): tar.extractfile(m).read() for m in members if m.isfile()}
    return members, contents


def test_archive_members():
    members, contents = _members()
    names = {m.name.removeprefix("./").rstrip("/") for m in members}
    assert all(n == "project" or n.startswith("project/") for n in names), "everything must be under project/"
    assert set(contents) == EXPECTED_FILES
    for bad in ("node_modules", "__pycache__", ".git"):
        assert not any(f"/{bad}" in n for n in names), f"{bad} must be excluded entirely"


def test_archive_contents():
    _, contents = _members()
    for name, data in contents.items():
        assert data == Path("/app", name).read_bytes(), f"{name} differs from the project"


def test_checksum_file():
    proc = subprocess.run(
        ["sha256sum", "-c", "project.tar.gz.sha256"], cwd="/app/backups", capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = Path("/app/backups/project.tar.gz.sha256").read_text().strip()
    assert line.endswith("  project.tar.gz") or line.endswith(" *project.tar.gz")
    assert Path("/app/project/.env").read_text() == "SECRET_KEY=prod-secret\n", "do not modify the project"
