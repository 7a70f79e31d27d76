"""`MCPToolEnv`: an MCP server's tools as an rlvr tool environment (`mcp/tools-v1`).

The policy sees the tools the server lists (`tools/list` -> OpenAI tool schemas, read once when the
environment is built: `EnvSpec.tools`) and calls them natively or as Hermes `<tool_call>` text;
each call goes to the server (`tools/call`) under `call_timeout_s`. The rules are `ToolEnv`'s: a
message without a call is the final answer; an unknown tool, arguments that do not fit the listed
schema (checked by rlvr before anything is sent), a tool's `isError` answer, a JSON-RPC error and
a timeout come back to the model as the tool's answer ("Error: ..."), never a crash, and count as
`tool_errors`; answers are capped at `max_output_chars`.

Servers (`rlvr.environments.mcp.connection`): a stdio command started for each episode inside
rlvr's sandbox (bubblewrap where it works: no network, read-only root, rlimits, reaped with its
whole pid namespace when the episode ends or this process dies), or a streamable-HTTP URL (one
session per episode). `server` may be a function of the task (a server per task: its own files).

Scoring: the verifier scores the final answer against `task.reference`, or, with a `state_check`,
the text the state check returns: a coroutine run after the episode, while the server still runs,
that reads the state the tools left through the same tools (`ToolCaller`) and may include the
final answer. Each episode checks that the server lists the tools the policy was shown.

Errors (an `error` verdict, reward None: the trainer masks the episode): the server cannot be
started or does not complete the handshake (reset raises `BackendError`; the episode driver turns
it into an error trajectory), lists other tools than the environment was built with, changes its
tool list mid-episode, exits, breaks the protocol or sends a message over `max_message_bytes` (the
call in flight is answered with the failure and the episode ends), or the state check fails.
"""

from __future__ import annotations

import asyncio
import shlex
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from rlvr.core.errors import BackendError, ConfigError, DataError
from rlvr.core.registry import load_attr
from rlvr.core.types import EnvSpec, Message, Task, Verdict
from rlvr.environments.actions import ParsedCall, TextTag
from rlvr.environments.loaders import TaskList, load_rows, require_field
from rlvr.environments.mcp.connection import (
    DEFAULT_MAX_MESSAGE_BYTES,
    HTTPServer,
    MCPConnection,
    ServerSpec,
    StdioServer,
    require_mcp,
)
from rlvr.environments.mcp.tools import ArgumentCheck, InvalidTool, openai_tools, same_tools
from rlvr.environments.multi_turn import ToolEnv
from rlvr.environments.tools import MAX_OUTPUT_CHARS, truncate_output
from rlvr.verifiers.base import Verifier

__all__ = ["make_mcp_tools"]


class StateCheckError(BackendError):
    """A state check could not read the state (a tool call failed): the episode's verdict is `error`."""


class ToolCaller:
    """What a state check may do: call the episode's server's tools (after the episode, before it stops).

    Args:
        connection: the episode's session.
        timeout_s: limit of one call, seconds.
    """

    def __init__(self, connection: MCPConnection, timeout_s: float | None) -> None:
        self._connection = connection
        self._timeout_s = timeout_s

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """The text answer of tool `name`.

        Raises:
            StateCheckError: the tool answered with an error, timed out, or the server failed.
        """
        text, failed = await self._connection.call(name, dict(arguments or {}), self._timeout_s)
        if failed:
            raise StateCheckError(f"{name}({dict(arguments or {})}) failed: {text[:300]}")
        return text


StateCheck = Callable[[ToolCaller, Task, str], Awaitable[str]]
"""`async state_check(tools, task, final_answer) -> text the verifier scores against task.reference`."""


class MCPToolEnv(ToolEnv):
    """The tools of an MCP server as a tool environment (module docstring).

    Args:
        tasks: the dataset.
        verifier: scores the final answer (or the state check's text) against `task.reference`.
        server: a `StdioServer` / `HTTPServer`, or a function of the task returning one.
        env_id: the spec id (`family/name-vN`).
        description: the spec's one-line description.
        state_check: scores the state the tools left instead of the final answer (`StateCheck`).
        reference_actions: the oracle's assistant messages for a task (default: the task's
            `metadata["reference_actions"]`, OpenAI message dicts, when present).
        include_tools: offer only these listed tools (default all); `exclude_tools`: leave these out.
        call_timeout_s: limit of one tool call, seconds.
        max_output_chars: cap of one tool answer shown to the model, characters.
        max_turns: assistant messages per episode.
        max_calls_per_turn: calls beyond this many in one message are answered with an error.
        hermes: also read Hermes/Qwen `<tool_call>{...}</tool_call>` calls from message text.
        reward_weights: weights of the step components (`tool_calls`, `tool_errors`).
        verifier_timeout_s: limit on scoring (see `MultiTurnEnv`).
        state_timeout_s: limit on the state check, seconds.
        max_message_bytes: largest message accepted from the server, bytes.
        connect_timeout_s: limit on starting a server and its handshake, seconds.
        reward_range: bounds of the verifier's reward.

    Raises:
        ConfigError: the server lists a tool that cannot be offered (its name and why; leave it out
            with `exclude_tools`), a tool named in `include_tools`/`exclude_tools` is not listed, no
            tool is left, or a bad limit.
        BackendError: the server used to list the tools did not start or answer.
    """

    episode_shared: ClassVar[frozenset[str]] = ToolEnv.episode_shared | {"server", "arguments", "tool_names",
                                                                          "open_connections"}

    def __init__(
        self,
        tasks: Sequence[Task],
        verifier: Verifier,
        server: ServerSpec | Callable[[Task], ServerSpec],
        *,
        env_id: str = "mcp/tools-v1",
        description: str | None = None,
        state_check: StateCheck | None = None,
        reference_actions: Callable[[Task], list[Message] | None] | None = None,
        include_tools: Sequence[str] | None = None,
        exclude_tools: Sequence[str] = (),
        call_timeout_s: float = 30.0,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        max_turns: int = 10,
        max_calls_per_turn: int = 8,
        hermes: bool = True,
        reward_weights: Mapping[str, float] | None = None,
        verifier_timeout_s: float | None = None,
        state_timeout_s: float = 60.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        connect_timeout_s: float = 60.0,
        reward_range: tuple[float, float] = (0.0, 1.0),
    ) -> None:
        require_mcp()
        for name, value in (("call_timeout_s", call_timeout_s), ("max_output_chars", max_output_chars),
                            ("state_timeout_s", state_timeout_s), ("max_message_bytes", max_message_bytes),
                            ("connect_timeout_s", connect_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigError(f"{name} must be a positive number, got {value!r}")
        if len(tasks) == 0:
            raise ConfigError(f"{env_id}: no tasks; pass a non-empty task list")
        self.server = server
        self.state_check = state_check
        self._reference = reference_actions
        self.include_tools = None if include_tools is None else tuple(include_tools)
        self.exclude_tools = tuple(exclude_tools)
        self.call_timeout_s = float(call_timeout_s)
        self.max_output_chars = int(max_output_chars)
        self.state_timeout_s = float(state_timeout_s)
        self.max_message_bytes = int(max_message_bytes)
        self.connect_timeout_s = float(connect_timeout_s)
        where = self.server_for(tasks[0])
        schemas = _run(self._listed_tools(where, build=True))
        spec = EnvSpec(id=env_id, description=description or f"MCP server {where.describe()} as a tool environment",
                       max_turns=max_turns, reward_range=reward_range, seeding="deterministic",
                       resources={"mcp_server": where.describe(),
                                  "transport": "http" if isinstance(where, HTTPServer) else "stdio (sandboxed)"})
        super().__init__(tasks, verifier, spec, (), text_tags=(TextTag.hermes(),) if hermes else (),
                         max_turns=max_turns, max_calls_per_turn=max_calls_per_turn, reward_weights=reward_weights,
                         verifier_timeout_s=verifier_timeout_s)
        self.spec = self.spec.model_copy(update={"tools": tuple(schemas)})
        self.tool_names = tuple(t["function"]["name"] for t in schemas)
        self.arguments = ArgumentCheck(schemas)
        self.connection: MCPConnection | None = None
        self.open_connections: weakref.WeakSet[MCPConnection] = weakref.WeakSet()
        """Every session of this env and its episode copies still open (the original's `close` ends them all)."""
        self.failure: str | None = None
        self._state: str | None = None

    # -- the server ----------------------------------------------------------------------
    def server_for(self, task: Task) -> ServerSpec:
        """The server of `task`'s episodes.

        Raises:
            ConfigError: `server` is neither a server spec nor a function returning one.
        """
        where = self.server(task) if callable(self.server) else self.server
        if not isinstance(where, StdioServer | HTTPServer):
            raise ConfigError(f"server must be a StdioServer or HTTPServer (or a function of the task returning one), "
                              f"got {type(where).__name__}")
        return where

    async def _listed_tools(self, where: ServerSpec, *, build: bool) -> list[dict[str, Any]]:
        """The offered tools of a fresh session to `where` (closed after) -- at build time."""
        connection = self._connection(where)
        await connection.open()
        try:
            return self._select(await connection.list_tools(), build=build)
        finally:
            await connection.close()

    def _connection(self, where: ServerSpec) -> MCPConnection:
        return MCPConnection(where, max_message_bytes=self.max_message_bytes,
                             connect_timeout_s=self.connect_timeout_s)

    def _select(self, listing: list[dict[str, Any]], *, build: bool) -> list[dict[str, Any]]:
        """The listed tools the policy is offered (include/exclude applied), checked.

        Raises:
            ConfigError: (build) see the class docstring. BackendError: (an episode) the same problems.
        """
        names = [str(t.get("name")) for t in listing]
        wanted = set(self.include_tools) if self.include_tools is not None else set(names)
        missing = sorted((wanted | set(self.exclude_tools)) - set(names))
        error = ConfigError if build else BackendError
        if missing:
            raise error(f"the MCP server does not list the tool(s) {missing} named in include_tools/exclude_tools; "
                        f"it lists: {', '.join(names) or 'none'}")
        kept = [t for t in listing if str(t.get("name")) in wanted and str(t.get("name")) not in self.exclude_tools]
        tools, invalid = openai_tools(kept)
        if invalid:
            raise error(f"the MCP server lists tools that cannot be offered to a model: {_invalid(invalid)}; leave "
                        "them out with exclude_tools=[...] (CLI: --env-arg exclude_tools=...)")
        if not tools:
            raise error("no tool of the MCP server is offered; check include_tools/exclude_tools")
        return tools

    # -- episode -------------------------------------------------------------------------
    def episode_copy(self) -> MCPToolEnv:
        """A copy for one concurrent episode, with its own server session (opened at `reset`)."""
        clone = super().episode_copy()
        assert isinstance(clone, MCPToolEnv)
        clone.connection, clone.failure, clone._state = None, None, None
        return clone

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Pose the task and start its server session; check that it lists the tools the policy is shown.

        Raises:
            BackendError: the server did not start, or lists other tools (this episode only).
        """
        await self._end_connection()
        messages, info = await super().reset(task, seed)
        assert self.task is not None
        self.failure, self._state = None, None
        connection = self._connection(self.server_for(self.task))
        await connection.open()
        try:
            tools = self._select(await connection.list_tools(self.call_timeout_s), build=False)
            if not same_tools(tools, self.spec.tools):
                listed = [t["function"]["name"] for t in tools]
                raise BackendError(f"task {self.task.id!r}: the MCP server lists other tools than the environment "
                                   f"was built with ({listed} vs {list(self.tool_names)}, or other schemas); build "
                                   "the environment from the same server")
        except BaseException:
            await connection.close()
            raise
        self.connection = connection
        self.open_connections.add(connection)
        return messages, info

    async def call_tool(self, call: ParsedCall) -> tuple[str, bool]:
        """Check one call, send it to the server, return (answer, is error); never raises for a bad call."""
        if call.error is not None:
            return f"Error: {call.error}", True
        if self.failure is not None:
            return f"Error: the tool server failed: {self.failure}", True
        if call.name not in self.tool_names:
            return f"Error: unknown tool {call.name!r}; available tools: {', '.join(self.tool_names)}", True
        problem = self.arguments.problem(call.name, call.arguments)
        if problem is not None:
            return f"Error: {problem}", True
        connection = self.connection
        if connection is None:
            self.failure = "the episode has no server session (reset was not called or failed)"
            return f"Error: {self.failure}", True
        if connection.tools_changed and not await self._same_tools(connection):
            self.failure = "the server changed its tool list mid-episode"
            return f"Error: {self.failure}", True
        text, failed = await connection.call(call.name, call.arguments, self.call_timeout_s)
        if connection.failure is not None:
            self.failure = connection.failure
        text = truncate_output(text, self.max_output_chars)
        if failed and not text.lower().startswith("error"):
            text = f"Error: {text}"
        return text, failed

    async def _same_tools(self, connection: MCPConnection) -> bool:
        """After `notifications/tools/list_changed`: does the server still list the tools the policy was shown?"""
        connection.tools_changed = False
        try:
            return same_tools(self._select(await connection.list_tools(self.call_timeout_s), build=False),
                              self.spec.tools)
        except BackendError:
            return False

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """`ToolEnv.env_response`; a failed server ends the episode (its verdict is `error`)."""
        messages, done = await super().env_response(action)
        return messages, done or self.failure is not None

    def final_response(self) -> str:
        """What the verifier scores: the state check's text when there is one, else the final answer."""
        if self.state_check is not None and self._state is not None:
            return self._state
        return super().final_response()

    async def final_verdict(self) -> Verdict:
        """Score the episode (module docstring), then stop its server."""
        try:
            where = self.server_for(self.task).describe() if self.task is not None else "?"
            if self.failure is not None:
                return Verdict.error(f"the MCP server {where} failed mid-episode: {self.failure}")
            if self.state_check is not None:
                problem = await self._check_state()
                if problem is not None:
                    return Verdict.error(f"the state check of the MCP server {where} failed: {problem}")
            return await super().final_verdict()
        finally:
            await self._end_connection()

    async def _check_state(self) -> str | None:
        """Run the state check; why it failed, or None (its text is then in `_state`)."""
        assert self.task is not None and self.state_check is not None
        connection = self.connection
        if connection is None:
            return "the episode has no server session"
        answer = ToolEnv.final_response(self)
        try:
            check = self.state_check(ToolCaller(connection, self.call_timeout_s), self.task, answer)
            state: object = await asyncio.wait_for(check, self.state_timeout_s)
        except (TimeoutError, asyncio.TimeoutError):
            return f"no result within {self.state_timeout_s:g} s"
        except Exception as exc:  # the check's own bug or a failed read: never a score
            return f"{type(exc).__name__}: {exc}"
        if not isinstance(state, str):
            return f"it returned a {type(state).__name__}, not the text to score"
        self._state = state
        return None

    async def _end_connection(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            self.open_connections.discard(connection)
            await connection.close()

    def reference_actions(self, task: Task) -> list[Message] | None:
        """The oracle's messages: `reference_actions(task)` when given, else `task.metadata["reference_actions"]`."""
        if self._reference is not None:
            return self._reference(task)
        raw = task.metadata.get("reference_actions")
        if not isinstance(raw, list) or not raw:
            return None
        return [Message.model_validate({"role": "assistant", **m}) for m in raw]

    def close_episode(self) -> None:
        """Stop this copy's server (if running)."""
        connection, self.connection = self.connection, None
        if connection is not None:
            self.open_connections.discard(connection)
            connection.close_sync()

    def close(self) -> None:
        """Stop every server still running for this env or its copies, and release the shared verifier.

        An episode abandoned mid-way (its policy failed) keeps its server until then; a copy ends its
        own episode with `close_episode`.
        """
        self.close_episode()
        for connection in list(self.open_connections):
            self.open_connections.discard(connection)
            connection.close_sync()
        super().close()


def _invalid(invalid: Sequence[InvalidTool]) -> str:
    return "; ".join(str(i) for i in invalid)


def _run(coro: Awaitable[Any]) -> Any:
    """Run `coro` from sync code (construction), also when called inside a running event loop."""
    async def main() -> Any:
        return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    from rlvr.environments.client_loop import ClientLoop

    return ClientLoop.call_sync(main())


# -- the registered factory ----------------------------------------------------------------
def server_spec(server: str | Sequence[str] | StdioServer | HTTPServer, *, packages: Sequence[str] = (),
                files: Sequence[str] = (), headers: Mapping[str, str] | None = None,
                memory_mb: int = 2048) -> ServerSpec:
    """A server spec from a URL (`http(s)://...`: streamable HTTP) or a command (a string split like a shell, or argv).

    Args:
        server: the URL or command (see `make_mcp_tools`).
        packages: installed distributions a stdio server imports.
        files: host files copied into a stdio server's work directory (its cwd), by their base names.
        headers: HTTP headers of a URL server.
        memory_mb: address-space limit of a stdio server's processes, MiB.

    Raises:
        ConfigError: an empty command, or a file that cannot be read.
    """
    if isinstance(server, StdioServer | HTTPServer):
        return server
    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return HTTPServer(url=server, headers=tuple((headers or {}).items()))
    argv = shlex.split(server) if isinstance(server, str) else [str(a) for a in server]
    if not argv:
        raise ConfigError("server must be an MCP server URL (http://...) or a command to start one, got an empty one")
    from rlvr.sandbox.config import SandboxConfig

    copied = []
    for name in files:
        try:
            copied.append((Path(name).name, Path(name).read_bytes()))
        except OSError as exc:
            raise ConfigError(f"cannot read the server file {name!r} to copy into its sandbox: {exc}") from exc
    return StdioServer(command=tuple(argv), files=tuple(copied), packages=tuple(packages),
                       sandbox=SandboxConfig(pool_size=0, memory_mb=memory_mb))


def _task_row(row: dict[str, Any], where: str) -> Task:
    """A task from a JSONL row: `id`, `prompt` (text or messages), `reference`, optional `reference_actions`."""
    task_id = str(require_field(row, "id", where, (str, int)))
    prompt = require_field(row, "prompt", where, (str, list))
    if "reference" not in row:
        raise DataError(f"{where}: missing field 'reference' (what the verifier scores against)")
    metadata = dict(row.get("metadata") or {})
    if row.get("reference_actions") is not None:
        if not isinstance(row["reference_actions"], list):
            raise DataError(f"{where}: field 'reference_actions' should be a list of assistant message objects")
        metadata["reference_actions"] = row["reference_actions"]
    messages = [Message(role="user", content=prompt)] if isinstance(prompt, str) else \
        [Message.model_validate(m) for m in prompt]
    try:
        return Task(id=task_id, prompt=tuple(messages), reference=row["reference"], metadata=metadata)
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from exc


def make_mcp_tools(
    server: str | Sequence[str],
    tasks: str | Sequence[Task],
    verifier: str | Verifier,
    *,
    verifier_args: Mapping[str, Any] | None = None,
    state_check: str | StateCheck | None = None,
    packages: Sequence[str] = (),
    files: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
    memory_mb: int = 2048,
    size: int | None = None,
    **options: Any,
) -> MCPToolEnv:
    """`rlvr.make("mcp/tools-v1", server=..., tasks=..., verifier=...)`: an MCP server's tools as an environment.

    Args:
        server: an MCP server URL (`http(s)://host:port/mcp`, streamable HTTP) or the command that starts a
            stdio server in rlvr's sandbox (`"{python} -m my_server"`: `{python}` is the sandbox's interpreter;
            the host's files are not visible there: ship a script with `files`, a package with `packages`).
        tasks: a JSONL file of rows `{"id", "prompt" (text or messages), "reference", "reference_actions"?,
            "metadata"?}`, or a list of `Task`s.
        verifier: a verifier name (`rlvr verify --verifier` names, or `"module:Class"`) or a `Verifier`.
        verifier_args: keyword configuration of a named verifier.
        state_check: `"module:function"` (or the function): score the state the tools left (`StateCheck`).
        packages: installed distributions a stdio server imports, made importable in the sandbox.
        files: host files copied into a stdio server's work directory (its cwd), by their base names.
        headers: HTTP headers of a URL server (e.g. authorization).
        memory_mb: address-space limit of a stdio server's processes, MiB.
        size: use only the first `size` tasks.
        **options: `MCPToolEnv` options (`call_timeout_s`, `max_turns`, `include_tools`, ...).

    Raises:
        ConfigError: see `MCPToolEnv`, `server_spec`; an unknown verifier or state check.
        DataError: a task row is malformed (file:line named).
        MissingExtraError: the MCP SDK is not installed (`pip install 'rlvr[mcp]'`).
    """
    from rlvr.verifiers.registry import get_verifier

    require_mcp()
    if isinstance(tasks, str):
        rows = load_rows(path=tasks)
        task_list: Sequence[Task] = TaskList(rows, lambda i, row: _task_row(row, rows.where(i)))
        task_list = [task_list[i] for i in range(len(task_list))]  # malformed rows fail now, with their line
    else:
        task_list = list(tasks)
    if size is not None:
        task_list = task_list[:size]
    check = load_attr(state_check) if isinstance(state_check, str) else state_check
    if check is not None and not callable(check):
        raise ConfigError(f"state_check {state_check!r} is not a function (async (tools, task, answer) -> str)")
    scorer = verifier if isinstance(verifier, Verifier) else get_verifier(verifier, **(verifier_args or {}))
    return MCPToolEnv(task_list, scorer, server_spec(server, packages=packages, files=files, headers=headers,
                                                             memory_mb=memory_mb),
                      state_check=check, **options)
