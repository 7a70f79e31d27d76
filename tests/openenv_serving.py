"""A real `rlvr serve` app under uvicorn on loopback, in a background thread (the tests' server)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from rlvr.adapters.openenv.serve import uvicorn_config
from rlvr.adapters.openenv.server import ServedHost, create_served_app
from rlvr.core.types import Message, Task
from rlvr.environments.base import Environment

Serving = Callable[..., AbstractContextManager[tuple[str, ServedHost]]]


def start_server(argv: Sequence[str], port: int, *, cwd: Path | None = None,
                 timeout_s: float = 180.0) -> subprocess.Popen[str]:
    """Start a server process (stdout and stderr piped together) and return it once
    `http://127.0.0.1:{port}/health` answers 200; RuntimeError with its output if it exits or stays down."""
    import httpx

    proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{argv[:4]} exited {proc.returncode}: {proc.communicate()[0]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError(f"{argv[:4]} did not become healthy within {timeout_s:g} s")


def stop_server(proc: subprocess.Popen[str], timeout_s: float = 30.0) -> str:
    """SIGTERM (then SIGKILL past `timeout_s`); returns what the process wrote."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.communicate(timeout=timeout_s)[0] or ""
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[0] or ""


def rlvr_serve(env_id: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """A real `rlvr serve ENV_ID ARGS...` process on a free loopback port: (process, base URL) once healthy."""
    port = free_port()
    argv = [sys.executable, "-m", "rlvr.runners.cli", "serve", env_id, *args, "--port", str(port),
            "--log-level", "warning"]
    return start_server(argv, port), f"http://127.0.0.1:{port}"


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll `condition` every 50 ms; AssertionError naming `what` past `timeout_s` seconds."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(env: Environment, *, ping_interval_s: float = 20.0, ping_timeout_s: float = 20.0,
            **app_kwargs: Any) -> Iterator[tuple[str, ServedHost]]:
    """Serve `env` (not closed afterwards) on a free loopback port; yields (base URL, the shared host)."""
    app = create_served_app(env, **app_kwargs)
    with serving_app(app, ping_interval_s=ping_interval_s, ping_timeout_s=ping_timeout_s) as url:
        yield url, app.state.rlvr_host


@contextmanager
def serving_app(app: Any, *, ping_interval_s: float = 20.0, ping_timeout_s: float = 20.0) -> Iterator[str]:
    """Serve an ASGI app (an OpenEnv server's FastAPI app) under uvicorn on a free loopback port; yields its URL."""
    import uvicorn

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
        yield f"http://127.0.0.1:{port}"
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


@contextmanager
def serving_parity_env(records: Sequence[dict[str, Any]]) -> Iterator[str]:
    """Serve the env of the cross-trainer records (tests/data/parity/episodes.json) on loopback; yields its URL."""
    from rlvr.environments.registry import make

    env_id, env_args = records[0]["env_id"], records[0]["env_args"]
    assert all((r["env_id"], r["env_args"]) == (env_id, env_args) for r in records)
    env = make(env_id, **env_args)
    try:
        with serving(env) as (url, _host):
            yield url
    finally:
        env.close()


def as_served(record: dict[str, Any], url: str) -> dict[str, Any]:
    """`record` as an export of `openenv/remote-v1` at `url` would replay it: the same episode, the remote env
    id and URL, and the remote task's reference (how to pose the task on the server, never its answer)."""
    from rlvr.adapters.export import cached_env

    env_args = {"base_url": url}
    remote_task = next(t for t in cached_env("openenv/remote-v1", env_args).tasks if t.id == record["task_id"])
    return {**record, "env_id": "openenv/remote-v1", "env_args": env_args,
            "reference": json.dumps(remote_task.reference)}
