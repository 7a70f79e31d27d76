"""Grader for render-config-template: exact comparison with the expected files."""

import os
from pathlib import Path

TESTS = Path(os.environ.get("TEST_DIR", "/tests"))
DEPLOY = Path("/app/deploy")


def _read(name):
    path = DEPLOY / name
    assert path.is_file(), f"missing {path}"
    return path.read_text()


def test_app_env():
    got = [ln for ln in _read("app.env").splitlines() if ln.strip()]
    assert got == (TESTS / "app.env.expected").read_text().splitlines()


def test_nginx_conf():
    got = _read("nginx.conf")
    assert "${" not in got, "unreplaced placeholders remain"
    assert got.rstrip("\n") == (TESTS / "nginx.conf.expected").read_text().rstrip("\n")
