"""The judge tests' loopback server: `rlvr.verifiers.judge.testing` plus the `judge_server` fixture body.

Lives in tests/ (on sys.path through tests/conftest.py) so judge, runner and adapter tests share it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.verifiers.judge.testing import JudgeServer, Reply, chat_body, ids_in, ruler_reply

__all__ = ["JudgeServer", "Reply", "chat_body", "ids_in", "judge_server", "ruler_reply", "serve"]


def serve() -> Iterator[JudgeServer]:
    """A started `JudgeServer`, closed after use (the body of each folder's `judge_server` fixture)."""
    with JudgeServer() as server:
        yield server


judge_server = pytest.fixture(serve, name="judge_server")
