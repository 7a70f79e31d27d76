"""Fixtures for runner tests: a small multi-turn environment (see guess_env.py)."""

from __future__ import annotations

import pytest

from guess_env import GuessEnv


@pytest.fixture
def guess_env() -> GuessEnv:
    return GuessEnv()
