"""`serve`: an rlvr environment as an OpenEnv server under uvicorn (`rlvr serve`).

WebSocket keepalive pings (uvicorn's `ws_ping_interval`/`ws_ping_timeout`) free the slot of a
half-open client (one that vanished without closing: it answers no ping), and OpenEnv's idle
reaper (`idle_timeout_s`) the slot of a client that stays connected but sends nothing. On SIGTERM
or SIGINT uvicorn closes the connections, each session's sandbox is closed with it, then every
remaining session and the shared environment are closed and `serve` returns.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from rlvr.adapters.openenv.server import DEFAULT_SPLIT, ServedHost, create_served_app
from rlvr.core.errors import MissingExtraError
from rlvr.environments.base import Environment

__all__ = ["serve", "uvicorn_config"]


def uvicorn_config(app: Any, *, host: str = "127.0.0.1", port: int = 8000, ping_interval_s: float = 20.0,
                   ping_timeout_s: float = 20.0, log_level: str = "info") -> Any:
    """Uvicorn's `Config` for a served app: keepalive pings on, a bounded graceful shutdown."""
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtraError("uvicorn", "openenv") from exc
    return uvicorn.Config(app, host=host, port=port, ws="websockets-sansio", ws_ping_interval=ping_interval_s,
                          ws_ping_timeout=ping_timeout_s, timeout_graceful_shutdown=5, log_level=log_level,
                          lifespan="on")


def _server(config: Any) -> Any:
    """A uvicorn `Server` that ends on SIGTERM/SIGINT without re-raising the signal afterwards.

    uvicorn re-raises a captured signal once it has shut down, which kills the process before
    `serve` can close the sessions left and the environment (and makes the exit status -15).
    """
    import uvicorn

    class Server(uvicorn.Server):  # type: ignore[misc]
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server(config)


def serve(env: Environment, *, host: str = "127.0.0.1", port: int = 8000, max_sessions: int = 64,
          idle_timeout_s: float | None = 300.0, ping_interval_s: float = 20.0, ping_timeout_s: float = 20.0,
          split: str = DEFAULT_SPLIT, log_level: str = "info") -> None:
    """Serve `env` until SIGTERM/SIGINT, then close every session, its sandbox, and `env`.

    Args:
        env: the loaded rlvr environment (closed when the server stops).
        host: interface to bind (loopback by default; the server has no authentication).
        port: TCP port.
        max_sessions: most concurrent WebSocket sessions; past it a new one is refused.
        idle_timeout_s: close a session idle this long (seconds); None: never.
        ping_interval_s: seconds between WebSocket keepalive pings.
        ping_timeout_s: seconds a client has to answer a ping before its connection (and session) is dropped.
        split: the task API's name for the environment's tasks.
        log_level: uvicorn's log level.
    """
    shared = ServedHost(env, split)
    app = create_served_app(env, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s, host=shared)
    server = _server(uvicorn_config(app, host=host, port=port, ping_interval_s=ping_interval_s,
                                    ping_timeout_s=ping_timeout_s, log_level=log_level))
    try:
        server.run()
    finally:
        shared.close_all()
        env.close()
