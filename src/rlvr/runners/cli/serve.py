"""`rlvr serve`: an rlvr environment behind OpenEnv's own server (`rlvr.adapters.openenv.serve`)."""

from __future__ import annotations

from typing import Annotated

import typer

from rlvr.core.errors import MissingExtraError, RlvrError
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli.app import Command, EnvArgs, err_console, fail

__all__: list[str] = []

_HELP = "\n\n".join([
    "Serve ENV_ID as an OpenEnv server (OpenEnv's own app: WebSocket /ws sessions, /health, /schema, the task "
    "API); OpenEnv's GenericEnvClient plays it with no rlvr code.",
    "Actions are one assistant message {\"content\", \"tool_calls\"}; observations carry `messages`, `task_id` "
    "and, when done, `verdict` (reward None when the grader broke). Reset with task_id=..., split+index or seed.",
    "Each session plays on its own episode copy of the one loaded environment; past --max-sessions a new "
    "session is refused (CAPACITY_REACHED); stateless POST /reset counts against the same limit, and sessions "
    "made over HTTP (MCP openenv/session/create) give way to new ones until a WebSocket attaches. SIGTERM "
    "closes every session and sandbox and exits 0.",
    "Over OpenEnv's /mcp (MCPToolClient), tools/list gives the env's tools plus submit_answer; tools/call steps "
    "the session's episode (a tool call; submit_answer {\"answer\"} ends it with that final answer).",
])


def serve(
    env_id: Annotated[str, typer.Argument(help="Registered environment id, e.g. math/gsm8k-v1.")],
    env_arg: EnvArgs = None,
    host: Annotated[str, typer.Option(help="Interface to bind (the server has no authentication).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port.")] = 8000,
    max_sessions: Annotated[int, typer.Option(min=1, help="Most concurrent sessions.")] = 64,
    idle_timeout: Annotated[float, typer.Option(min=0.0, help="Close a session idle this many seconds (0: "
                                                "never).")] = 300.0,
    ping_interval: Annotated[float, typer.Option(min=0.1, help="Seconds between WebSocket keepalive pings.")] = 20.0,
    ping_timeout: Annotated[float, typer.Option(min=0.1, help="Seconds a client has to answer a ping before its "
                                                "session is dropped.")] = 20.0,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """`rlvr serve ENV_ID`: load the environment once, then serve it until SIGTERM/SIGINT."""
    from rlvr.environments.registry import make

    try:
        from rlvr.adapters.openenv.serve import serve as run_server
        from rlvr.adapters.openenv.server import DEFAULT_SPLIT
    except ImportError as exc:
        raise fail(MissingExtraError(exc.name or "openenv", "openenv")) from exc
    try:
        args = parse_env_args(env_arg)
        environment = make(env_id, **args)
    except RlvrError as exc:
        raise fail(exc) from exc
    split = args.get("split")
    err_console.print(f"serving {env_id} ({len(environment.tasks)} tasks) on http://{host}:{port} "
                      f"(at most {max_sessions} sessions)", highlight=False)
    run_server(environment, host=host, port=port, max_sessions=max_sessions,
               idle_timeout_s=idle_timeout or None, ping_interval_s=ping_interval, ping_timeout_s=ping_timeout,
               split=split if isinstance(split, str) else DEFAULT_SPLIT, log_level=log_level)


COMMAND = Command(serve, "serve", _HELP)
