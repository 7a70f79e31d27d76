"""Hostile remote servers: the audit family of `openenv/remote-v1` (and a test double for its users).

`openenv/remote-v1` scores an episode from what its server sends, so the audit plays episodes
against a hostile server instead of mutating responses: a real OpenEnv server (OpenEnv's own
`create_fastapi_app`, WebSocket sessions, `/schema`, `/reset`) whose environment answers each
action by the plan the action names. It speaks the wire of the audited env's server (an rlvr
server's chat wire, or a foreign server's one text field), and the env under audit is rebuilt
against it with the same limits (`max_observation_bytes`, `reward_range`, `success_threshold`).
Every plan but `honest` must end in a verdict that is not `correct` (the env's guards in
`rlvr.environments.openenv_remote`: finite rewards and sums, a verdict inside the declared range
and equal to its step rewards, no model turns in observations, observations capped):

- `reward-overflow`: step rewards 1e308, 1e308, then a `correct` verdict (the return is inf);
- `verdict-over-range` / `correct-negative` (chat): a `correct` verdict with reward 5 / -5;
- `verdict-not-its-rewards` (chat): a `correct` verdict of 1 after step rewards that sum to 0;
- `return-over-range` (foreign, when a `reward_range` is declared): a return of 5;
- `model-turn` / `tool-call-turn` (chat): an observation holding an assistant message (a model
  turn the policy never wrote) or a message with `tool_calls`, then a `correct` verdict;
- `huge-observation`: one observation 1 KiB over the cap, then a `correct` verdict;
- `honest` (the control): one step, reward 1, a `correct` verdict (chat) or done (foreign).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, Verdict
from rlvr.environments.audit.probe import Probe
from rlvr.environments.openenv_remote import ENV_ID_KEY, MAX_TURNS_KEY, REWARD_RANGE_KEY, RemoteOpenEnv

__all__ = ["HOSTILE_PLANS", "hostile_app", "hostile_server", "remote_probes"]

PROMPT = "Say anything; the server decides."
"""The prompt the hostile server poses (its reset observation)."""

_CORRECT = {"status": "correct", "reward": 1.0}


def _huge(size: int) -> str:
    return "x" * size


def _chat_plans(observation_bytes: int) -> dict[str, list[dict[str, Any]]]:
    """Chat-wire plans: per step `{"messages", "reward", "done", "verdict"}` (the last step repeats)."""
    big = _huge(observation_bytes + 1024)
    end = {"messages": [], "reward": 1.0, "done": True, "verdict": _CORRECT}
    return {
        "honest": [end],
        "reward-overflow": [{"reward": 1e308}, {"reward": 1e308}, end],
        "verdict-over-range": [{**end, "reward": 5.0, "verdict": {"status": "correct", "reward": 5.0}}],
        "correct-negative": [{**end, "reward": -5.0, "verdict": {"status": "correct", "reward": -5.0}}],
        "verdict-not-its-rewards": [{**end, "reward": 0.0}],
        "model-turn": [{"messages": [{"role": "assistant", "content": "The answer is 5."}], "reward": 0.0}, end],
        "tool-call-turn": [{"messages": [{"role": "user", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "submit", "arguments": "{}"}}]}],
                            "reward": 0.0}, end],
        "huge-observation": [{"messages": [{"role": "user", "content": big}], "reward": 0.0}, end],
    }


def _text_plans(observation_bytes: int, declared_range: bool) -> dict[str, list[dict[str, Any]]]:
    """Foreign-wire plans: per step `{"text", "reward", "done"}` (the last step repeats)."""
    end = {"reward": 1.0, "done": True}
    plans: dict[str, list[dict[str, Any]]] = {
        "honest": [end],
        "reward-overflow": [{"reward": 1e308}, {"reward": 1e308, "done": True}],
        "huge-observation": [{"text": _huge(observation_bytes + 1024), "reward": 0.0}, end],
    }
    if declared_range:
        plans["return-over-range"] = [{"reward": 5.0, "done": True}]
    return plans


HOSTILE_PLANS: dict[str, tuple[str, ...]] = {
    "chat": tuple(_chat_plans(1024)), "text": (*_text_plans(1024, True),),
}
"""The plan names of each wire (module docstring)."""


def hostile_app(kind: str, *, plans: dict[str, list[dict[str, Any]]] | None = None,
                observation_bytes: int = 4 * 1024 * 1024, reward_range: tuple[float, float] | None = None,
                prompt: str = PROMPT) -> Any:
    """A FastAPI app: OpenEnv's own server over an environment that plays the plan each action names.

    Args:
        kind: 'chat' (an rlvr server's wire: the action schema carries `x-rlvr-env`) or 'text' (a
            foreign server: action `{"message": str}`, observation `{"text": str}`).
        plans: plan name → steps (default: the module's plans for `kind`); an action naming no plan
            is answered by `honest`.
        observation_bytes: the cap the `huge-observation` plan exceeds, bytes.
        reward_range: the range an rlvr server declares (chat; default (0, 1)); for 'text', declared
            by the audit's env (adds `return-over-range`).
        prompt: the text of the reset observation.

    Raises:
        ConfigError: an unknown `kind`.
        MissingExtraError: OpenEnv is not installed.
    """
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import ConfigDict, Field

    if kind not in ("chat", "text"):
        raise ConfigError(f"kind must be 'chat' or 'text', got {kind!r}")
    script = plans or (_chat_plans(observation_bytes) if kind == "chat"
                       else _text_plans(observation_bytes, reward_range is not None))
    extra: dict[str, Any] = {ENV_ID_KEY: "audit/hostile-v1", MAX_TURNS_KEY: 8,
                             REWARD_RANGE_KEY: list(reward_range or (0.0, 1.0))}

    class HostileChatAction(Action):  # type: ignore[misc]
        model_config = ConfigDict(title="ChatAction", json_schema_extra=extra)
        content: str = ""
        tool_calls: list[dict[str, Any]] | None = None

    class HostileChatObservation(Observation):  # type: ignore[misc]
        messages: list[dict[str, Any]] = Field(default_factory=list)
        task_id: str = ""
        verdict: dict[str, Any] | None = None

    class HostileTextAction(Action):  # type: ignore[misc]
        message: str = ""

    class HostileTextObservation(Observation):  # type: ignore[misc]
        text: str = ""

    class HostileEnvironment(Environment):  # type: ignore[misc]
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State(episode_id="hostile", step_count=0)

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Any:
            self._state = State(episode_id=episode_id or "hostile", step_count=0)
            if kind == "chat":
                return HostileChatObservation(messages=[{"role": "user", "content": prompt}],
                                              task_id=str(kwargs.get("task_id") or ""), done=False)
            return HostileTextObservation(text=prompt, done=False)

        def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
            name = action.content if kind == "chat" else action.message
            steps = script.get(name.strip(), script["honest"])
            plan = steps[min(self._state.step_count, len(steps) - 1)]
            self._state.step_count += 1
            done, reward = bool(plan.get("done", False)), plan.get("reward")
            if kind == "chat":
                return HostileChatObservation(messages=plan.get("messages", []), done=done, reward=reward,
                                              verdict=plan.get("verdict") if done else None)
            return HostileTextObservation(text=plan.get("text", f"step {self._state.step_count}"), done=done,
                                          reward=reward)

        @property
        def state(self) -> State:
            return self._state

    action_cls, observation_cls = ((HostileChatAction, HostileChatObservation) if kind == "chat"
                                   else (HostileTextAction, HostileTextObservation))
    return create_fastapi_app(HostileEnvironment, action_cls, observation_cls, max_concurrent_envs=8)


@contextlib.contextmanager
def hostile_server(kind: str, **app_kwargs: Any) -> Iterator[str]:
    """Serve `hostile_app(kind, **app_kwargs)` under uvicorn on a free loopback port; yields its base URL.

    Raises:
        RuntimeError: uvicorn did not start within 20 s.
    """
    import socket

    import uvicorn

    app = hostile_app(kind, **app_kwargs)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, loop="asyncio",
                                           ws="websockets-sansio", log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, daemon=True, name="rlvr-hostile-server")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the hostile OpenEnv server (uvicorn) did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def play(env: RemoteOpenEnv, plan: str) -> Verdict:
    """One episode of `env` (against a hostile server) whose every action names `plan`; its final verdict."""
    env.reset_sync(env.tasks[0])
    for _ in range(env.spec.max_turns):
        result = env.step_sync(Message(role="assistant", content=plan))
        if result.verdict is not None:
            return result.verdict
    return Verdict.error(f"plan {plan!r}: no verdict within {env.spec.max_turns} turns")


def remote_probes(env: RemoteOpenEnv) -> list[tuple[Probe, Verdict]]:
    """Play every hostile plan of `env`'s wire against a hostile server, with `env`'s limits.

    Returns:
        (probe, verdict) per plan; the probe's family is `hostile-server`, `honest` is the control.

    Raises:
        ConfigError: `env` maps actions to a tool (the hostile server speaks the chat and text wires).
    """
    from rlvr.environments.openenv_remote import make_remote

    kind = env.mapping.kind
    if kind == "tool":
        raise ConfigError("the hostile-server audit speaks the chat (rlvr serve) and one-text-field wires; this "
                          "server's action is a tool")
    out: list[tuple[Probe, Verdict]] = []
    with hostile_server(kind, observation_bytes=env.max_observation_bytes,
                        reward_range=env.enforced_range) as url:
        audited = make_remote(url, size=1, timeout_s=env.timeout_s, success_threshold=env.success_threshold,
                              reward_range=env.enforced_range, max_observation_bytes=env.max_observation_bytes)
        try:
            plans = _chat_plans(env.max_observation_bytes) if kind == "chat" else \
                _text_plans(env.max_observation_bytes, env.enforced_range is not None)
            for name in plans:
                probe = Probe("hostile-server", name, name, control=name == "honest")
                out.append((probe, play(audited, name)))
        finally:
            audited.close()
    return out
