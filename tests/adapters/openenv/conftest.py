"""Fixtures of the `rlvr serve` tests: a real server on loopback (`tests/openenv_serving.serving`)."""

from __future__ import annotations

import pytest

pytest.importorskip("openenv")

from openenv_serving import Serving, serving


@pytest.fixture
def serve_env() -> Serving:
    """`with serve_env(env, max_sessions=..., idle_timeout_s=...) as (url, host): ...`."""
    return serving
