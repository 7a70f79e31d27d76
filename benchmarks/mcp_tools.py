"""MCP tool environments: per-call overhead against a Python `@tool`, and episodes/s with concurrent sandboxed servers.

Two tables:

1. **per call** -- the same function, `add(a, b)`, as a Python `@tool` in a `ToolEnv` and as a tool of
   an MCP stdio server (the SDK's `MCPServer`) in an `MCPToolEnv`, one tool step each (an assistant
   message with one native call, answered by one tool message: parsing, argument validation, the
   call, the answer); p50 and p99 over `--calls` steps, server start excluded.
2. **episodes/s** -- `--episodes` episodes with N concurrent episodes (N = `--concurrency`), each
   starting its own sandboxed server (bubblewrap where it works) for the task, making three calls and
   answering, scored by an inline verifier; the server start dominates.

The load average is printed with the tables: the numbers are only comparable on a machine as quiet.

Usage:
    python benchmarks/mcp_tools.py [--calls 300] [--episodes 16] [--concurrency 1 2 4 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from rich.console import Console
from rich.table import Table

from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.mcp import MCPToolEnv, StdioServer
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import tool
from rlvr.verifiers.testing import ConstantVerifier

TASK = Task(id="t", prompt=(Message(role="user", content="Add."),), reference="3")

SERVER = b'''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


server.run()
'''


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first term.
        b: second term.
    """
    return a + b


def mcp_env(max_turns: int) -> MCPToolEnv:
    server = StdioServer(command=("{python}", "server.py"), files=(("server.py", SERVER),), packages=("mcp",))
    return MCPToolEnv([TASK], ConstantVerifier(), server, max_turns=max_turns, hermes=False)


def python_env(max_turns: int) -> ToolEnv:
    return ToolEnv([TASK], ConstantVerifier(), EnvSpec(id="bench/python-tools-v1", max_turns=max_turns), [add])


async def step_times(env: ToolEnv, calls: int) -> list[float]:
    """Seconds of each of `calls` tool steps in one episode."""
    episode = env.episode_copy()
    await episode.reset(TASK)
    action = tool_call_message("add", {"a": 1, "b": 2})
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await episode.step(action)
        times.append(time.perf_counter() - start)
        assert result.messages[0].content == "3", result.messages[0].content
    await episode.step("3")
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def one_episode(env: MCPToolEnv) -> None:
    episode = env.episode_copy()
    await episode.reset(TASK)
    for _ in range(3):
        await episode.step(tool_call_message("add", {"a": 1, "b": 2}))
    result = await episode.step("3")
    assert result.verdict is not None and result.verdict.status == "correct", result.verdict


async def episodes_per_second(env: MCPToolEnv, episodes: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def gated() -> None:
        async with gate:
            await one_episode(env)

    start = time.perf_counter()
    await asyncio.gather(*(gated() for _ in range(episodes)))
    return episodes / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    console = Console()
    load = os.getloadavg()
    console.print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")

    mcp = mcp_env(args.calls + 2)
    try:
        table = Table(title=f"one tool step, {args.calls} steps (the same add(a, b))")
        for col in ("tool", "p50 µs", "p99 µs", "mean µs"):
            table.add_column(col, justify="left" if col == "tool" else "right")
        for name, env in (("Python @tool (ToolEnv)", python_env(args.calls + 2)),
                          (f"MCP stdio server, sandboxed ({mcp.spec.resources['transport']})", mcp)):
            times = asyncio.run(step_times(env, args.calls))
            table.add_row(name, f"{percentile(times, 0.5) * 1e6:,.0f}", f"{percentile(times, 0.99) * 1e6:,.0f}",
                          f"{statistics.mean(times) * 1e6:,.0f}")
        console.print(table)

        table = Table(title=f"episodes/s: {args.episodes} episodes (server start + 3 calls + answer), N at once")
        for col in ("N concurrent servers", "episodes / s", "s / episode"):
            table.add_column(col, justify="right")
        for n in args.concurrency:
            rate = asyncio.run(episodes_per_second(mcp, args.episodes, n))
            table.add_row(str(n), f"{rate:.2f}", f"{1 / rate:.2f}")
        console.print(table)
    finally:
        mcp.close()
    load = os.getloadavg()
    console.print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
