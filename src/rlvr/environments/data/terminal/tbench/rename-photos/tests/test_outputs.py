"""Grader for rename-photos: every file's fate is listed in manifest.json."""

import json
import os
from pathlib import Path

MANIFEST = json.loads((Path(os.environ.get("TEST_DIR", "/tests")) / "manifest.json").read_text())
PHOTOS = Path("/app/photos")
SORTED = Path("/app/sorted")


def _read(path):
    return path.read_bytes().decode("latin-1")


def test_pictures_moved_to_dated_names():
    for entry in MANIFEST:
        if entry["dest"] is None:
            continue
        dest = SORTED / entry["dest"]
        assert dest.is_file(), f"{entry['src']} should be at {dest}"
        assert _read(dest) == entry["content"], f"{dest} holds the wrong picture"
        assert not (PHOTOS / entry["src"]).exists(), f"{entry['src']} was copied, not moved"


def test_other_files_left_alone():
    for entry in MANIFEST:
        if entry["dest"] is not None:
            continue
        src = PHOTOS / entry["src"]
        assert src.is_file(), f"{src} should not have been moved"
        assert _read(src) == entry["content"]


def test_sorted_holds_only_the_pictures():
    assert SORTED.is_dir()
    got = sorted(str(p.relative_to(SORTED)) for p in SORTED.rglob("*") if not p.is_dir())
    assert got == sorted(e["dest"] for e in MANIFEST if e["dest"] is not None)
