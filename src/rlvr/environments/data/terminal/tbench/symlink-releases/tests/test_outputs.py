"""Grader for symlink-releases."""

import os
import subprocess
from pathlib import Path

APP = Path("/app")


def test_current_and_previous():
    for name, version in (("current", "v1.10.0"), ("previous", "v1.9.3")):
        link = APP / name
        assert link.is_symlink(), f"/app/{name} must be a symbolic link"
        assert os.readlink(link) == f"releases/{version}", f"/app/{name} -> {os.readlink(link)}"


def test_bin_app():
    link = APP / "bin" / "app"
    assert link.is_symlink()
    assert os.readlink(link) == "../current/bin/app"
    out = subprocess.run([str(link)], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == "app 1.10.0"


def test_dangling_links_removed():
    shared = APP / "shared"
    links = {str(p.relative_to(shared)): os.readlink(p) for p in shared.rglob("*") if p.is_symlink()}
    assert links == {"app.yaml": "config/app.yaml", "current.log": "logs/app.log", "config/alias": "app.yaml"}
    assert (shared / "config" / "app.yaml").read_text() == "listen: 8080\n"
    assert (shared / "logs" / "app.log").read_text() == "started\n"
    versions = sorted(p.name for p in (APP / "releases").iterdir())
    assert versions == ["v0.9.12", "v1.10.0", "v1.10.0-rc1", "v1.11.0-beta.2", "v1.2.0", "v1.9.3"]
    assert not any(p.is_symlink() for p in (APP / "releases").rglob("*"))
