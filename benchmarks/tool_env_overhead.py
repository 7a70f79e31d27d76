"""ToolEnv overhead per step: parsing, argument validation, tool dispatch under its timeout, answers.

Scenarios (each a tool step: an assistant message with one call, answered by one tool message):

- `async tool`: an async no-op tool (`asyncio.wait_for` around the coroutine);
- `sync tool`: a sync no-op tool (a daemon thread per call, so a hung tool cannot block the loop);
- `calculator`: the sympy calculator on '(48 / 2) * 1.5 + 2**10' (includes the arithmetic);
- `hermes text call`: the same async tool called through a `<tool_call>` text tag;
- `final answer`: reset + a final answer scored by an inline constant verifier (one thread hop).

Usage:
    python benchmarks/tool_env_overhead.py [--steps 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from rich.console import Console
from rich.table import Table

from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.actions import TextTag
from rlvr.environments.calculator import calculator_tool
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import tool
from rlvr.verifiers.testing import ConstantVerifier

TASK = Task(id="t", prompt=(Message(role="user", content="q"),), reference="1")


@tool
def sync_echo(x: int) -> int:
    """Return x."""
    return x


@tool
async def async_echo(x: int) -> int:
    """Return x."""
    return x


def _env(max_turns: int) -> ToolEnv:
    return ToolEnv([TASK], ConstantVerifier(), EnvSpec(id="bench/tools-v1", max_turns=max_turns),
                   [sync_echo, async_echo, calculator_tool()], text_tags=[TextTag.hermes()])


async def _tool_steps(action: Message | str, steps: int) -> float:
    env = _env(steps + 1)
    await env.reset(TASK)
    start = time.perf_counter()
    for _ in range(steps):
        await env.step(action)
    return (time.perf_counter() - start) / steps


async def _final_steps(steps: int) -> float:
    env = _env(4)
    start = time.perf_counter()
    for _ in range(steps):
        await env.reset(TASK)
        await env.step("done")
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scenarios = {
        "async tool": lambda: _tool_steps(tool_call_message("async_echo", {"x": 1}), args.steps),
        "sync tool": lambda: _tool_steps(tool_call_message("sync_echo", {"x": 1}), args.steps),
        "calculator": lambda: _tool_steps(tool_call_message("calculator", {"expression": "(48 / 2) * 1.5 + 2**10"}),
                                          args.steps),
        "hermes text call": lambda: _tool_steps('<tool_call>{"name": "async_echo", "arguments": {"x": 1}}</tool_call>',
                                                args.steps),
        "final answer": lambda: _final_steps(args.steps),
    }
    table = Table(title=f"ToolEnv overhead per step ({args.steps} steps, median of {args.repeat})")
    for col in ("scenario", "µs / step", "steps / s"):
        table.add_column(col, justify="right" if col != "scenario" else "left")
    for name, run in scenarios.items():
        median = statistics.median(asyncio.run(run()) for _ in range(args.repeat))
        table.add_row(name, f"{median * 1e6:.0f}", f"{1 / median:,.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
