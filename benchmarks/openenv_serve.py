"""`rlvr serve` overhead: episodes/s and ms per step through OpenEnv's server vs the same env in-process.

The served side is OpenEnv's server app of `rlvr serve` under uvicorn on loopback (`--server
process`, the default: a `rlvr serve` process; `--server thread`: a thread of this process, sharing
its GIL with the client). Two clients play it, C sessions at once: OpenEnv's async
`GenericEnvClient` (no rlvr code on its side; each session plays its share of the episodes back to
back: reset by task id, then the env's scripted oracle actions), and rlvr's own `openenv/remote-v1`
environment driven by the rlvr rollout driver (`rollout`, concurrency C; what a trainer's agent loop
does). The in-process side plays the same episodes with the same oracle through the rollout driver
on the env itself. Every episode must score correct on every side.

`ms / step` is wall time over steps (the inverse of step throughput, all sessions together);
overhead is served minus in-process; `step p50 ms` is the latency one served session sees per
step. Envs: a math env (reasoning-gym arithmetic, verification on the loop) and a code env
(HumanEval, each verification a sandboxed unit-test run).

Usage:
    python benchmarks/openenv_serve.py [--sessions 1,16,64] [--math-episodes 256] [--code-episodes 64]
        [--server process|thread]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
from openenv.core.generic_client import GenericEnvClient
from rich.console import Console
from rich.table import Table

import rlvr
from rlvr.core.types import Message
from rlvr.environments.base import Environment
from rlvr.rollout.batch import clone_factory, rollout
from rlvr.rollout.policies import OraclePolicy
from rlvr.rollout.policy import Episode
from rlvr.runners.args import parse_env_args

ENVS = {
    "math": ("math/reasoning-gym-v1", ["task=\"basic_arithmetic\"", "size=256", "seed=0"]),
    "code": ("code/humaneval-v1", ["limit=64"]),
}


def _wire(message: Any) -> dict[str, Any]:
    return {k: v for k, v in message.to_openai().items() if k in ("content", "tool_calls")}


def _in_process(env: Environment, episodes: int, sessions: int) -> tuple[float, int]:
    tasks = [env.tasks[i % len(env.tasks)] for i in range(episodes)]
    start = time.perf_counter()
    out = asyncio.run(rollout(clone_factory(env), OraclePolicy(), tasks, concurrency=sessions, layout=None))
    wall = time.perf_counter() - start
    bad = [t.task_id for t in out if t.verdict is None or t.verdict.status != "correct"]
    assert not bad, f"in-process oracle episodes not correct: {bad[:5]}"
    return wall, sum(len(t.rewards) for t in out)


async def _served(url: str, env: Environment, episodes: int, sessions: int) -> tuple[float, int, list[float]]:
    scripts = [(t.id, [_wire(m) for m in env.reference_actions(t) or ()])
               for t in (env.tasks[i % len(env.tasks)] for i in range(episodes))]
    latencies: list[float] = []

    async def session(k: int) -> int:
        steps = 0
        async with GenericEnvClient(base_url=url, message_timeout_s=600) as client:
            for task_id, actions in scripts[k::sessions]:
                await client.reset(task_id=task_id)
                for action in actions:
                    t0 = time.perf_counter()
                    result = await client.step(action)
                    latencies.append(time.perf_counter() - t0)
                    steps += 1
                assert result.done and result.observation["verdict"]["status"] == "correct", result.observation
        return steps

    start = time.perf_counter()
    steps = sum(await asyncio.gather(*(session(k) for k in range(sessions))))
    return time.perf_counter() - start, steps, latencies


class _ServedOracle(OraclePolicy):
    """The in-process env's reference actions for the remote env's task of the same id."""

    def __init__(self, local: Environment) -> None:
        super().__init__()
        self.local = local
        self.by_id = {t.id: t for t in local.tasks}

    def actions(self, episode: Episode) -> Sequence[Message | str | dict[str, Any]]:
        return self.local.reference_actions(self.by_id[episode.task.id]) or ()


def _remote(url: str, env: Environment, episodes: int, sessions: int) -> tuple[float, int]:
    remote = rlvr.make("openenv/remote-v1", base_url=url)
    try:
        by_id = {t.id: t for t in remote.tasks}
        tasks = [by_id[env.tasks[i % len(env.tasks)].id] for i in range(episodes)]
        start = time.perf_counter()
        out = asyncio.run(rollout(clone_factory(remote), _ServedOracle(env), tasks, concurrency=sessions,
                                  layout=None))
        wall = time.perf_counter() - start
    finally:
        remote.close()
    bad = [(t.task_id, t.error) for t in out if t.verdict is None or t.verdict.status != "correct"]
    assert not bad, f"openenv/remote-v1 oracle episodes not correct: {bad[:5]}"
    return wall, sum(len(t.rewards) for t in out)


def _start_server(env_id: str, env_args: Sequence[str], port: int, max_sessions: int) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "rlvr.runners.cli", "serve", env_id, "--port", str(port), "--max-sessions",
           str(max_sessions), "--log-level", "warning"]
    for arg in env_args:
        cmd += ["-a", arg]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"rlvr serve exited: {proc.communicate()[1]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("rlvr serve did not come up")
        time.sleep(0.3)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode == 0, f"rlvr serve exited {proc.returncode} on SIGTERM"


class _ThreadServer:
    """The `rlvr serve` app under uvicorn in a thread of this process, serving `env` itself."""

    def __init__(self, env: Environment, port: int, max_sessions: int) -> None:
        import uvicorn

        from rlvr.adapters.openenv.serve import uvicorn_config
        from rlvr.adapters.openenv.server import create_served_app

        app = create_served_app(env, max_sessions=max_sessions)
        self.server = uvicorn.Server(uvicorn_config(app, port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,16,64")
    parser.add_argument("--math-episodes", type=int, default=256)
    parser.add_argument("--code-episodes", type=int, default=64)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    args = parser.parse_args()
    levels = [int(x) for x in args.sessions.split(",")]
    table = Table(title="rlvr serve (OpenEnv server; clients: GenericEnvClient, openenv/remote-v1) vs in-process")
    for col in ("env", "sessions", "episodes", "steps", "in-process ep/s", "served ep/s", "remote-v1 ep/s",
                "in-process ms/step", "served ms/step", "overhead ms/step", "remote-v1 ms/step",
                "served step p50 ms"):
        table.add_column(col, justify="left" if col == "env" else "right")
    for name, (env_id, env_args) in ENVS.items():
        episodes = args.math_episodes if name == "math" else args.code_episodes
        env = rlvr.make(env_id, **parse_env_args(env_args))
        proc = _start_server(env_id, env_args, args.port, max(levels)) if args.server == "process" else None
        thread = _ThreadServer(env, args.port, max(levels)) if proc is None else None
        try:
            _in_process(env, 4, 1)  # warm-up (sandbox workers, imports), not measured
            asyncio.run(_served(f"http://127.0.0.1:{args.port}", env, 4, 1))
            for sessions in levels:
                n = max(episodes, sessions)
                wall_in, steps = _in_process(env, n, sessions)
                wall_srv, steps_srv, lat = asyncio.run(_served(f"http://127.0.0.1:{args.port}", env, n, sessions))
                wall_rem, steps_rem = _remote(f"http://127.0.0.1:{args.port}", env, n, sessions)
                assert steps == steps_srv == steps_rem
                ms_in, ms_srv, ms_rem = (w / steps * 1e3 for w in (wall_in, wall_srv, wall_rem))
                table.add_row(env_id, str(sessions), str(n), str(steps), f"{n / wall_in:,.1f}", f"{n / wall_srv:,.1f}",
                              f"{n / wall_rem:,.1f}", f"{ms_in:.2f}", f"{ms_srv:.2f}", f"{ms_srv - ms_in:+.2f}",
                              f"{ms_rem:.2f}", f"{statistics.median(lat) * 1e3:.1f}")
        finally:
            if proc is not None:
                _stop(proc)
            if thread is not None:
                thread.stop()
            env.close()
    Console(width=160).print(table)
    print(f"machine: {os.cpu_count()} CPUs; server: {args.server}")


if __name__ == "__main__":
    main()
