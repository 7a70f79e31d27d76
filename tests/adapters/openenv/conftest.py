"""Fixtures of the `rlvr serve` tests: a real server on loopback (`tests/openenv_serving.serving`).

Without the `openenv` extra (the core suite's venv) the tests here are not collected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import rlvr
from rlvr.environments.base import Environment

try:  # `openenv.core`, not `openenv`: the test folders named openenv are namespace packages on sys.path
    import openenv.core  # noqa: F401
except ImportError:  # the core venv: nothing here is collected
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture
def serve_env() -> Any:
    """`with serve_env(env, max_sessions=..., idle_timeout_s=...) as (url, host): ...` (`openenv_serving.Serving`)."""
    from openenv_serving import serving

    return serving


@pytest.fixture(scope="module")
def math_env() -> Iterator[Environment]:
    """A small offline math env (8 reasoning-gym arithmetic tasks)."""
    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=8, seed=11)
    yield env
    env.close()


@pytest.fixture(scope="module")
def tool_env() -> Iterator[Environment]:
    """A small offline tool env (3 reasoning-gym arithmetic tasks with the calculator tool)."""
    env = rlvr.make("math/reasoning-gym-tool-v1", task="basic_arithmetic", size=3, seed=5)
    yield env
    env.close()
