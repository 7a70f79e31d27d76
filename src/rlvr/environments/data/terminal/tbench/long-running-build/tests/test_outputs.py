"""Grader for long-running-build: recompute the release bundle independently."""

import hashlib
from pathlib import Path

APP = Path("/app")
ROUNDS = 200_000
MODULES = ["cli", "core", "net", "storage", "ui"]
BUILD_SH_SHA256 = "ec9b82758b2c8ff26e882340e0fa6d4faf6d48feb8660a55e96aec9e3b1038ac"


def _derive(mode, source):
    digest = hashlib.sha256(mode.encode() + b"\0" + source).digest()
    for _ in range(ROUNDS):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


def _expected_bundle():
    body = "".join(f"{m} {_derive('release', (APP / 'src' / f'{m}.mod').read_bytes())}\n" for m in MODULES)
    build_id = hashlib.sha256(body.encode()).hexdigest()
    return body + f"MODE release\nBUILD-ID {build_id}\n", build_id


def test_release_bundle():
    assert hashlib.sha256((APP / "build.sh").read_bytes()).hexdigest() == BUILD_SH_SHA256, "build.sh was modified"
    bundle = APP / "dist" / "bundle.txt"
    assert bundle.is_file(), "missing /app/dist/bundle.txt: run the build"
    assert bundle.read_text() == _expected_bundle()[0]
    log = (APP / "dist" / "build.log").read_text()
    assert "compiling modules (mode=release)" in log
    assert "build finished:" in log


def test_version_file():
    version = APP / "dist" / "VERSION"
    assert version.is_file(), "missing /app/dist/VERSION"
    assert version.read_text() == f"2.4.0+{_expected_bundle()[1][:12]}\n"
