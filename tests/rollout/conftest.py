"""Fixtures for the episode layer's tests: SmolLM2's real tokenizer (embedded, loads offline)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def tok(smollm2_tokenizer: Any) -> Any:
    return smollm2_tokenizer
