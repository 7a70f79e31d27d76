"""Fixtures for `rlvr forge` tests (the project they use is in `_tinycalc`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _tinycalc import write_tinycalc


@pytest.fixture
def tinycalc(tmp_path: Path) -> Path:
    return write_tinycalc(tmp_path / "src")


@pytest.fixture(scope="session")
def tinycalc_forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A forge output folder with tasks made from `tinycalc` (built once per session)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap missing (apt install bubblewrap)")
    from rlvr.runners.forge import forge

    base = tmp_path_factory.mktemp("forged")
    project = write_tinycalc(base / "src")
    out = base / "tasks"
    report = forge([str(project)], out=out, n=3, seed=1, max_tests=6)
    assert report.validated == 3, report.model_dump_json(indent=1)
    return out
