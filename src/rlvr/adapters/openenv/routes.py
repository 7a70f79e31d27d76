"""`rlvr serve`'s rules for OpenEnv's session routes: every route within `--max-sessions`, one owner per episode.

OpenEnv 0.10's `HTTPEnvServer` leaves four holes a hostile peer can use (issue 31 item 9); the routes
here replace OpenEnv's (`/reset`, `/step`, `POST /mcp`, the `/ws` and `/mcp` WebSockets) and call its
session table (`_create_session`/`_destroy_session`) and its own handlers for the rest:

- `POST /reset` is stateless (an instance made, reset and closed per request) and OpenEnv makes it
  outside the session count: here it holds a session slot for the request (past `--max-sessions`:
  HTTP 503 `{"detail": ...}`), so a burst of resets cannot start more episodes (sandboxes) than slots.
- `POST /step` is stateless too, so in rlvr it never has an episode: OpenEnv answered a 500 with a
  traceback; here a bad action is OpenEnv's 422 and any other a 400 `{"detail": ...}` saying to
  step over a WebSocket session.
- `POST /mcp` `openenv/session/create` makes a session no connection holds (OpenEnv's
  `MCPToolClient` makes one, then attaches its WebSocket with `/ws?session_id=`). Such a *detached*
  session never blocks anyone: when a new session needs a slot and none is free, the oldest detached
  session is closed to make room (it has no episode: episodes start over a WebSocket).
- A session id opens nothing it did not create: `/ws?session_id=` attaches only a session made by
  `openenv/session/create`, and only once (when that socket leaves, the session is closed, so no
  second socket can step its episode); `POST /mcp` naming a `session_id` (tools/list, tools/call,
  openenv/session/close) reaches only such sessions, never one a WebSocket opened itself.
- A bad reset (unknown task id, split, keyword) is a 400 with the reason, not a 500.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Body, FastAPI, HTTPException, Request, WebSocket
from fastapi.routing import APIRoute, APIWebSocketRoute
from openenv.core.env_server.exceptions import SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.mcp_types import JsonRpcErrorCode, JsonRpcRequest, JsonRpcResponse
from openenv.core.env_server.serialization import deserialize_action, serialize_observation
from openenv.core.env_server.types import (
    ResetRequest,
    ResetResponse,
    StepRequest,
    WSErrorCode,
    WSErrorResponse,
)
from pydantic import ValidationError

from rlvr.core.errors import ConfigError

__all__ = ["SessionGuard", "guard_routes"]

HTTP_STEP_REFUSAL = ("no episode: POST /step is stateless (each request gets a fresh environment), and rlvr "
                     "episodes live in a session; reset and step over the WebSocket /ws (OpenEnv's EnvClient)")


class SessionGuard:
    """Who may use which session of one OpenEnv `HTTPEnvServer` (see the module docstring).

    Args:
        server: OpenEnv's server object whose session table the routes share.
    """

    def __init__(self, server: HTTPEnvServer) -> None:
        self.server = server
        self._detached: dict[str, float] = {}  # made over HTTP, no socket yet: id -> when (monotonic)
        self._by_id: set[str] = set()  # made over HTTP (addressable by id) and not yet closed here
        self._claimed: set[str] = set()  # made over HTTP and taken by a socket (once; closed when it leaves)

    def detached(self) -> list[str]:
        """Ids of the sessions made over HTTP that no socket has taken yet, oldest first."""
        self._prune()
        return sorted(self._detached, key=self._detached.__getitem__)

    def _prune(self) -> None:
        gone = {sid for sid in self._by_id if self.server.get_session_info(sid) is None}
        self._by_id -= gone
        self._claimed -= gone
        for sid in gone:
            self._detached.pop(sid, None)

    async def make_room(self) -> None:
        """When every slot is taken, close detached sessions (oldest first) until one is free or none is left."""
        for sid in self.detached():
            if self.server.active_sessions < self.server.max_concurrent_envs:
                return
            await self.close(sid)

    async def open(self) -> tuple[str, Any]:
        """A new session (room made first); SessionCapacityError past the limit."""
        await self.make_room()
        sid, env = await self.server._create_session()
        return str(sid), env

    async def open_detached(self) -> str:
        """A session made over HTTP (`openenv/session/create`): addressable by its id, attachable once."""
        sid, _ = await self.open()
        self._by_id.add(sid)
        self._detached[sid] = time.monotonic()
        return sid

    def addressable(self, sid: str) -> bool:
        """Whether HTTP `/mcp` may name session `sid` (one made over HTTP, still open)."""
        return sid in self._by_id and self.server.get_session_info(sid) is not None

    def claim(self, sid: str) -> str | None:
        """Give session `sid` to the socket asking for it; returns why not (None: claimed now)."""
        if not self.addressable(sid):
            return f"Unknown session_id: {sid} (a socket can attach only a session made by openenv/session/create)"
        if sid in self._claimed:
            return f"Session {sid} was already attached by another WebSocket; create a new session"
        self._claimed.add(sid)
        self._detached.pop(sid, None)
        return None

    async def close(self, sid: str) -> None:
        """Close session `sid` and forget it."""
        self._by_id.discard(sid)
        self._claimed.discard(sid)
        self._detached.pop(sid, None)
        await self.server._destroy_session(sid)


def _json_rpc_error(code: JsonRpcErrorCode, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    return dict(JsonRpcResponse.error_response(code, message, data=data, request_id=request_id).model_dump())


def _capacity(exc: SessionCapacityError) -> dict[str, Any]:
    return {"message": str(exc), "code": WSErrorCode.CAPACITY_REACHED.value,
            "active_sessions": exc.active_sessions, "max_sessions": exc.max_sessions}


def _take(app: FastAPI, path: str, kind: type, method: str | None = None) -> Callable[..., Awaitable[Any]] | None:
    """Remove OpenEnv's route `path` of `kind` (and `method`) from `app`; returns its endpoint (None: absent)."""
    for route in list(app.router.routes):
        if isinstance(route, kind) and getattr(route, "path", None) == path and (
                method is None or method in getattr(route, "methods", ())):
            app.router.routes.remove(route)
            endpoint: Callable[..., Awaitable[Any]] = route.endpoint  # type: ignore[attr-defined]
            return endpoint
    return None


_RESET_BODY = Body(default_factory=ResetRequest)


def guard_routes(app: FastAPI, server: HTTPEnvServer) -> SessionGuard:
    """Replace OpenEnv's session routes on `app` with the guarded ones (module docstring); returns the guard."""
    guard = SessionGuard(server)
    reset_route, step_route = _take(app, "/reset", APIRoute, "POST"), _take(app, "/step", APIRoute, "POST")
    mcp_post = _take(app, "/mcp", APIRoute, "POST")
    ws_route, mcp_ws = _take(app, "/ws", APIWebSocketRoute), _take(app, "/mcp", APIWebSocketRoute)
    if mcp_post is None or ws_route is None or mcp_ws is None:
        raise RuntimeError("OpenEnv's app lacks POST /mcp, WebSocket /ws or /mcp: an OpenEnv version rlvr does "
                           "not support (rlvr's openenv extra pins the one it does)")
    if reset_route is not None:  # simulation mode only
        _reset_route(app, guard)
    if step_route is not None:
        _step_route(app, server)
    _mcp_routes(app, guard, mcp_post, mcp_ws)
    _ws_route(app, guard, ws_route)
    return guard


def _reset_route(app: FastAPI, guard: SessionGuard) -> None:
    async def reset(request: ResetRequest = _RESET_BODY) -> ResetResponse:
        """Reset a fresh environment inside a session slot (503 past --max-sessions), then close it."""
        try:
            sid, env = await guard.open()
        except SessionCapacityError as exc:
            raise HTTPException(status_code=503, detail=_capacity(exc)) from exc
        try:
            observation = await env.reset_async(**request.model_dump(exclude_unset=True))
        except ConfigError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from exc
        finally:
            await guard.close(sid)
        return ResetResponse(**serialize_observation(observation))

    app.add_api_route("/reset", reset, methods=["POST"], response_model=ResetResponse, tags=["Environment Control"])


def _step_route(app: FastAPI, server: HTTPEnvServer) -> None:
    async def step(request: StepRequest) -> dict[str, Any]:
        """A stateless step has no episode: 422 for a bad action (OpenEnv's), else 400 saying where to step."""
        try:
            deserialize_action(request.action, server.action_cls)
        except ValidationError as exc:
            raise HTTPException(status_code=422, detail=exc.errors()) from exc
        raise HTTPException(status_code=400, detail=HTTP_STEP_REFUSAL)

    app.add_api_route("/step", step, methods=["POST"], tags=["Environment Control"])


Endpoint = Callable[..., Awaitable[Any]]


def _mcp_routes(app: FastAPI, guard: SessionGuard, post_mcp: Endpoint, mcp_socket_endpoint: Endpoint) -> None:
    async def mcp(request: Request) -> dict[str, Any]:
        """OpenEnv's MCP JSON-RPC endpoint, with detached sessions made here and ids checked (module docstring)."""
        try:
            rpc = JsonRpcRequest(**json.loads(await request.body()))
        except Exception:  # OpenEnv's handler answers the parse and validation errors
            return dict(await post_mcp(request))
        params = rpc.params if isinstance(rpc.params, dict) else {}
        if rpc.method == "openenv/session/create":
            try:
                created = await guard.open_detached()
            except SessionCapacityError as exc:
                return _json_rpc_error(JsonRpcErrorCode.SERVER_ERROR, str(exc), rpc.id,
                                       {"active_sessions": exc.active_sessions, "max_sessions": exc.max_sessions})
            return dict(JsonRpcResponse.success(result={"session_id": created}, request_id=rpc.id).model_dump())
        sid = params.get("session_id")
        if sid and not guard.addressable(str(sid)):
            return _json_rpc_error(JsonRpcErrorCode.INVALID_PARAMS, f"Unknown session_id: {sid}", rpc.id)
        answer = dict(await post_mcp(request))
        if rpc.method == "openenv/session/close" and sid and (answer.get("result") or {}).get("closed"):
            await guard.close(str(sid))
        return answer

    async def mcp_socket(websocket: WebSocket) -> None:
        """OpenEnv's MCP socket (a session of its own), room made first."""
        await guard.make_room()
        await mcp_socket_endpoint(websocket)

    app.add_api_route("/mcp", mcp, methods=["POST"])
    app.add_api_websocket_route("/mcp", mcp_socket)


def _ws_route(app: FastAPI, guard: SessionGuard, ws_endpoint: Endpoint) -> None:
    async def ws(websocket: WebSocket) -> None:
        """OpenEnv's session socket: room made for a new session; an attach only to a detached session, once."""
        sid = websocket.query_params.get("session_id")
        if not sid:
            await guard.make_room()
            await ws_endpoint(websocket)
            return
        refusal = guard.claim(sid)
        if refusal is not None:
            await websocket.accept()
            await websocket.send_text(WSErrorResponse(data={"message": refusal,
                                                            "code": WSErrorCode.SESSION_ERROR}).model_dump_json())
            await websocket.close()
            return
        try:
            await ws_endpoint(websocket)
        finally:
            await guard.close(sid)  # its one socket left: nobody else steps this episode

    app.add_api_websocket_route("/ws", ws)
