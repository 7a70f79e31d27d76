"""`openenv/remote-v1`: any OpenEnv server as an rlvr environment.

`rlvr.make("openenv/remote-v1", base_url=URL, ...)` talks to a running OpenEnv server through
OpenEnv's own client (`GenericEnvClient`, one WebSocket session per episode) and its HTTP routes
(`/health`, `/schema`, the task API, `/reset` for prompts).

Actions (read from the server's `/schema`, "action"):

- **chat** -- an rlvr server (`rlvr serve`: the schema carries `x-rlvr-env`): the model's message is
  the action, `{"content", "tool_calls"}` in the OpenAI wire format; the schema's `tools` are the
  env's tools (`EnvSpec.tools`), the observation's `messages` are the env's answer, its `verdict`
  (only when the server says done) IS the episode's Verdict, and its per-step `reward`s are the
  step rewards.
- **text** -- a foreign server whose action has a single text field (besides OpenEnv's `metadata`):
  the message's content is that field.
- **tool** -- any other object schema becomes ONE tool (its parameters: the action's properties
  minus `metadata`, local `$ref`s inlined) the model calls natively or as Hermes
  `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` text; each call is one server step,
  answered with the observation; a message without a call ends the episode. A call the server
  rejects (`VALIDATION_ERROR`) is answered with the error and counts as `invalid_action`.

Foreign observations are shown as JSON text (the observation minus `reward`, `done`, `metadata`).
A foreign episode is scored by `rlvr.environments.external.return_verdict` (the server's rewards
summed; `correct` only when the server said done with a return >= `success_threshold`); a reward
of None from the server is an `error` verdict (masked), never 0, and so are a reward that is not a
number (a string "1"), a `done` that is not a boolean (a string "false"), and rewards whose sum
overflows to inf. Only the server's observation
fields (`reward`, `done`, `verdict`) are read for scoring: nothing the model writes is.

The env, not the server, owns which tokens are the model's and what a reward may be. Whatever the
server sends, an episode is an `error` verdict (reward None, masked) when:

- a step reward is not finite, or the rewards so far sum to a number that is not finite (1e308
  twice);
- an rlvr server's verdict has a reward outside the declared range (`reward_range`: the server's
  own `x-rlvr-reward-range`, or the one passed to `make`), or a reward that is not what its step
  rewards add up to (its rewards are `StepResult.reward`s, which sum to the verdict's reward); a
  foreign episode's return outside a `reward_range` passed to `make`;
- an observation's messages after a step hold a model turn (`role="assistant"`, or `tool_calls`):
  the model's turns are only the actions it sent, so no server text is trained on or kept by
  `rlvr synth` as the model's;
- an observation is larger than `max_observation_bytes` (its JSON, UTF-8; a WebSocket message
  over it is refused by the client before it is read whole); a reset observation over it is a
  `BackendError` for that episode.

Tasks: from the task API (`/list_environments`, `/{env}/splits`, `/{env}/num_tasks`,
`/{env}/task_range`), keeping the server's ids (a spec's `id`, else `{split}-{index}`); an episode
resets the server with `split` + `index` (+ `task_id` for rlvr servers). A server without the task
API (501) gets seed tasks `seed-{s}` (reset with `seed=s`). A spec without a prompt gets the
rendered observation of its reset (fetched lazily with HTTP `/reset`); an episode whose reset
observation differs from it is an error naming the task.

Failures: an unreachable URL or a schema that cannot be mapped is a `ConfigError` at `make`; a
server failure mid-episode (dropped connection, server error, no answer within `timeout_s`) is an
`error` verdict (reward None) for that episode only. Sessions: each `episode_copy()` opens its own
WebSocket session at `reset` and closes it when the episode ends or the copy is closed; `close()`
of the original closes every session of every copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rlvr.core.errors import BackendError, ConfigError, MissingExtraError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.actions import ParsedCall, TextTag, parse_actions, render_text_results
from rlvr.environments.client_loop import ClientLoop
from rlvr.environments.external import ReturnVerifier, check_success_threshold, return_verdict
from rlvr.environments.loaders import TaskList
from rlvr.environments.multi_turn import MultiTurnEnv

__all__ = ["ENV_ID_KEY", "MAX_TURNS_KEY", "REWARD_RANGE_KEY", "TOOLS_KEY", "make_remote"]

# The keys of an rlvr server's action schema (the wire contract of `rlvr serve`, written by
# `rlvr.adapters.openenv.wire`, read here): this layer owns them, the server imports them.
ENV_ID_KEY = "x-rlvr-env"
"""Key of an rlvr server's action schema naming the served env (the wire contract of `rlvr serve`)."""
TOOLS_KEY = "tools"
"""Key of an rlvr server's action schema holding the env's OpenAI tool schemas."""
MAX_TURNS_KEY = "x-rlvr-max-turns"
"""Key of an rlvr server's action schema holding the env's turn limit (`EnvSpec.max_turns`)."""
REWARD_RANGE_KEY = "x-rlvr-reward-range"
"""Key of an rlvr server's action schema holding the env's `[low, high]` reward bounds."""
DEFAULT_MAX_TURNS = 100
"""Turn limit of an episode on a server that does not state one (a foreign server)."""
DEFAULT_MAX_OBSERVATION_BYTES = 4 * 1024 * 1024
"""Largest observation kept, bytes of its JSON (UTF-8): 4 MiB, far above any chat turn or tool output."""
_ENVELOPE_BYTES = 64 * 1024
"""Room for OpenEnv's WebSocket envelope around an observation (`max_observation_bytes` + this is the
client's message limit)."""
HIDDEN_FIELDS = ("reward", "done", "metadata")
"""Observation fields never shown to the model (scoring and bookkeeping)."""
_VALIDATION = re.compile(r"\(code: VALIDATION_ERROR\)\s*$")


@dataclass(frozen=True)
class ActionMapping:
    """How an assistant message becomes the server's action (see the module docstring)."""

    kind: Literal["chat", "text", "tool"]
    field: str = ""
    """The text field (kind 'text')."""
    tools: tuple[dict[str, Any], ...] = ()
    """OpenAI tool schemas offered to the policy: the server env's (chat) or the action as one tool (tool)."""
    served_env: str = ""
    """The rlvr env id an rlvr server names (chat)."""
    max_turns: int | None = None
    """The served env's turn limit (chat; None when the server does not say)."""
    reward_range: tuple[float, float] | None = None
    """The served env's reward bounds (chat; None when the server does not say)."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", re.sub(r"[^A-Za-z0-9]", "", name)).lower() or "action"


def _inline(node: Any, defs: dict[str, Any], where: str, seen: tuple[str, ...] = ()) -> Any:
    """`node` with local `$ref`s (`#/$defs/X`, `#/definitions/X`) replaced by their definitions."""
    if isinstance(node, list):
        return [_inline(item, defs, where, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if ref is not None:
        match = re.fullmatch(r"#/(?:\$defs|definitions)/([^/]+)", ref) if isinstance(ref, str) else None
        if match is None or match.group(1) not in defs:
            raise ConfigError(f"action field {where!r}: cannot resolve $ref {ref!r} (only local $defs are supported)")
        if ref in seen:
            raise ConfigError(f"action field {where!r}: recursive $ref {ref!r} cannot be offered as a tool")
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(defs[match.group(1)], defs, where, (*seen, ref)), **_inline(rest, defs, where, seen)}
    return {k: _inline(v, defs, where, seen) for k, v in node.items()}


def action_mapping(schema: Any, tool_name: str | None = None) -> ActionMapping:
    """Map an OpenEnv action JSON schema to chat pass-through, a text field, or one tool.

    Raises:
        ConfigError: the schema is not an object schema, or a field cannot be mapped (an
            unresolvable or recursive `$ref`, a required field no value satisfies); the message names it.
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object" \
            or not isinstance(schema.get("properties", {}), dict):
        kind = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
        raise ConfigError(f"the server's action schema is not a JSON object schema (type {kind!r}); "
                          "openenv/remote-v1 maps object actions only")
    if ENV_ID_KEY in schema:
        tools = schema.get(TOOLS_KEY) or []
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise ConfigError(f"action field {TOOLS_KEY!r}: an rlvr server's tools must be a list of OpenAI "
                              "tool schemas")
        max_turns, bounds = schema.get(MAX_TURNS_KEY), schema.get(REWARD_RANGE_KEY)
        if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
            raise ConfigError(f"action field {MAX_TURNS_KEY!r}: an rlvr server's turn limit must be an int >= 1, "
                              f"got {max_turns!r}")
        if bounds is not None and not (isinstance(bounds, list) and len(bounds) == 2
                                       and all(isinstance(b, int | float) for b in bounds)):
            raise ConfigError(f"action field {REWARD_RANGE_KEY!r}: an rlvr server's reward range must be "
                              f"[low, high], got {bounds!r}")
        return ActionMapping(kind="chat", tools=tuple(tools), served_env=str(schema[ENV_ID_KEY]),
                             max_turns=max_turns,
                             reward_range=(float(bounds[0]), float(bounds[1])) if bounds is not None else None)
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    props = {k: _inline(v, defs, k) for k, v in schema.get("properties", {}).items() if k != "metadata"}
    required = [r for r in schema.get("required", []) if r != "metadata"]
    for name in required:
        if props.get(name, True) is False or name not in props:
            raise ConfigError(f"action field {name!r} is required but no value can satisfy its schema")
    if len(props) == 1:
        (name, prop), = props.items()
        if isinstance(prop, dict) and prop.get("type") == "string":
            return ActionMapping(kind="text", field=name)
    parameters: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if schema.get("additionalProperties") is False:
        parameters["additionalProperties"] = False
    name = tool_name or _snake(str(schema.get("title", "action")))
    tool = {"type": "function", "function": {"name": name, "parameters": parameters,
                                             "description": str(schema.get("description", "Act in the environment."))}}
    return ActionMapping(kind="tool", tools=(tool,))


def render_observation(observation: dict[str, Any]) -> str:
    """A foreign observation as the model sees it: JSON of its fields minus `HIDDEN_FIELDS`."""
    return json.dumps({k: v for k, v in observation.items() if k not in HIDDEN_FIELDS}, ensure_ascii=False)


class _Server:
    """HTTP side of one OpenEnv server: health, schema, task API, stateless `/reset` (httpx)."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        import httpx

        self.base_url = re.sub(r"^ws", "http", base_url.rstrip("/"))
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout_s)
        self._error = httpx.HTTPError

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                missing_ok: bool = False) -> Any:
        """JSON of `method path`; None for a 501 (or 404) when `missing_ok`.

        Raises:
            ConfigError: the server cannot be reached or answers with an error; the message names the URL.
        """
        try:
            response = self.http.request(method, path, json=body)
        except self._error as exc:
            raise ConfigError(f"cannot reach the OpenEnv server at {self.base_url} ({path}): {exc}") from exc
        if missing_ok and response.status_code in (404, 501):
            return None
        if response.status_code >= 400:
            raise ConfigError(f"the OpenEnv server at {self.base_url} answered {path} with "
                              f"{response.status_code}: {response.text[:300]}")
        return response.json()

    def close(self) -> None:
        self.http.close()


async def _open_session(base_url: str, timeout_s: float, max_observation_bytes: int) -> Any:
    """A connected async `GenericEnvClient` (runs on `ClientLoop`) refusing messages over the observation cap."""
    from openenv.core.generic_client import GenericEnvClient

    client = GenericEnvClient(base_url=base_url, connect_timeout_s=timeout_s, message_timeout_s=timeout_s,
                              max_message_size_mb=(max_observation_bytes + _ENVELOPE_BYTES) / 2**20)
    try:
        await client.connect()
    except BaseException:
        with contextlib.suppress(Exception):  # release what the failed connect opened
            await client.close()
        raise
    return client


async def _invoke(session: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """`await session.method(...)` (runs on `ClientLoop`, where OpenEnv's client returns awaitables)."""
    return await getattr(session, method)(*args, **kwargs)


class _Sessions:
    """Every open server session of one environment and its episode copies (closed together)."""

    def __init__(self) -> None:
        self.open: set[Any] = set()
        self.lock = threading.Lock()

    def add(self, session: Any) -> None:
        with self.lock:
            self.open.add(session)

    def discard(self, session: Any) -> bool:
        """Forget `session`; True when it was open (the caller closes it)."""
        with self.lock:
            if session in self.open:
                self.open.discard(session)
                return True
            return False

    def close(self, session: Any, timeout_s: float = 10.0) -> None:
        """Close `session` from sync code (best effort: a dropped connection is already closed)."""
        self.discard(session)
        with contextlib.suppress(Exception):
            ClientLoop.call_sync(_invoke(session, "close"), timeout_s)

    async def aclose(self, session: Any) -> None:
        """Close `session` from async code (best effort)."""
        self.discard(session)
        with contextlib.suppress(Exception):
            await ClientLoop.call(_invoke(session, "close"))

    def close_all(self) -> None:
        with self.lock:
            sessions, self.open = list(self.open), set()
        for session in sessions:
            self.close(session)


@dataclass
class _Episode:
    """Per-episode server bookkeeping."""

    session: Any = None
    done: bool = False
    failure: str | None = None
    rewards: list[float | None] = field(default_factory=list)
    verdict: Any = None
    last: dict[str, float] = field(default_factory=dict)


class RemoteOpenEnv(MultiTurnEnv):
    """An OpenEnv server as an rlvr environment; build it with `make_remote` (module docstring)."""

    episode_shared: ClassVar[frozenset[str]] = MultiTurnEnv.episode_shared | {"server", "mapping", "sessions"}

    def __init__(self, server: _Server, mapping: ActionMapping, tasks: Sequence[Task], spec: EnvSpec, *,
                 timeout_s: float, success_threshold: float | None, max_calls_per_turn: int = 8,
                 capacity_wait_s: float = 0.0, max_observation_bytes: int = DEFAULT_MAX_OBSERVATION_BYTES,
                 enforced_range: tuple[float, float] | None = None) -> None:
        weights = {} if mapping.kind == "chat" else {"env_reward": 1.0}
        super().__init__(tasks, ReturnVerifier(f"the OpenEnv server at {server.base_url}"), spec,
                         reward_weights=weights)
        self.server, self.mapping, self.sessions = server, mapping, _Sessions()
        self.timeout_s = timeout_s
        self.capacity_wait_s = capacity_wait_s
        self.success_threshold = success_threshold
        self.max_calls_per_turn = max_calls_per_turn
        self.max_observation_bytes = max_observation_bytes
        self.enforced_range = enforced_range
        # bounds a verdict's reward (chat) or the return (foreign) must lie in; None: not checked
        self.text_tags = (TextTag.hermes(),) if mapping.kind == "tool" else ()
        self.episode = _Episode()
        self._is_copy = False

    def episode_copy(self) -> RemoteOpenEnv:
        """A copy for one concurrent episode, with its own server session (opened at `reset`)."""
        clone = super().episode_copy()
        assert isinstance(clone, RemoteOpenEnv)
        clone.episode, clone._is_copy = _Episode(), True
        return clone

    # -- the server session ----------------------------------------------------------
    async def _end_session(self) -> None:
        session, self.episode.session = self.episode.session, None
        if session is not None:
            await self.sessions.aclose(session)

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return await ClientLoop.call(_invoke(self.episode.session, method, *args, **kwargs))

    # -- episode API ---------------------------------------------------------------------
    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Pose the task and reset a fresh server session with it.

        Raises:
            BackendError: the server failed to start the episode (this episode only).
            ConfigError: the server's reset observation differs from the task's prompt.
        """
        await self._end_session()
        messages, info = await super().reset(task, seed)
        assert self.task is not None
        self.episode = _Episode()
        reference = dict(self.task.reference)
        kwargs = {k: reference[k] for k in ("seed", "split", "index") if k in reference}
        if self.mapping.kind == "chat":  # an rlvr server starts a task by its id (not with split + index too)
            kwargs = {"task_id": self.task.id}
        if seed is not None and "seed" not in kwargs:
            kwargs["seed"] = seed  # the episode's randomness; a seed task's own seed poses the task
        deadline, delay = time.monotonic() + self.capacity_wait_s, 0.05
        while True:
            try:
                self.episode.session = await ClientLoop.call(_open_session(self.server.base_url, self.timeout_s,
                                                                           self.max_observation_bytes))
                self.sessions.add(self.episode.session)
                result = await self._call("reset", **kwargs)
                break
            except Exception as exc:  # any failure of the server or the connection ends this episode only
                await self._end_session()
                if "CAPACITY_REACHED" in str(exc) and time.monotonic() + delay < deadline:
                    await asyncio.sleep(delay)  # the server is full: wait for a slot (capacity_wait_s)
                    delay = min(2 * delay, 1.0)
                    continue
                raise BackendError(f"the OpenEnv server at {self.server.base_url} failed to reset task "
                                   f"{self.task.id!r}: {type(exc).__name__}: {exc}{_capacity_hint(exc)}") from exc
        try:
            _check_size(result.observation, self.max_observation_bytes)
        except ValueError as exc:
            await self._end_session()
            raise BackendError(f"the OpenEnv server at {self.server.base_url} reset task {self.task.id!r} with "
                               f"an observation too large to keep: {exc}") from exc
        if reference.get("prompt_from_reset") or self.mapping.kind == "chat":
            shown = _observation_messages(self.mapping, result.observation)
            if not shown or [m.model_dump() for m in shown] != [m.model_dump() for m in messages[-len(shown):]]:
                await self._end_session()
                raise ConfigError(f"task {self.task.id!r}: the server's reset observation differs from the task's "
                                  "prompt (its reset is not deterministic for this task)")
        return messages, info

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """Step the server with the message (chat/text) or with each of its tool calls (tool)."""
        self.episode.last = {"env_reward": 0.0, "invalid_action": 0.0}
        if self.episode.session is None:
            self.episode.failure = self.episode.failure or "the episode has no open server session"
            return [], True
        try:
            if self.mapping.kind == "tool":
                return await self._tool_turn(action)
            payload = ({"content": action.content, "tool_calls": action.to_openai().get("tool_calls")}
                       if self.mapping.kind == "chat" else {self.mapping.field: action.content})
            result = await self._call("step", payload)
            self._record(result)
            return _observation_messages(self.mapping, result.observation, after_step=True), bool(result.done)
        except Exception as exc:  # a server failure: an error verdict for this episode, the others go on
            self.episode.failure = f"{type(exc).__name__}: {exc}"
            await self._end_session()
            return [], True

    def _record(self, result: Any) -> None:
        """Keep a step's reward and done; ValueError (an error verdict) for what the env does not accept.

        Rejected: values OpenEnv's types do not allow, rewards whose sum is not finite, an observation
        over `max_observation_bytes`.
        """
        if not isinstance(result.reward, int | float | None) or not isinstance(result.done, bool):
            raise ValueError(f"the server sent reward={result.reward!r}, done={result.done!r}; OpenEnv's are a "
                             "number (or null) and a boolean")  # "1" or "false" must not be read as a success
        _check_size(result.observation, self.max_observation_bytes)
        reward = None if result.reward is None else float(result.reward)
        if reward is not None and not math.isfinite(reward):
            reward = None  # a NaN or infinite reward cannot be scored: an error verdict, like None
        message_reward = self.episode.last["env_reward"] + (reward or 0.0)
        if not math.isfinite(message_reward):
            raise ValueError("the server's rewards for one message overflow (their sum is not finite)")
        if not math.isfinite(sum(r for r in (*self.episode.rewards, reward) if r is not None)):
            raise ValueError("the server's rewards overflow: their sum so far is not finite")
        self.episode.rewards.append(reward)
        self.episode.last["env_reward"] = message_reward
        self.episode.done = result.done
        if self.mapping.kind == "chat" and result.done:
            self.episode.verdict = result.observation.get("verdict")

    async def _tool_turn(self, action: Message) -> tuple[list[Message], bool]:
        calls = parse_actions(action, self.text_tags, native=True)
        if not calls:
            return [], True
        name = self.mapping.tools[0]["function"]["name"]
        answers: list[tuple[ParsedCall, str]] = []
        for i, call in enumerate(calls):
            if call.error is not None or call.name != name or i >= self.max_calls_per_turn or self.episode.done:
                why = (call.error or (f"unknown tool {call.name!r}; the tool is {name!r}" if call.name != name else
                       "the episode is over; call not run" if self.episode.done else
                       f"at most {self.max_calls_per_turn} tool calls per message; call not run"))
                self.episode.last["invalid_action"] += 1.0
                answers.append((call, f"Error: {why}"))
                continue
            try:
                arguments = {k: v for k, v in call.arguments.items() if k != "metadata"}  # not the model's to set
                result = await self._call("step", arguments)
            except RuntimeError as exc:
                if not _VALIDATION.search(str(exc)):
                    raise
                self.episode.last["invalid_action"] += 1.0
                answers.append((call, f"Error: the server rejected the arguments: {exc}"))
                continue
            self._record(result)
            answers.append((call, render_observation(result.observation)))
        messages = [Message(role="tool", tool_call_id=call.call_id, name=call.name or None, content=text)
                    for call, text in answers if call.source == "native"]
        text_answers = [(call, text) for call, text in answers if call.source == "text"]
        if text_answers:
            messages.append(Message(role="user", content=render_text_results(text_answers)))
        return messages, self.episode.done

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        """`env_reward` (the server's rewards of this message) and `invalid_action` (rejected calls)."""
        return dict(self.episode.last)

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """`MultiTurnEnv.step`; an rlvr server's per-step rewards are kept as they are."""
        result = await super().step(action)
        if self.mapping.kind == "chat" and not (result.terminated or result.truncated):
            reward = self.episode.rewards[-1] if self.episode.rewards else None
            self.step_rewards[-1] = reward or 0.0
            result = result.model_copy(update={"reward": reward or 0.0})
        return result

    async def final_verdict(self) -> Verdict:
        """The server's verdict (rlvr server) or the return rule (foreign); error on a failure or a None reward."""
        try:
            return self._verdict()
        finally:
            await self._end_session()

    def _verdict(self) -> Verdict:
        assert self.task is not None
        where = f"the OpenEnv server at {self.server.base_url}, task {self.task.id!r}"
        episode = self.episode
        if episode.failure is not None:
            return Verdict.error(f"{where} failed mid-episode: {episode.failure}")
        if self.mapping.kind == "chat":
            if not episode.done or episode.verdict is None:
                return Verdict.error(f"{where}: the episode was cut before the server ended it (no server verdict)")
            try:
                verdict = Verdict.model_validate(episode.verdict)
            except ValueError as exc:
                return Verdict.error(f"{where} sent a malformed verdict: {exc}")
            problem = self._verdict_problem(verdict)
            return verdict if problem is None else Verdict.error(f"{where} sent a verdict the env refuses: {problem}")
        missing = [i + 1 for i, r in enumerate(episode.rewards) if r is None]
        if missing:
            return Verdict.error(f"{where} gave no finite reward (None, NaN or inf) at step(s) {missing}; "
                                 "the episode cannot be scored")
        episode_return = sum(r or 0.0 for r in episode.rewards)
        if self.enforced_range is not None and math.isfinite(episode_return) \
                and not _within(episode_return, self.enforced_range):
            return Verdict.error(f"{where}: the episode return {episode_return:g} is outside the declared "
                                 f"reward_range {list(self.enforced_range)}")
        return return_verdict(episode_return, episode.done, self.turn, self.success_threshold)

    def _verdict_problem(self, verdict: Verdict) -> str | None:
        """Why an rlvr server's verdict cannot be the episode's (reward range, sum of its step rewards); None: fine."""
        if verdict.reward is None:
            return None  # an error verdict: masked whatever else it says
        if self.enforced_range is not None and not _within(verdict.reward, self.enforced_range):
            return f"reward {verdict.reward:g} ({verdict.status}) is outside the declared reward_range " \
                   f"{list(self.enforced_range)}"
        rewards = [r or 0.0 for r in self.episode.rewards]
        total = sum(rewards)
        if abs(total - verdict.reward) > 1e-6 * (1.0 + sum(abs(r) for r in rewards)):
            return f"reward {verdict.reward:g}, but its step rewards sum to {total:g} (an rlvr server's step " \
                   "rewards add up to the verdict's)"
        return None

    def close_episode(self) -> None:
        """Close this copy's server session (if open); the other copies' sessions stay open."""
        session, self.episode.session = self.episode.session, None
        if session is not None:
            self.sessions.close(session)

    def close(self) -> None:
        """A copy closes its own session; the original closes every session, its verifier and HTTP client."""
        self.close_episode()
        if not self._is_copy:
            self.sessions.close_all()
            self.server.close()
            super().close()


def _capacity_hint(exc: BaseException) -> str:
    """The fix for a server that refused a session because it is full (OpenEnv's CAPACITY_REACHED), else ''."""
    if "CAPACITY_REACHED" not in str(exc):
        return ""
    return ("; every episode holds one session: let the server take more (`rlvr serve --max-sessions N`; an "
            "`openenv init` server: `create_app(..., max_concurrent_envs=N)` in server/app.py, 1 by default) or "
            "run fewer episodes at once (`rlvr eval --concurrency N`; a trainer plays its generation batch at once)")


def _observation_messages(mapping: ActionMapping, observation: dict[str, Any],
                          after_step: bool = False) -> list[Message]:
    """What the model sees of an observation: an rlvr server's `messages`, else the rendered JSON.

    Raises:
        ValueError: `after_step` and a message is a model turn (`role="assistant"` or `tool_calls`): only
            the policy writes the model's turns.
    """
    if mapping.kind != "chat":
        return [Message(role="user", content=render_observation(observation))]
    messages = [Message.model_validate(m) for m in observation.get("messages") or []]
    if after_step:
        turns = [i for i, m in enumerate(messages) if m.role == "assistant" or m.tool_calls]
        if turns:
            raise ValueError(f"the server's observation holds model turns (role 'assistant' or tool_calls) at "
                             f"message(s) {turns}; an environment answers as user, tool or system, never as the model")
    return messages


def _check_size(observation: Any, limit: int) -> None:
    """ValueError when the observation's JSON (UTF-8) is over `limit` bytes."""
    size = len(json.dumps(observation, ensure_ascii=False, default=str).encode())
    if size > limit:
        raise ValueError(f"the observation is {size} bytes, over max_observation_bytes={limit} (raise it with "
                         "make('openenv/remote-v1', max_observation_bytes=N) if the server's observations are "
                         "that large by design)")


def _within(value: float, bounds: tuple[float, float]) -> bool:
    """`value` inside `[low, high]`, with a relative slack of 1e-9 for float sums."""
    low, high = bounds
    slack = 1e-9 * max(1.0, abs(low), abs(high))
    return low - slack <= value <= high + slack


# -- tasks ------------------------------------------------------------------------------
def _prompt(raw: Any) -> list[Message] | None:
    if isinstance(raw, str):
        return [Message(role="user", content=raw)]
    if isinstance(raw, list) and raw and all(isinstance(m, dict) for m in raw):
        return [Message.model_validate(m) for m in raw]
    return None


def _task_list(server: _Server, mapping: ActionMapping, env_name: str | None, split: str | None,
               size: int | None, seed: int, num_tasks: int, instructions: str | None) -> tuple[TaskList, str, str]:
    """The tasks (lazy prompts), the seeding kind and a dataset string."""
    names = server.request("GET", "/list_environments", missing_ok=True) or []
    if env_name is None and len(names) > 1:
        raise ConfigError(f"the OpenEnv server at {server.base_url} serves {names}; pass env_name=<one of them>")
    name = env_name or (names[0] if names else None)
    splits = server.request("GET", f"/{name}/splits", missing_ok=True) if name else None
    system = [Message(role="system", content=instructions)] if instructions else []

    def from_reset(index: int, task_id: str, reference: dict[str, Any]) -> Task:
        body = {k: v for k, v in reference.items() if k != "prompt_from_reset"}
        observation = server.request("POST", "/reset", body)["observation"]
        prompt = system + _observation_messages(mapping, observation)
        return Task(id=task_id, prompt=tuple(prompt), reference={**reference, "prompt_from_reset": True})

    if not splits:
        def seed_task(index: int, task_seed: int) -> Task:
            return from_reset(index, f"seed-{task_seed}", {"seed": task_seed})

        count = size if size is not None else num_tasks
        return (TaskList(range(seed, seed + count), seed_task), "procedural",
                f"openenv:{server.base_url}?seed={seed}&size={count}")
    known = [s.get("name") for s in splits if isinstance(s, dict)]
    chosen = split or known[0]
    if chosen not in known:
        raise ConfigError(f"split {chosen!r} is not served by {server.base_url} (splits: {known})")
    total = int(server.request("POST", f"/{name}/num_tasks", {"split": chosen})["num_tasks"])
    stop = total if size is None else min(size, total)
    specs = server.request("POST", f"/{name}/task_range", {"split": chosen, "start": 0, "stop": stop})["tasks"]

    def spec_task(index: int, spec: Any) -> Task:
        spec = spec if isinstance(spec, dict) else {}
        at = spec["index"] if isinstance(spec.get("index"), int) else index
        task_id = str(spec["id"]) if spec.get("id") is not None else f"{chosen}-{at}"
        reference = {"split": chosen, "index": at}
        prompt = _prompt(spec.get("prompt"))
        if prompt is None:
            return from_reset(index, task_id, reference)
        return Task(id=task_id, prompt=tuple(system + prompt), reference=reference)

    return TaskList(specs, spec_task), "deterministic", f"openenv:{server.base_url}/{name}?split={chosen}"


def make_remote(
    base_url: str,
    *,
    env_name: str | None = None,
    split: str | None = None,
    size: int | None = None,
    num_tasks: int = 100,
    seed: int = 0,
    max_turns: int | None = None,
    timeout_s: float = 60.0,
    capacity_wait_s: float = 0.0,
    success_threshold: float | None = None,
    tool_name: str | None = None,
    instructions: str | None = None,
    reward_range: tuple[float, float] | None = None,
    max_observation_bytes: int = DEFAULT_MAX_OBSERVATION_BYTES,
) -> RemoteOpenEnv:
    """Connect to the OpenEnv server at `base_url` as an rlvr environment (module docstring).

    Args:
        base_url: the server (`http://host:port`; `ws://` is accepted too).
        env_name: the task-API environment name; default the one `/list_environments` lists.
        split: the task split; default the first the server lists.
        size: at most this many tasks (the first ones); None: all (task API) or `num_tasks` seeds.
        num_tasks: number of seed tasks for a server without the task API (seeds `seed ..`).
        seed: first seed of the seed tasks.
        max_turns: assistant messages per episode; a server that never says done is cut there.
            Default: an rlvr server's own limit (it ends its episodes itself), else 100.
        timeout_s: connect and per-message limit, seconds; past it the episode is an error verdict.
        capacity_wait_s: how long an episode waits for a free session when the server is full
            (OpenEnv's CAPACITY_REACHED), seconds; 0: refused at once (an error naming the fix). Use it
            with episodes that progress on their own (rlvr eval, rollout_func, veRL/OpenRLHF agent
            loops); TRL's environment_factory resets a whole batch before generating, so there a
            waiting episode only fails later.
        success_threshold: return needed for `correct` (foreign servers; default: return > 0); finite.
        tool_name: name of the action tool (tool mode); default from the action schema's title.
        instructions: optional system message before each prompt.
        reward_range: bounds of the episode return (`spec.reward_range`), enforced (module docstring):
            a verdict or return outside them is an error verdict. Default: an rlvr server's own bounds
            (enforced), else (0, 1) (not enforced: a foreign server states none).
        max_observation_bytes: largest observation kept, bytes of its JSON (UTF-8); a larger one ends the
            episode with an error verdict. Default 4 MiB.

    Raises:
        ConfigError: the URL cannot be reached, the schema cannot be mapped, or a bad option (a
            success_threshold that is not finite, a reward_range that is not finite low <= high,
            max_observation_bytes < 1024).
        MissingExtraError: OpenEnv is not installed (`pip install 'rlvr[openenv]'`).
    """
    try:  # `openenv.core`, not `openenv`: a folder named openenv on sys.path is a namespace package
        import openenv.core  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("openenv", "openenv") from exc
    if not isinstance(base_url, str) or not re.match(r"^(https?|wss?)://", base_url):
        raise ConfigError(f"base_url must be an http:// or ws:// URL of an OpenEnv server, got {base_url!r}")
    if not timeout_s > 0 or (size is not None and size < 1) or num_tasks < 1:
        raise ConfigError(f"timeout_s, size and num_tasks must be positive, got {timeout_s!r}, {size!r}, {num_tasks!r}")
    if not (isinstance(capacity_wait_s, int | float) and 0 <= capacity_wait_s < math.inf):
        raise ConfigError(f"capacity_wait_s must be a finite number of seconds >= 0, got {capacity_wait_s!r}")
    check_success_threshold(success_threshold)
    if isinstance(max_observation_bytes, bool) or not isinstance(max_observation_bytes, int) \
            or max_observation_bytes < 1024:
        raise ConfigError(f"max_observation_bytes must be an int >= 1024 (bytes), got {max_observation_bytes!r}")
    if reward_range is not None and not (len(reward_range) == 2 and all(math.isfinite(b) for b in reward_range)
                                         and reward_range[0] <= reward_range[1]):
        raise ConfigError(f"reward_range must be finite (low, high) with low <= high, got {reward_range!r}")
    server = _Server(base_url, timeout_s)
    try:
        server.request("GET", "/health")
        mapping = action_mapping(server.request("GET", "/schema").get("action"), tool_name)
        tasks, seeding, dataset = _task_list(server, mapping, env_name, split, size, seed, num_tasks, instructions)
    except BaseException:
        server.close()
        raise
    what = f"rlvr env {mapping.served_env}" if mapping.kind == "chat" else f"{mapping.kind} actions"
    if max_turns is None:
        max_turns = mapping.max_turns or DEFAULT_MAX_TURNS
    enforced = reward_range or mapping.reward_range
    if reward_range is None:
        reward_range = mapping.reward_range or (0.0, 1.0)
    spec = EnvSpec(id="openenv/remote-v1", description=f"OpenEnv server {server.base_url} ({what})",
                   max_turns=max_turns, tools=mapping.tools, seeding=seeding, reward_range=reward_range,
                   dataset=dataset)
    return RemoteOpenEnv(server, mapping, tasks, spec, timeout_s=timeout_s, capacity_wait_s=capacity_wait_s,
                         success_threshold=success_threshold, max_observation_bytes=max_observation_bytes,
                         enforced_range=enforced)

