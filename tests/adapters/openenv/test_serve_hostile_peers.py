"""`rlvr serve` against hostile peers: every route within --max-sessions, no 500s, one owner per episode.

Real server on loopback, real HTTP (httpx) and WebSocket (websockets, OpenEnv's GenericEnvClient) clients.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import httpx
import pytest
from openenv.core.generic_client import GenericEnvClient
from websockets.sync.client import connect

from openenv_serving import Serving, oracle_action, wait_for
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.base import Environment
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.verifiers.testing import ConstantVerifier

pytestmark = pytest.mark.extras


class _SlowReset(SingleTurnEnv):
    """Counts the resets running at once (each takes 0.3 s: a sandbox starting, say)."""

    running: ClassVar[int] = 0
    most: ClassVar[int] = 0

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        type(self).running += 1
        type(self).most = max(type(self).most, type(self).running)
        try:
            await asyncio.sleep(0.3)
            return await super().reset(task, seed=seed)
        finally:
            type(self).running -= 1


def _slow_env() -> Environment:
    task = Task(id="t0", prompt=(Message(role="user", content="hi"),), reference="x")
    return _SlowReset([task], ConstantVerifier(), EnvSpec(id="test/slow-reset-v1"))


def _rpc(url: str, method: str, **params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
    answer: dict[str, Any] = httpx.post(f"{url}/mcp", json=body, timeout=10).json()
    return answer


def _ws(url: str, session_id: str | None = None) -> Any:
    query = f"?session_id={session_id}" if session_id else ""
    return connect(url.replace("http://", "ws://") + "/ws" + query, open_timeout=10)


def _send(sock: Any, payload: dict[str, Any]) -> dict[str, Any]:
    sock.send(json.dumps(payload))
    answer: dict[str, Any] = json.loads(sock.recv(timeout=10))
    return answer


def test_stateless_resets_share_the_session_limit(serve_env: Serving) -> None:
    env = _slow_env()
    _SlowReset.most = 0

    async def burst(url: str, n: int) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=30) as client:
            return list(await asyncio.gather(*(client.post(f"{url}/reset", json={"task_id": "t0"}) for _ in range(n))))

    with serve_env(env, max_sessions=1) as (url, host):
        answers = asyncio.run(burst(url, 16))
        codes = sorted(r.status_code for r in answers)
        assert _SlowReset.most == 1  # never two episodes started at once with one slot
        assert 200 in codes and set(codes) <= {200, 503}, codes
        refused = next(r for r in answers if r.status_code == 503).json()["detail"]
        assert refused["code"] == "CAPACITY_REACHED" and refused["max_sessions"] == 1
        assert next(r for r in answers if r.status_code == 200).json()["observation"]["task_id"] == "t0"
        with GenericEnvClient(base_url=url).sync() as holder:  # the slot came back after the burst
            holder.reset(task_id="t0")
            assert httpx.post(f"{url}/reset", json={}, timeout=10).status_code == 503  # a socket holds it now
        wait_for(lambda: not host.sessions(), 5, "the socket's session to close")


def test_http_step_and_bad_reset_answer_openenvs_error_shape_not_a_500(serve_env: Serving,
                                                                      math_env: Environment) -> None:
    with serve_env(math_env) as (url, _):
        step = httpx.post(f"{url}/step", json={"action": {"content": "\\boxed{4}"}}, timeout=10)
        assert step.status_code == 400 and "/ws" in step.json()["detail"]
        bad_action = httpx.post(f"{url}/step", json={"action": {"content": "x", "tool_calls": "no"}}, timeout=10)
        assert bad_action.status_code == 422 and isinstance(bad_action.json()["detail"], list)
        unknown = httpx.post(f"{url}/reset", json={"task_id": "no-such-task"}, timeout=10)
        assert unknown.status_code == 400 and "no-such-task" in unknown.json()["detail"]
        extra = httpx.post(f"{url}/reset", json={"temperature": 3}, timeout=10)
        assert extra.status_code == 400 and "temperature" in extra.json()["detail"]
        assert httpx.post(f"{url}/reset", json={"task_id": math_env.tasks[0].id}, timeout=10).status_code == 200


def test_http_mcp_sessions_never_keep_a_websocket_client_out(serve_env: Serving, math_env: Environment) -> None:
    task = math_env.tasks[0]
    with serve_env(math_env, max_sessions=2) as (url, _):
        created = [_rpc(url, "openenv/session/create") for _ in range(10)]  # nobody ever connects to these
        assert all("session_id" in c["result"] for c in created)
        clients = [GenericEnvClient(base_url=url).sync() for _ in range(2)]
        for client in clients:  # both slots were held by detached sessions: each gives way
            client.reset(task_id=task.id)
            assert client.step(oracle_action(math_env, task)).reward == 1.0
        full = _rpc(url, "openenv/session/create")  # sockets hold every slot: refused, not evicted
        assert full["error"]["data"] == {"active_sessions": 2, "max_sessions": 2}
        stale = created[-1]["result"]["session_id"]
        assert "Unknown session_id" in _rpc(url, "tools/list", session_id=stale)["error"]["message"]
        for client in clients:
            client.close()


def test_a_session_id_never_lets_a_second_socket_step_the_episode(serve_env: Serving, math_env: Environment) -> None:
    task = math_env.tasks[1]
    with serve_env(math_env, max_sessions=4) as (url, _):
        sid = _rpc(url, "openenv/session/create")["result"]["session_id"]
        with _ws(url, sid) as owner:
            assert _send(owner, {"type": "reset", "data": {"task_id": task.id}})["type"] == "observation"
            with _ws(url, sid) as thief:  # while the owner is attached
                refused = json.loads(thief.recv(timeout=10))
                assert refused["type"] == "error" and "attached" in refused["data"]["message"]
        with _ws(url, sid) as thief:  # after the owner left: the session is gone with it
            refused = json.loads(thief.recv(timeout=10))
            assert refused["type"] == "error" and "Unknown session_id" in refused["data"]["message"]

        with _ws(url) as owner:  # a socket's own session: its id (which it can learn) opens nothing
            _send(owner, {"type": "reset", "data": {"task_id": task.id}})
            mine = _send(owner, {"type": "mcp", "data": {"jsonrpc": "2.0", "method": "openenv/session/create",
                                                         "params": {}, "id": 7}})
            own_id = mine["data"]["result"]["session_id"]
            with _ws(url, own_id) as thief:
                assert "Unknown session_id" in json.loads(thief.recv(timeout=10))["data"]["message"]
            for method, params in (("tools/call", {"name": "submit_answer", "arguments": {"answer": "1"}}),
                                   ("openenv/session/close", {})):
                answer = _rpc(url, method, session_id=own_id, **params)
                assert "Unknown session_id" in answer["error"]["message"], (method, answer)
            played = _send(owner, {"type": "step", "data": oracle_action(math_env, task)})
            assert played["data"]["reward"] == 1.0  # the owner's episode went on untouched
