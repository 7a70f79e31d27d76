"""Without the `mcp` extra: the package imports, and building an MCP environment names the install to run."""

from __future__ import annotations

import importlib
import importlib.util

import pytest

from rlvr.core.errors import MissingExtraError
from rlvr.environments.registry import make


def test_without_the_mcp_extra_the_error_names_the_install() -> None:
    importlib.import_module("rlvr.environments.mcp")  # importable without the SDK

    if importlib.util.find_spec("mcp.client") is not None:  # tests/environments/mcp makes `mcp` importable
        pytest.skip("the mcp extra is installed here (the extras and TRL suites)")
    for env_id, kwargs in (("mcp/git-v1", {}),
                           ("mcp/tools-v1", {"server": "{python} -m my_server", "tasks": [], "verifier": "math"})):
        with pytest.raises(MissingExtraError, match=r"pip install 'rlvr\[mcp\]'"):
            make(env_id, **kwargs)
