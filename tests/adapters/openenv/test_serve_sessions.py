"""`rlvr serve` sessions: many at once, each its own episode, freed when idle, half-open or closed.

The failures of OpenEnv servers this guards against: one session per server (OpenEnv #194),
half-open WebSockets holding every slot until new episodes deadlock on CAPACITY_REACHED (PR #1000).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import threading
import time
from typing import Any, ClassVar

import pytest
from openenv.core.generic_client import GenericEnvClient

import rlvr
from openenv_serving import Serving, oracle_action, wait_for
from rlvr.core.types import EnvSpec, Message, StepResult, Task
from rlvr.environments.base import Environment
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.verifiers.testing import ConstantVerifier

pytestmark = pytest.mark.extras


def test_concurrent_sessions_never_share_episode_state(serve_env: Serving, math_env: Environment) -> None:
    tasks = list(math_env.tasks)

    async def play(url: str, k: int) -> tuple[str, float | None, str]:
        async with GenericEnvClient(base_url=url) as client:
            task = tasks[k % len(tasks)]
            reset = await client.reset(task_id=task.id)
            await asyncio.sleep(0.01 * (k % 3))  # interleave the sessions' steps
            answer = oracle_action(math_env, task) if k % 2 == 0 else {"content": "\\boxed{-1234567}"}
            result = await client.step(answer)
            return reset.observation["task_id"], result.reward, result.observation["task_id"]

    async def main(url: str) -> list[tuple[str, float | None, str]]:
        return list(await asyncio.gather(*(play(url, k) for k in range(12))))

    with serve_env(math_env, max_sessions=12) as (url, host):
        got = asyncio.run(main(url))
        wait_for(lambda: not host.sessions(), 5, "the sessions to close")
    for k, (reset_id, reward, step_id) in enumerate(got):
        assert reset_id == step_id == tasks[k % len(tasks)].id
        assert reward == (1.0 if k % 2 == 0 else 0.0)


def test_past_capacity_a_session_is_refused_then_admitted_when_a_slot_frees(serve_env: Serving,
                                                                           math_env: Environment) -> None:
    with serve_env(math_env, max_sessions=2) as (url, host):
        first, second = GenericEnvClient(base_url=url).sync(), GenericEnvClient(base_url=url).sync()
        first.reset(seed=1)
        second.reset(seed=2)
        third = GenericEnvClient(base_url=url).sync()
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
            third.reset(seed=3)
        assert time.monotonic() - started < 5  # a refusal, not a hang
        third.close()
        first.close()
        wait_for(lambda: len(host.sessions()) == 1, 5, "the closed session's slot")
        with GenericEnvClient(base_url=url).sync() as fourth:
            assert fourth.reset(task_id=math_env.tasks[0].id).observation["task_id"] == math_env.tasks[0].id
        second.close()


def test_a_malformed_action_is_an_error_to_that_client_and_the_session_goes_on(serve_env: Serving,
                                                                               math_env: Environment) -> None:
    task = math_env.tasks[0]
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=task.id)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"contnt": "typo"})
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"content": "x", "tool_calls": "not a list"})
        assert client.step(oracle_action(math_env, task)).reward == 1.0


class _Exploding(SingleTurnEnv):
    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        raise RuntimeError("the grader's database is gone")


def test_an_exception_in_the_env_step_reaches_the_client_and_the_server_goes_on(serve_env: Serving) -> None:
    task = Task(id="t0", prompt=(Message(role="user", content="hi"),), reference="x")
    env = _Exploding([task], ConstantVerifier(), EnvSpec(id="test/exploding-v1"))
    with serve_env(env) as (url, _):
        with GenericEnvClient(base_url=url).sync() as client:
            client.reset(task_id="t0")
            with pytest.raises(RuntimeError, match="the grader's database is gone"):
                client.step({"content": "x"})
            with pytest.raises(RuntimeError, match="the episode is over"):
                client.step({"content": "x"})  # its state is unknown: no second try on it
            assert client.reset(task_id="t0").observation["task_id"] == "t0"
        with GenericEnvClient(base_url=url).sync() as other:
            assert other.reset(task_id="t0").observation["messages"][0]["content"] == "hi"


@pytest.mark.slow
def test_the_idle_reaper_frees_a_silent_sessions_slot(serve_env: Serving, math_env: Environment) -> None:
    # OpenEnv's reaper checks every max(timeout / 4, 5) seconds
    with serve_env(math_env, max_sessions=1, idle_timeout_s=1.0) as (url, host):
        idle = GenericEnvClient(base_url=url).sync()
        idle.reset(seed=0)
        wait_for(lambda: not host.sessions(), 9, "the reaper")
        with pytest.raises(RuntimeError, match="session was closed"):
            idle.step({"content": "late"})
        idle.close()
        with GenericEnvClient(base_url=url).sync() as fresh:
            assert fresh.reset(seed=0).observation["messages"]


def _frame(payload: dict[str, Any]) -> bytes:
    """A masked client text frame (RFC 6455) carrying `payload` as JSON."""
    data = json.dumps(payload).encode()
    assert len(data) < 126
    mask = os.urandom(4)
    return bytes([0x81, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_a_half_open_socket_loses_its_slot_to_keepalive_pings(serve_env: Serving, math_env: Environment) -> None:
    with serve_env(math_env, max_sessions=1, ping_interval_s=0.3, ping_timeout_s=0.3) as (url, host):
        port = int(url.rsplit(":", 1)[1])
        raw = socket.create_connection(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        raw.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        assert raw.recv(4096).startswith(b"HTTP/1.1 101")
        raw.sendall(_frame({"type": "reset", "data": {"seed": 0}}))
        wait_for(lambda: len(host.sessions()) == 1, 5, "the raw client's episode")
        # from here the client reads nothing and answers no ping: a vanished peer
        wait_for(lambda: not host.sessions(), 5, "keepalive to drop the half-open session")
        with GenericEnvClient(base_url=url).sync() as fresh:
            assert fresh.reset(seed=1).observation["messages"]
        raw.close()


def test_closing_a_session_closes_its_sandbox_and_keeps_the_shared_verifier(serve_env: Serving) -> None:
    env = rlvr.make("terminal/tbench-v1", task_ids=["dedupe-emails"])
    try:
        with serve_env(env) as (url, host):
            client = GenericEnvClient(base_url=url).sync()
            client.reset(task_id="dedupe-emails")
            (served,) = host.sessions()
            assert served.episode is not None
            sandbox = served.episode._session.session  # type: ignore[attr-defined]
            assert sandbox.alive
            client.close()
            wait_for(lambda: not sandbox.alive and sandbox.closed, 10, "the session's sandbox to close")
            with GenericEnvClient(base_url=url).sync() as again:  # the shared env still serves
                first = again.reset(task_id="dedupe-emails")
                assert first.observation["task_id"] == "dedupe-emails"
    finally:
        env.close()


class _Recording(SingleTurnEnv):
    threads: ClassVar[list[str]] = []

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        asyncio.get_running_loop()  # an async step, awaited on a loop
        self.threads.append(threading.current_thread().name)
        return await super().step(action)


def test_steps_of_every_session_run_on_the_servers_event_loop(serve_env: Serving) -> None:
    task = Task(id="t0", prompt=(Message(role="user", content="hi"),), reference="x")
    env = _Recording([task], ConstantVerifier(), EnvSpec(id="test/recording-v1"))
    with serve_env(env) as (url, _):
        clients = [GenericEnvClient(base_url=url).sync() for _ in range(3)]
        for client in clients:
            client.reset(task_id="t0")
        for client in clients:
            assert client.step({"content": "x"}).reward == 1.0
            client.close()
    assert len(_Recording.threads) == 3 and len(set(_Recording.threads)) == 1  # one loop thread, not one each
