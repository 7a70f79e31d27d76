"""Grader for extract-nested-archive: the restored tree must equal the original payload."""

import hashlib
import os
import subprocess
from pathlib import Path

PAYLOAD = Path(os.environ.get("TEST_DIR", "/tests")) / "payload"
RESTORED = Path("/app/restored")


def _expected():
    """Relative path under /app/restored -> bytes."""
    files = {}
    for p in (PAYLOAD / "site").rglob("*"):
        if p.is_file():
            files[str(p.relative_to(PAYLOAD))] = p.read_bytes()
    for p in (PAYLOAD / "assets").rglob("*"):
        if p.is_file():
            files["site/assets/" + str(p.relative_to(PAYLOAD / "assets"))] = p.read_bytes()
    return files


def test_restored_tree_matches_backup():
    expected = _expected()
    site = RESTORED / "site"
    assert site.is_dir(), "missing /app/restored/site"
    got = {str(p.relative_to(RESTORED)): p for p in site.rglob("*") if p.is_file()}
    leftovers = [name for name in got if name.endswith((".zip", ".gz"))]
    assert not leftovers, f"archives left in the tree: {leftovers}"
    assert sorted(got) == sorted(expected)
    for name, data in expected.items():
        assert got[name].read_bytes() == data, f"{name} differs from the backup"


def test_manifest():
    manifest = RESTORED / "MANIFEST.sha256"
    assert manifest.is_file(), "missing /app/restored/MANIFEST.sha256"
    expected = _expected()
    lines = manifest.read_text().splitlines()
    paths = [ln[66:] for ln in lines]
    assert paths == sorted(expected, key=lambda s: s.encode()), "manifest must list every file, sorted by path"
    for ln in lines:
        digest, sep, path = ln[:64], ln[64:66], ln[66:]
        assert sep == "  ", f"not sha256sum format: {ln!r}"
        assert digest == hashlib.sha256(expected[path]).hexdigest(), f"wrong hash for {path}"
    check = subprocess.run(["sha256sum", "-c", "MANIFEST.sha256"], cwd=RESTORED, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_backup_kept():
    assert Path("/app/incoming/backup.tar.gz").is_file()
