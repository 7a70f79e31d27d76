"""Fixtures of the SQL verifier tests (helpers live in `sqlhelp`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlhelp import DATA, make_shop_db


@pytest.fixture
def shop_db(tmp_path: Path) -> Path:
    return make_shop_db(tmp_path / "shop.sqlite")


@pytest.fixture(scope="session")
def sql_data() -> Path:
    if not (DATA / "bird" / "superhero" / "superhero.sqlite").is_file():
        pytest.skip(f"shared SQL data {DATA} is absent")
    return DATA


@pytest.fixture
def writable_superhero(sql_data: Path, tmp_path: Path) -> Path:
    """A writable copy of the real superhero database (the shared file itself is read-only)."""
    target = tmp_path / "superhero.sqlite"
    shutil.copyfile(sql_data / "bird" / "superhero" / "superhero.sqlite", target)
    target.chmod(0o644)
    return target
