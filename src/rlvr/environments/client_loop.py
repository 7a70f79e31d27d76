"""`ClientLoop`: the one event loop (a daemon thread) on which the protocol clients of remote environments run.

Protocol clients are async and bound to the loop they connected on -- OpenEnv's `GenericEnvClient`
(`openenv/remote-v1`), an MCP `ClientSession` and its transport (`mcp/tools-v1`) -- while rlvr
episodes run on whatever loop their caller has (rlvr's driver, veRL's agent loop, TRL's
`asyncio.run` per call, `reset_sync`). Every client call is a coroutine scheduled here and awaited
from the caller's loop (`call`) or waited for by sync code (`call_sync`): no thread is held per
session or per call, so hundreds of concurrent episodes cost one thread (OpenEnv's own `.sync()`
wrapper starts a thread per client, and `asyncio.to_thread` caps in-flight calls at the default
executor's size: 6 on a 2-core machine).

The thread lives as long as the process, so a sandbox started from it (bubblewrap's
`--die-with-parent` fires when the *thread* that started it exits) lives until it is closed or the
process dies.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["ClientLoop"]

T = TypeVar("T")


class ClientLoop:
    """The process-wide client event loop (see the module docstring); class methods only."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def loop(cls) -> asyncio.AbstractEventLoop:
        """The running client loop (started on first use)."""
        with cls._lock:
            if cls._loop is None or cls._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="rlvr-protocol-clients", daemon=True).start()
                cls._loop = loop
            return cls._loop

    @classmethod
    async def call(cls, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the client loop and await its result from the caller's loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, cls.loop()))

    @classmethod
    def call_sync(cls, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run `coro` on the client loop and wait for its result (sync code; not from the client loop itself).

        Raises:
            TimeoutError: no result within `timeout_s` seconds (the coroutine keeps running).
        """
        return asyncio.run_coroutine_threadsafe(coro, cls.loop()).result(timeout_s)
