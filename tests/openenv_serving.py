"""A real `rlvr serve` app under uvicorn on loopback, in a background thread (the tests' server)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from rlvr.adapters.openenv.serve import uvicorn_config
from rlvr.adapters.openenv.server import ServedHost, create_served_app
from rlvr.core.types import Message, Task
from rlvr.environments.base import Environment

Serving = Callable[..., AbstractContextManager[tuple[str, ServedHost]]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(env: Environment, *, ping_interval_s: float = 20.0, ping_timeout_s: float = 20.0,
            **app_kwargs: Any) -> Iterator[tuple[str, ServedHost]]:
    """Serve `env` (not closed afterwards) on a free loopback port; yields (base URL, the shared host)."""
    import uvicorn

    app = create_served_app(env, **app_kwargs)
    port = free_port()
    server = uvicorn.Server(uvicorn_config(app, port=port, ping_interval_s=ping_interval_s,
                                           ping_timeout_s=ping_timeout_s, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app.state.rlvr_host
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def wire(message: Message) -> dict[str, Any]:
    """An assistant message as a ChatAction payload (its content and tool calls)."""
    return {k: v for k, v in message.to_openai().items() if k in ("content", "tool_calls")}


def oracle_action(env: Environment, task: Task) -> dict[str, Any]:
    """The first of the env's reference actions for `task`, as a ChatAction payload."""
    actions = env.reference_actions(task)
    assert actions is not None
    return wire(actions[0])
