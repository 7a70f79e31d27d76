"""Fixtures for environment tests: the shared data folder (tests skip cleanly without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="session")
def gsm8k_path() -> Path:
    path = DATA / "math" / "gsm8k_test.jsonl"
    if not path.is_file():
        pytest.skip(f"shared data file {path} is absent")
    return path


@pytest.fixture(scope="session")
def math500_path() -> Path:
    path = DATA / "math" / "math500.jsonl"
    if not path.is_file():
        pytest.skip(f"shared data file {path} is absent")
    return path
