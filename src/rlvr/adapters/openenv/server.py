"""An rlvr environment behind OpenEnv's own server: one `ServedEnv` per session, one shared rlvr env.

`create_served_app(env, ...)` builds a FastAPI app with OpenEnv's routes (`openenv.core.env_server.
http_server.HTTPEnvServer`) and a factory of `ServedEnv`s, so the protocol (WebSocket `/ws` sessions,
`/health`, `/schema`, `/mcp`, the HTTP routes, the task API) is OpenEnv's; its session routes are
replaced by guarded ones (`rlvr.adapters.openenv.routes`: every route within `max_sessions`, a session
id never opens another client's episode). The session's tools are served over `/mcp` (`ServedTools`:
`tools/list`, and `tools/call` stepping that session's episode). The rlvr environment is loaded
once (dataset and verifier pool shared); each session plays its episodes on its own
`env.episode_copy()`, made at reset, in the episode driver (`rlvr.rollout.driver.EpisodeRun`: the
client's reset is `reset`, each action an `act`, so the step, end and scoring rules are those of
every other path), on the server's event loop (`reset_async`/`step_async`: rlvr environments are
async, so sessions need no thread each).

OpenEnv calls the factory for every `/metadata`, `/state` and task-API request too, and closes that
instance: a `ServedEnv` is cheap until reset, and closing one releases only its episode's own
resources (`Environment.close_episode`: a terminal sandbox), never the shared verifier pool.

Guards against a policy hunting for a reward hack through the server: the task API shows ids and
prompts, never references; a verdict's `detail` is sent only when the grader broke (a scored
verdict's detail can quote the reference: playing a task once wrongly must not reveal its answer);
a step after the episode ended is refused (no second score, no more reward); the action's
`metadata` is ignored; sessions never share episode state.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import uuid
import weakref
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata, ServerMode, State

from rlvr.adapters.openenv.routes import guard_routes
from rlvr.adapters.openenv.wire import ChatAction, ChatObservation, action_model, served_name
from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.base import Environment, as_message
from rlvr.rollout.driver import EpisodeRun

__all__ = ["create_served_app"]

DEFAULT_SPLIT = "default"
"""Name of the one task split served when the environment's arguments name none (`split=`)."""


def _dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.to_openai() for m in messages]


def task_entry(task: Task, index: int) -> dict[str, Any]:
    """A task as the task API shows it: id, index and prompt, never the reference."""
    return {"id": task.id, "index": index, "prompt": _dicts(task.prompt)}


SHOWN_DETAIL = frozenset({"error", "timeout"})
"""Verdict statuses whose `detail` a client gets: why the grader broke. A scored verdict's detail
(correct, incorrect, no_answer) compares with the gold (math: "... != gold '42'"), so it stays on the server."""


def served_verdict(verdict: Verdict) -> dict[str, Any]:
    """The verdict as the client gets it: its JSON, the detail withheld unless the grader broke (`SHOWN_DETAIL`)."""
    shown = verdict.model_dump(mode="json")
    if verdict.status not in SHOWN_DETAIL:
        shown["detail"] = f"{verdict.status} (the detail is withheld by the server: it can quote the reference)"
    return shown


class ServedHost:
    """What every session of one server shares: the rlvr env, its task index, the open sessions.

    Args:
        env: the loaded rlvr environment (its tasks and verifier are shared by all sessions).
        split: the name the task API gives the environment's one task split.
    """

    def __init__(self, env: Environment, split: str = DEFAULT_SPLIT) -> None:
        self.env = env
        self.split = split
        self.name = served_name(env.spec.id)
        self.action_cls = action_model(env.spec)
        self._by_id: dict[str, Task] | None = None
        self._open: weakref.WeakSet[ServedEnv] = weakref.WeakSet()
        self._lock = threading.Lock()

    def task(self, task_id: str) -> Task:
        """The task with id `task_id` (ConfigError naming it when there is none)."""
        if self._by_id is None:
            self._by_id = {t.id: t for t in self.env.tasks}
        try:
            return self._by_id[task_id]
        except KeyError:
            raise ConfigError(f"unknown task_id {task_id!r} for environment {self.env.spec.id!r} "
                              f"({len(self.env.tasks)} tasks; list them with the task API)") from None

    def check_split(self, split: str) -> None:
        """Raise ConfigError unless `split` is the served split."""
        if split != self.split:
            raise ConfigError(f"unknown split {split!r}; this server has one split, {self.split!r}")

    def track(self, served: ServedEnv) -> None:
        """Remember an instance with an episode, so `close_all` can release it."""
        with self._lock:
            self._open.add(served)

    def forget(self, served: ServedEnv) -> None:
        """Stop tracking `served` (its episode was released)."""
        with self._lock:
            self._open.discard(served)

    def sessions(self) -> list[ServedEnv]:
        """The instances that hold an episode now (a session between its first reset and its close)."""
        with self._lock:
            return list(self._open)

    def close_all(self) -> int:
        """Close every instance that still holds an episode (server shutdown). Returns how many."""
        live = self.sessions()
        for served in live:
            served.close()
        return len(live)


FINAL_ANSWER_TOOL = "submit_answer"
"""The MCP tool that ends an episode with a final answer: `tools/call submit_answer {"answer": TEXT}` plays
the assistant message TEXT with no tool call, the final-answer convention of every rlvr environment."""


def final_answer_tool() -> dict[str, Any]:
    """The MCP tool `FINAL_ANSWER_TOOL` (`{"name", "description", "inputSchema"}`)."""
    return {"name": FINAL_ANSWER_TOOL,
            "description": "End the episode with your final answer; the episode is scored on it.",
            "inputSchema": {"type": "object", "properties": {"answer": {
                "type": "string", "description": "The final answer, as the final assistant message."}},
                "required": ["answer"], "additionalProperties": False}}


def mcp_tools(spec: EnvSpec) -> list[dict[str, Any]]:
    """The MCP tools a served env offers: its OpenAI tool schemas as MCP tools, then `FINAL_ANSWER_TOOL`.

    Raises:
        ConfigError: the environment has a tool named `FINAL_ANSWER_TOOL` itself.
    """
    tools = []
    for schema in spec.tools:
        function = schema.get("function", schema)
        if function.get("name") == FINAL_ANSWER_TOOL:
            raise ConfigError(f"environment {spec.id!r} has a tool named {FINAL_ANSWER_TOOL!r}, the name `rlvr serve` "
                              "gives its final-answer MCP tool; rename the environment's tool")
        tools.append({"name": function["name"], "description": function.get("description", ""),
                      "inputSchema": function.get("parameters") or {"type": "object", "properties": {}}})
    return [*tools, final_answer_tool()]


class ServedTools:
    """One session's tools as OpenEnv's `/mcp` handler uses an environment's `mcp_client`.

    `tools/list` lists `mcp_tools(env.spec)`; `tools/call` plays one assistant message in the
    session's episode (the same `EpisodeRun.act` as a WebSocket step): a call of an env tool is a
    message with that one native tool call, a call of `FINAL_ANSWER_TOOL` the message with the answer as
    its content and no call. The result is an MCP `CallToolResult`: `content` (the environment's answer
    as text) and `structuredContent`, the observation a WebSocket step returns (`messages`,
    `task_id`, `done`, `reward`, `verdict`, `metadata`).
    """

    def __init__(self, served: ServedEnv) -> None:
        self._served = served

    def is_connected(self) -> bool:
        """Always True: the tools are the session's own, nothing to connect to."""
        return True

    async def __aenter__(self) -> ServedTools:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def list_tools(self) -> list[dict[str, Any]]:
        """The MCP tools (`{"name", "description", "inputSchema"}`)."""
        return mcp_tools(self._served._host.env.spec)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Play the call in the session's episode; returns `{"content", "structuredContent", "isError"}`.

        Raises:
            ConfigError: `arguments` is not an object, `FINAL_ANSWER_TOOL` without a string `answer`, no
                running episode (reset over the session's WebSocket first), or the episode is over.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ConfigError(f"tools/call arguments must be a JSON object, got {type(arguments).__name__}")
        if name == FINAL_ANSWER_TOOL:
            answer = arguments.get("answer")
            if not isinstance(answer, str) or set(arguments) != {"answer"}:
                raise ConfigError(f'{FINAL_ANSWER_TOOL} takes one argument, {{"answer": string}}; got {arguments!r}')
            message = Message(role="assistant", content=answer)
        else:
            call = {"id": f"mcp_{self._served.state.step_count + 1}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}
            message = as_message({"content": "", "tool_calls": [call]})
        observation = await self._served._play(message)
        shown = observation.model_dump(mode="json")
        text = "\n".join(str(m.get("content") or "") for m in observation.messages)
        return {"content": [{"type": "text", "text": text}], "structuredContent": shown, "isError": False}


class ServedEnv(OpenEnvEnvironment[ChatAction, ChatObservation, State]):  # type: ignore[misc]
    """One OpenEnv session's environment: rlvr episodes on its own episode copy of the shared env."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, host: ServedHost) -> None:
        super().__init__()
        self._host = host
        self._run: EpisodeRun | None = None
        self._state = State(episode_id=None, step_count=0)
        self._ended_by: str | None = None
        self._closed = False
        self._turn_lock = asyncio.Lock()

    @property
    def episode(self) -> Environment | None:
        """The session's current episode copy of the rlvr env (None before reset and after close)."""
        return self._run.env if self._run is not None else None

    # -- episodes ------------------------------------------------------------------------
    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          task_id: str | None = None, split: str | None = None, index: int | None = None,
                          **kwargs: Any) -> ChatObservation:
        """Start an episode: the task `task_id`, or `split`+`index`, or one drawn with `seed`.

        Raises:
            ConfigError: an unknown task id, split or index, an unknown keyword, or a closed session.
        """
        if kwargs:
            raise ConfigError(f"unknown reset arguments {sorted(kwargs)}; use seed, episode_id, task_id, "
                              "or split and index")
        self._check_open()
        task = self._select(task_id, split, index)
        async with self._turn_lock:
            self._release()
            run = EpisodeRun(self._host.env.episode_copy(), task, layout=None)
            self._run = run
            self._host.track(self)
            self._ended_by = None
            prompt = await run.reset(seed)
        task_id = run.reset_info["task_id"]
        self._state = State(episode_id=episode_id or uuid.uuid4().hex, step_count=0, task_id=task_id)
        return ChatObservation(messages=_dicts(prompt), task_id=task_id, done=False, reward=None,
                               metadata={"turn": 0})

    def _select(self, task_id: str | None, split: str | None, index: int | None) -> Task | None:
        if task_id is not None:
            if split is not None or index is not None:
                raise ConfigError("give task_id, or split and index, not both")
            return self._host.task(str(task_id))
        if split is None and index is None:
            return None
        if split is None or index is None:
            raise ConfigError("reset by the task API's numbering needs both split and index")
        self._host.check_split(split)
        tasks = self._host.env.tasks
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(tasks):
            raise ConfigError(f"index must be an int in [0, {len(tasks)}), got {index!r}")
        return tasks[index]

    async def step_async(self, action: ChatAction, timeout_s: float | None = None, **kwargs: Any) -> ChatObservation:
        """Play one assistant message; the action's `metadata` is ignored (it never changes scoring).

        Raises:
            ConfigError: no running episode (not reset, already ended, or the session was closed).
        """
        return await self._play(as_message({"content": action.content, "tool_calls": action.tool_calls}))

    async def _play(self, message: Message) -> ChatObservation:
        """Step the session's episode with one assistant message (one at a time: WebSocket and MCP calls queue)."""
        async with self._turn_lock:
            self._check_open()
            run = self._run
            if run is None:
                raise ConfigError("no episode: send reset first (over the session's WebSocket /ws)")
            if run.done:
                why = f" ({self._ended_by})" if self._ended_by else ""
                raise ConfigError(f"the episode is over{why}; reset to start another")
            try:
                result = await run.act(message)
            except Exception as exc:  # the episode's state is unknown now: end it, tell the client
                self._ended_by = f"the environment failed: {type(exc).__name__}"
                run.end(Verdict.error(f"{self._ended_by}: {exc}"))
                raise
            self._state.step_count += 1
            return self._observation(result, run)

    # -- the session's tools over OpenEnv's /mcp (tools/list, tools/call) -----------------
    @property
    def mcp_client(self) -> ServedTools:
        """The session's tools as OpenEnv's `/mcp` handler calls them (`tools/list`, `tools/call`)."""
        return ServedTools(self)

    def _observation(self, result: StepResult, run: EpisodeRun) -> ChatObservation:
        done = result.terminated or result.truncated
        metadata: dict[str, Any] = {"turn": run.env.turn, "truncated": result.truncated}
        reward: float | None = result.reward
        verdict = None
        if done and result.verdict is not None:
            verdict = served_verdict(result.verdict)
            metadata["status"] = result.verdict.status
            if result.verdict.reward is None:
                reward = None  # a broken grader: masked, never a 0
        return ChatObservation(messages=_dicts(result.messages), task_id=run.task_id, verdict=verdict,
                               done=done, reward=reward, metadata=metadata)

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigError("this session was closed (idle past the server's --idle-timeout, or shut down); "
                              "open a new one")

    # -- OpenEnv's sync API (the server uses the async one) ------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ChatObservation:
        """Blocking `reset_async` (not inside a running event loop)."""
        return asyncio.run(self.reset_async(seed=seed, episode_id=episode_id, **kwargs))

    def step(self, action: ChatAction, timeout_s: float | None = None, **kwargs: Any) -> ChatObservation:
        """Blocking `step_async` (not inside a running event loop)."""
        return asyncio.run(self.step_async(action))

    @property
    def state(self) -> State:
        """OpenEnv state: `episode_id`, `step_count` and the episode's `task_id`."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """OpenEnv metadata: the served name, the env's description and its version (`v1`)."""
        spec = self._host.env.spec
        return EnvironmentMetadata(name=self._host.name, description=spec.description or spec.id,
                                   version=spec.id.rsplit("-", 1)[-1])

    # -- task API (OpenEnv's TaskProvider) -----------------------------------------------
    def list_splits(self) -> list[str]:
        """The one served split."""
        return [self._host.split]

    def num_tasks(self, split: str) -> int:
        """How many tasks the split has."""
        self._host.check_split(split)
        return len(self._host.env.tasks)

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """Every task as `{"id", "index", "prompt"}` (no reference)."""
        self._host.check_split(split)
        return [task_entry(t, i) for i, t in enumerate(self._host.env.tasks)]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """Task `index` as `{"id", "index", "prompt"}` (IndexError, OpenEnv's 400, when out of range)."""
        self._host.check_split(split)
        tasks = self._host.env.tasks
        if not 0 <= index < len(tasks):
            raise IndexError(index)
        return task_entry(tasks[index], index)

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        """Tasks `start:stop` (slice semantics) as `{"id", "index", "prompt"}`."""
        self._host.check_split(split)
        tasks = self._host.env.tasks
        lo, hi, _ = slice(start, stop).indices(len(tasks))
        return [task_entry(tasks[i], i) for i in range(lo, hi)]

    # -- end -----------------------------------------------------------------------------
    def _release(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            self._host.forget(self)
            run.env.close_episode()

    def close(self) -> None:
        """End the session: release its episode's own resources (its sandbox), not the shared verifier."""
        self._closed = True
        self._release()


def create_served_app(env: Environment, *, max_sessions: int = 64, idle_timeout_s: float | None = 300.0,
                      split: str = DEFAULT_SPLIT, host: ServedHost | None = None) -> Any:
    """OpenEnv's FastAPI app serving `env` (see the module docstring).

    Args:
        env: the loaded rlvr environment; it stays open (the caller closes it after the server).
        max_sessions: most WebSocket sessions at once; past it a new one is refused (CAPACITY_REACHED).
        idle_timeout_s: a session idle this long (seconds) is closed by OpenEnv's reaper; None: never.
        split: the task API's name for the environment's tasks.
        host: the shared state to use (made from `env` when None); `serve` keeps it to close every
            session at shutdown.

    Returns:
        The FastAPI application (its `ServedHost` is `app.state.rlvr_host`, the `SessionGuard` of its
        routes `app.state.rlvr_sessions`).

    Raises:
        ConfigError: a bad limit, or the environment has a tool named `FINAL_ANSWER_TOOL`.
    """
    if max_sessions < 1:
        raise ConfigError(f"max_sessions must be >= 1, got {max_sessions}")
    if idle_timeout_s is not None and idle_timeout_s <= 0:
        raise ConfigError(f"idle_timeout_s must be > 0 or None, got {idle_timeout_s}")
    shared = host or ServedHost(env, split)

    def factory() -> ServedEnv:
        return ServedEnv(shared)

    factory.__name__ = shared.name
    mcp_tools(env.spec)  # a tool named like the final-answer tool: refused before serving
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout_s)
    server = HTTPEnvServer(factory, shared.action_cls, ChatObservation, concurrency_config=config,
                           env_name=shared.name)
    app = FastAPI(title=f"rlvr serve: {env.spec.id}", version="1.0.0")
    server.register_routes(app, mode=os.environ.get("OPENENV_MODE", ServerMode.SIMULATION.value))
    app.state.rlvr_host = shared
    app.state.rlvr_sessions = guard_routes(app, server)
    return app
