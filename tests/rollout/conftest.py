"""Fixtures for the episode layer's tests: SmolLM2's real tokenizer (embedded, offline), a small multi-turn env."""

from __future__ import annotations

from typing import Any

import pytest

from guess_env import GuessEnv


@pytest.fixture(scope="module")
def tok(smollm2_tokenizer: Any) -> Any:
    return smollm2_tokenizer


@pytest.fixture
def guess_env() -> GuessEnv:
    return GuessEnv()
