"""Grader for fix-permissions: exact modes for every path under /app/site."""

import hashlib
import stat
from pathlib import Path

SITE = Path("/app/site")
EXPECTED = {
    ".": 0o755,
    "index.html": 0o644,
    "about.html": 0o644,
    "css": 0o755,
    "css/main.css": 0o644,
    "cgi-bin": 0o755,
    "cgi-bin/status.sh": 0o755,
    "cgi-bin/time.sh": 0o755,
    "cgi-bin/README.txt": 0o644,
    "deploy.sh": 0o755,
    "assets": 0o755,
    "assets/img": 0o755,
    "assets/img/logo.gif": 0o644,
    "private": 0o700,
    "private/keys": 0o700,
    "private/keys/server.key": 0o600,
    "private/credentials.env": 0o600,
    "private/rotate.sh": 0o700,
}
CONTENT_SHA256 = {
    "index.html": "c0d39a1de5bc01838c74268fc0fd9b9673fc99c98c7e86e57311341ebf6e9843",
    "private/credentials.env": "6b2058d2d6507763424f4da20e2107a1d8811e1d1edc0027c3f2adec4b946ee8",
}


def _mode(rel):
    return stat.S_IMODE((SITE / rel).lstat().st_mode)


def test_tree_unchanged():
    got = {"."} | {str(p.relative_to(SITE)) for p in SITE.rglob("*")}
    assert got == set(EXPECTED), "files were added, removed or renamed"
    for rel, digest in CONTENT_SHA256.items():
        assert hashlib.sha256((SITE / rel).read_bytes()).hexdigest() == digest


def test_public_modes():
    public = {rel: mode for rel, mode in EXPECTED.items() if not rel.startswith("private")}
    wrong = {rel: oct(_mode(rel)) for rel, mode in public.items() if _mode(rel) != mode}
    assert not wrong, f"wrong modes: {wrong}"


def test_private_modes():
    private = {rel: mode for rel, mode in EXPECTED.items() if rel.startswith("private")}
    wrong = {rel: oct(_mode(rel)) for rel, mode in private.items() if _mode(rel) != mode}
    assert not wrong, f"wrong modes: {wrong}"
