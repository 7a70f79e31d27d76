"""Fixtures of the MCP environment tests: real MCP servers (the misbehaving test server, the reference git server)."""

from __future__ import annotations

from pathlib import Path

SERVERS = Path(__file__).resolve().parent / "servers"
MISBEHAVING = SERVERS / "misbehaving.py"
