"""One MCP client session to one server: a sandboxed stdio command or a streamable-HTTP URL.

The protocol is the official MCP Python SDK's (`mcp.ClientSession`: `initialize`, `tools/list`,
`tools/call`). Every session lives on `rlvr.environments.client_loop.ClientLoop`'s thread (the SDK's
anyio task groups must be entered and left in one task on one loop; episodes run on many loops):
`MCPConnection.open` starts an owner task there that enters the transport and the session and
holds them until `close`.

Transports:

- **stdio, sandboxed** (`StdioServer`): the server command runs in a fresh
  `rlvr.sandbox.server.SandboxedServer` (bubblewrap where it works: no network, read-only root,
  unprivileged uid, rlimits), started from the client loop's long-lived thread so it dies with this
  process. rlvr reads its pipes itself rather than through the SDK's `stdio_client`, to bound what a
  server can do to the client: one message is at most `max_message_bytes` (a longer line, or one
  that is not JSON-RPC, breaks the connection: an error, never an unbounded buffer), stderr is read
  and only its last `STDERR_TAIL_BYTES` kept (a flood neither blocks the server nor fills memory).
- **streamable HTTP** (`HTTPServer`): the SDK's `streamable_http_client`, with SSE events capped at
  `max_message_bytes`.

Failures are data here: `call` returns `(text, is_error)` for everything the model may see (a tool's
`isError` result, a JSON-RPC error answer, bad arguments, a per-call timeout), and sets `failure`
(the connection is unusable: the server exited, broke the protocol, or sent too much) for the
environment to end the episode with an `error` verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.errors import BackendError, MissingExtraError
from rlvr.environments.client_loop import ClientLoop
from rlvr.sandbox.config import SandboxConfig

__all__: list[str] = []

DEFAULT_MAX_MESSAGE_BYTES = 4 << 20
"""Largest JSON-RPC message accepted from a server, bytes (a tool answer is capped far lower for the model)."""
STDERR_TAIL_BYTES = 8192
"""Bytes of a stdio server's stderr kept (the last ones), for error messages."""
_CLOSE_GRACE_S = 5.0


def require_mcp() -> None:
    """Raise `MissingExtraError` naming `pip install 'rlvr[mcp]'` when the MCP SDK is not installed."""
    try:  # `mcp.client`, not `mcp`: a folder named mcp on sys.path (a test tree) is a namespace package
        import mcp.client  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("mcp", "mcp") from exc


@dataclass(frozen=True)
class StdioServer:
    """An MCP server started as a command in rlvr's sandbox, one per connection.

    Attributes:
        command: argv; `{python}` in an argument is the sandbox's Python interpreter.
        files: written into the sandbox's work directory (`/work` under bubblewrap) before it starts.
        env: extra environment variables of the server (nothing is inherited).
        packages: installed distributions (and their requirements) made importable in the sandbox
            (e.g. `("mcp-server-git",)`), staged read-only (`rlvr.sandbox.site_packages`).
        sandbox: isolation and limits (memory, processes, file sizes, tmpfs sizes).
        lifetime_s: CPU seconds the server may use over its life (its `RLIMIT_CPU`).
    """

    command: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    packages: tuple[str, ...] = ()
    sandbox: SandboxConfig = field(default_factory=lambda: SandboxConfig(pool_size=0, memory_mb=2048))
    lifetime_s: float = 3600.0

    def describe(self) -> str:
        """The command, for messages."""
        return " ".join(self.command)


@dataclass(frozen=True)
class HTTPServer:
    """A running MCP server reached over streamable HTTP (`http://host:port/mcp`)."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """The URL, for messages."""
        return self.url


ServerSpec = StdioServer | HTTPServer


class _Failed(Exception):
    """The connection broke (the reason is `MCPConnection.failure`)."""


class MCPConnection:
    """One MCP session (see the module docstring); `open`, `list_tools`, `call`, `close`.

    Args:
        server: where the server is.
        max_message_bytes: largest message accepted from the server, bytes.
        connect_timeout_s: limit on starting the server and the `initialize` handshake, seconds.

    Attributes:
        failure: why the connection is unusable (None while it works).
        tools_changed: the server said its tool list changed (`notifications/tools/list_changed`).
    """

    def __init__(self, server: ServerSpec, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 connect_timeout_s: float = 60.0) -> None:
        require_mcp()
        self.server = server
        self.max_message_bytes = max_message_bytes
        self.connect_timeout_s = connect_timeout_s
        self.failure: str | None = None
        self.tools_changed = False
        self._session: Any = None
        self._owner: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._sandboxed: Any = None
        self._stderr = bytearray()

    # -- lifecycle ---------------------------------------------------------------------
    async def open(self) -> MCPConnection:
        """Start the server (stdio) or connect (HTTP), and run the `initialize` handshake.

        Raises:
            BackendError: the server did not start or answer the handshake in time; the message
                says why (with the end of its stderr).
        """
        await ClientLoop.call(self._open())
        return self

    async def _open(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._owner = asyncio.ensure_future(self._hold(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout_s)
        except BaseException as exc:
            await self._aclose()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved: the owner's failure is reported here
            if isinstance(exc, asyncio.TimeoutError | TimeoutError):
                raise BackendError(f"the MCP server {self.server.describe()!r} did not complete the initialize "
                                   f"handshake within {self.connect_timeout_s:g} s{self._stderr_note()}") from None
            if isinstance(exc, BackendError):
                raise
            why = self.failure or _error_text(_leaf(exc))
            raise BackendError(f"the MCP server {self.server.describe()!r} failed to start: {why}"
                               f"{'' if 'stderr' in why else self._stderr_note()}") from exc

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        """The owner task: transport and session entered here, held until `close`."""
        from mcp import ClientSession

        try:
            async with self._transport() as (read, write), \
                    ClientSession(read, write, message_handler=self._on_message) as session:
                await session.initialize()
                self._session = session
                if not ready.done():
                    ready.set_result(None)
                assert self._closing is not None
                await self._closing.wait()
        except BaseException as exc:  # reported to `open` (before ready) or kept as the failure
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:
                    ready.cancel()
            elif self.failure is None and not (self._closing is not None and self._closing.is_set()):
                self.failure = f"the session ended: {type(exc).__name__}: {exc}"
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None

    async def _on_message(self, message: Any) -> None:
        import mcp.types as types

        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed = True
        elif isinstance(message, Exception) and self.failure is None:
            self.failure = f"the server sent an unreadable message: {type(message).__name__}: {message}"[:500]

    async def close(self) -> None:
        """End the session and stop the server (and everything it started); never raises."""
        with contextlib.suppress(Exception):
            await ClientLoop.call(self._aclose())

    def close_sync(self) -> None:
        """`close` from sync code (not from the client loop)."""
        with contextlib.suppress(Exception):
            ClientLoop.call_sync(self._aclose(), _CLOSE_GRACE_S + 30.0)

    async def _aclose(self) -> None:
        if self._closing is not None:
            self._closing.set()
        owner = self._owner
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), _CLOSE_GRACE_S)
            except BaseException:  # a session that does not wind down is cancelled, then killed below
                owner.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(owner, _CLOSE_GRACE_S)
        sandboxed, self._sandboxed = self._sandboxed, None
        if sandboxed is not None:  # kill and reap off the loop thread (it waits for the pid namespace)
            await asyncio.get_running_loop().run_in_executor(None, sandboxed.close)

    # -- requests ----------------------------------------------------------------------
    async def list_tools(self, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), each as its wire JSON (`name`, `inputSchema`, ...).

        Raises:
            BackendError: the server failed or did not answer within `timeout_s` seconds.
        """
        try:
            return await ClientLoop.call(asyncio.wait_for(self._list_tools(), timeout_s))
        except (asyncio.TimeoutError, TimeoutError):
            raise BackendError(f"the MCP server {self.server.describe()!r} did not list its tools within "
                               f"{timeout_s:g} s") from None
        except _Failed:
            raise BackendError(f"the MCP server {self.server.describe()!r} failed: {self.failure}") from None
        except Exception as exc:
            raise BackendError(f"the MCP server {self.server.describe()!r} failed to list its tools: "
                               f"{type(exc).__name__}: {exc}") from exc

    async def _list_tools(self) -> list[dict[str, Any]]:
        import mcp.types as types

        session = self._live()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(1000):  # a server that pages forever is cut off
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]
            cursor = result.next_cursor
            if not cursor:
                return tools
        raise BackendError("the MCP server kept paging its tool list (1000 pages)")

    def _live(self) -> Any:
        if self.failure is not None or self._session is None:
            if self.failure is None:
                self.failure = "the session is closed"
            raise _Failed
        return self._session

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float | None) -> tuple[str, bool]:
        """Call tool `name`; return (the answer as text, whether it is an error). Never raises for a bad call.

        A tool's `isError` result, a JSON-RPC error answer and a timeout are errors for the model.
        When the connection breaks (see `failure`), the answer says so and is an error too.
        """
        start = time.monotonic()
        try:
            result = await ClientLoop.call(asyncio.wait_for(self._call(name, arguments), timeout_s))
        except (asyncio.TimeoutError, TimeoutError):
            return (f"tool {name!r} timed out after {time.monotonic() - start:.1f} s "
                    f"(limit {timeout_s:g} s)"), True
        except _Failed:
            return f"the tool server failed: {self.failure}", True
        except Exception as exc:  # the SDK raises MCPError for a JSON-RPC error answer
            if self.failure is not None:
                return f"the tool server failed: {self.failure}", True
            return f"tool {name!r} failed: {_error_text(exc)}", True
        return _result_text(result), bool(result.get("isError"))

    async def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._live()
        result = await session.call_tool(name, arguments)
        dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped

    # -- transports --------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        if isinstance(self.server, HTTPServer):
            async with self._http() as streams:
                yield streams
        else:
            async with self._stdio() as streams:
                yield streams

    @contextlib.asynccontextmanager
    async def _http(self) -> AsyncIterator[tuple[Any, Any]]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert isinstance(self.server, HTTPServer)
        timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults; each call has its own deadline too
        async with httpx2.AsyncClient(headers=dict(self.server.headers), timeout=timeout) as http, \
                streamable_http_client(self.server.url, http_client=http,
                                       max_sse_event_size=self.max_message_bytes) as (read, write):
            yield read, write

    @contextlib.asynccontextmanager
    async def _stdio(self) -> AsyncIterator[tuple[Any, Any]]:
        import anyio

        server = self._start_sandboxed()
        loop = asyncio.get_running_loop()
        proc = server.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdout = asyncio.StreamReader(limit=self.max_message_bytes)
        stderr = asyncio.StreamReader(limit=1 << 16)
        pipes: list[asyncio.BaseTransport] = []
        for reader, pipe in ((stdout, proc.stdout), (stderr, proc.stderr)):
            protocol_factory = functools.partial(asyncio.StreamReaderProtocol, reader)
            pipes.append((await loop.connect_read_pipe(protocol_factory, pipe))[0])
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, proc.stdin)
        pipes.append(transport)
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        read_send, read_recv = anyio.create_memory_object_stream[Any](16)
        write_send, write_recv = anyio.create_memory_object_stream[Any](16)
        tasks = [asyncio.ensure_future(self._pump_stdout(stdout, read_send)),
                 asyncio.ensure_future(self._pump_stdin(write_recv, stdin)),
                 asyncio.ensure_future(self._pump_stderr(stderr))]
        try:
            yield read_recv, write_send
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*tasks, return_exceptions=True)
            for pipe in pipes:  # off the loop's selector before the pipes close (their fd numbers get reused)
                pipe.close()
            for stream in (read_send, read_recv, write_send, write_recv):
                with contextlib.suppress(Exception):
                    await stream.aclose()

    def _start_sandboxed(self) -> Any:
        from rlvr.sandbox.local import LocalSandbox
        from rlvr.sandbox.server import SandboxedServer
        from rlvr.sandbox.site_packages import sandbox_site_path

        spec = self.server
        assert isinstance(spec, StdioServer)
        config = spec.sandbox
        python = LocalSandbox(config.model_copy(update={"pool_size": 0})).python
        if spec.packages:
            site = sandbox_site_path(tuple(spec.packages), python)
            for path in site:
                _byte_compiled(path)
            config = config.model_copy(update={"python_path": (*config.python_path, *site)})
        box = LocalSandbox(config.model_copy(update={"pool_size": 0}))
        argv = [a.replace("{python}", box.python) for a in spec.command]
        self._sandboxed = SandboxedServer(box, argv, files=dict(spec.files), env=dict(spec.env),
                                          lifetime_s=spec.lifetime_s).start()
        return self._sandboxed

    async def _pump_stdout(self, stdout: asyncio.StreamReader, send: Any) -> None:
        """Server stdout -> the session: one JSON-RPC message per line, each at most `max_message_bytes`."""
        import mcp.types as types
        from mcp.shared.message import SessionMessage

        try:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:  # asyncio's "Separator is not found, and chunk exceed the limit"
                    self.failure = (f"the server sent a message over {self.max_message_bytes} bytes "
                                    "(max_message_bytes)")
                    return
                if not line:
                    self.failure = self.failure or f"the server exited{self._exit_note()}{self._stderr_note()}"
                    return
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError as exc:
                    self.failure = (f"the server wrote a line that is not a JSON-RPC message "
                                    f"({_clip(line)!r}: {str(exc).splitlines()[0]})")
                    return
                await send.send(SessionMessage(message))
        finally:
            with contextlib.suppress(Exception):
                await send.aclose()  # end of stream: waiting requests get "Connection closed"

    async def _pump_stdin(self, receive: Any, stdin: asyncio.StreamWriter) -> None:
        """The session -> server stdin, one JSON line per message."""
        with contextlib.suppress(Exception):
            async for message in receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                stdin.write(data)
                await stdin.drain()

    async def _pump_stderr(self, stderr: asyncio.StreamReader) -> None:
        """Read the server's stderr to its end, keeping only the last `STDERR_TAIL_BYTES`."""
        with contextlib.suppress(Exception):
            while chunk := await stderr.read(1 << 16):
                self._stderr += chunk
                del self._stderr[:-STDERR_TAIL_BYTES]

    @property
    def stderr_tail(self) -> str:
        """The last `STDERR_TAIL_BYTES` the stdio server wrote to stderr (decoded, errors replaced)."""
        return self._stderr.decode(errors="replace")

    def _exit_note(self) -> str:
        proc = getattr(self._sandboxed, "proc", None)
        code = proc.poll() if proc is not None else None
        return f" (exit status {code})" if code is not None else ""

    def _stderr_note(self) -> str:
        tail = self.stderr_tail.strip()
        return f"; its stderr ends: {tail[-600:]}" if tail else ""


@functools.lru_cache(maxsize=32)
def _byte_compiled(site: str) -> None:
    """Byte-compile a package directory a sandboxed server imports from, once per process.

    The sandbox cannot write `__pycache__` (read-only mounts, `PYTHONDONTWRITEBYTECODE`), so without
    this every server start compiles its imports again (the MCP SDK, pydantic, ...: seconds of CPU).
    A directory this process cannot write is left as it is.
    """
    import compileall

    with contextlib.suppress(OSError):
        compileall.compile_dir(site, quiet=2, workers=1)


def _clip(line: bytes, n: int = 80) -> str:
    text = line.decode(errors="replace").strip()
    return text if len(text) <= n else text[:n] + "..."


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception of an (anyio task group's) exception group."""
    inner = getattr(exc, "exceptions", None)  # BaseExceptionGroup (3.11+) or the exceptiongroup backport
    while isinstance(inner, tuple | list) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def _error_text(exc: BaseException) -> str:
    """A JSON-RPC error (`MCPError`) or another exception, as one line for the model."""
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None)
    if isinstance(message, str):
        return f"{message} (JSON-RPC error {getattr(error, 'code', '?')})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _result_text(result: dict[str, Any]) -> str:
    """The model's view of a `CallToolResult` (wire JSON): its text blocks; other blocks as JSON.

    `structuredContent` is shown only when there is no content block at all (the spec asks
    servers to repeat it as text).
    """
    parts: list[str] = []
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and block.get("type") in ("image", "audio"):
            parts.append(f"[{block['type']} content, {block.get('mimeType', 'unknown type')}, not shown]")
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    if not parts and result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"], ensure_ascii=False))
    return "\n".join(parts)


