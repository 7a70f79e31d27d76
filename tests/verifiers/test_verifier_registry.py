"""Verifiers by name: built-ins, 'module:Class' entry points, and loud failures."""

from __future__ import annotations

import pytest

from rlvr.core.errors import ConfigError
from rlvr.verifiers.registry import get_verifier, verifier_names
from rlvr.verifiers.testing import ConstantVerifier


def test_builtin_names() -> None:
    assert {"math", "reasoning_gym", "constant"} <= set(verifier_names())
    v = get_verifier("math", timeout_s=3)
    assert v.name == "math" and v.config.timeout_s == 3


def test_entry_point_name() -> None:
    v = get_verifier("rlvr.verifiers.testing:ConstantVerifier", status="incorrect", reward=0.0)
    assert isinstance(v, ConstantVerifier) and v.status == "incorrect"


def test_unknown_name_and_options() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'math'"):
        get_verifier("maths")
    with pytest.raises(ConfigError, match=r"unknown option.*timout_s"):
        get_verifier("math", timout_s=3)
    with pytest.raises(ConfigError, match="rejected its configuration"):
        get_verifier("math", timeout_s=-1)
    with pytest.raises(ConfigError, match="not a Verifier"):
        get_verifier("rlvr.core.types:Message", role="user")
