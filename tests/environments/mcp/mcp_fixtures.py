"""Shared pieces of the MCP environment tests: the misbehaving test server (a real MCP server written with the SDK)."""

from __future__ import annotations

from pathlib import Path

from rlvr.environments.mcp import StdioServer

SERVERS = Path(__file__).resolve().parent / "servers"
MISBEHAVING = SERVERS / "misbehaving.py"


def misbehaving(*flags: str) -> StdioServer:
    """The misbehaving server as a sandboxed stdio server (its script shipped into the sandbox)."""
    return StdioServer(command=("{python}", "server.py", *flags), files=(("server.py", MISBEHAVING.read_bytes()),),
                       packages=("mcp",))
