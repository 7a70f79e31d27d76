"""Environment + rollout-driver overhead per step, without generation or verification.

A zero-latency scripted policy (returns a prebuilt message) and the inline ConstantVerifier isolate
what rlvr itself costs per step: `env.reset`/`env.step`, message bookkeeping, `Trajectory`
construction, asyncio scheduling under the concurrency semaphore. Goal (issue 3): < 1 ms per step.

Scenarios: a single-turn env (1 step per episode) and a multi-turn env (K steps per episode, each
non-final step returns a user observation), each with 1 and with 1,000 concurrent episodes.

Usage:
    python benchmarks/env_overhead.py [--episodes 2000] [--turns 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.base import Environment, as_message
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.rollout.batch import clone_factory, rollout
from rlvr.rollout.policy import Episode, Generation
from rlvr.verifiers.testing import ConstantVerifier


class InlineVerifier(ConstantVerifier):
    """ConstantVerifier whose `averify` scores on the event loop (no thread hop): verification excluded."""

    async def averify(self, response: str, reference: Any) -> Verdict:
        return self.verify(response, reference)


class CountdownEnv(Environment):
    """Ends after `turns` steps; every earlier step answers with one user message."""

    def __init__(self, tasks: Sequence[Task], turns: int, verifier: ConstantVerifier) -> None:
        super().__init__()
        self.tasks, self.verifier = tasks, verifier
        self.spec = EnvSpec(id="bench/countdown-v1", max_turns=turns)
        self.observation = Message(role="user", content="go on")

    async def step(self, action: Message | str) -> StepResult:
        assert self.task is not None
        message = as_message(action)
        self.messages.append(message)
        self.turn += 1
        if self.turn < self.spec.max_turns:
            self.messages.append(self.observation)
            return StepResult(messages=(self.observation,))
        verdict = await self.ascore(self.task, message.content)
        return StepResult(reward=verdict.reward or 0.0, terminated=True, verdict=verdict)


class InstantPolicy:
    """Zero-latency policy: the same prebuilt assistant message every turn."""

    name = "instant"
    tokenizer = None
    accepts_prompt_ids = False

    def __init__(self) -> None:
        self.generation = Generation(message=Message(role="assistant", content="\\boxed{42}"), finish_reason="stop")

    async def generate(self, messages: Sequence[Message], *, tools: Any = None, prompt_ids: Any = None,
                       episode: Episode | None = None) -> Generation:
        return self.generation


def _tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", prompt=(Message(role="user", content=f"task {i}"),), reference="42") for i in range(n)]


def _run(env: Environment, episodes: int, concurrency: int) -> tuple[float, int]:
    tasks = _tasks(episodes)
    start = time.perf_counter()
    out = asyncio.run(rollout(clone_factory(env), InstantPolicy(), tasks, concurrency=concurrency, layout=None))
    elapsed = time.perf_counter() - start
    assert all(t.error is None and t.verdict is not None and t.verdict.status == "correct" for t in out)
    return elapsed, sum(len(t.rewards) for t in out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = Table(title=f"rlvr env + driver overhead (zero-latency policy, median of {args.repeat})")
    for col in ("environment", "verifier call", "concurrency", "steps", "wall s", "µs / step", "episodes / s"):
        table.add_column(col, justify="right" if col not in ("environment", "verifier call") else "left")
    for verifier, how in ((InlineVerifier(), "on the loop"), (ConstantVerifier(), "averify (thread)")):
        single = SingleTurnEnv(_tasks(1), verifier, EnvSpec(id="bench/single-v1"))
        multi = CountdownEnv(_tasks(1), args.turns, verifier)
        _rows(table, args, how, (("single-turn", single), (f"multi-turn, {args.turns} steps", multi)))
    Console(width=140).print(table)
    print(f"episodes per run: {args.episodes}")


def _rows(table: Table, args: argparse.Namespace, how: str, envs: Sequence[tuple[str, Environment]]) -> None:
    for name, env in envs:
        for concurrency in (1, 1000):
            runs = [_run(env, args.episodes, concurrency) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            steps = runs[0][1]
            table.add_row(name, how, str(concurrency), str(steps), f"{wall:.3f}",
                          f"{wall / steps * 1e6:.0f}", f"{args.episodes / wall:,.0f}")


if __name__ == "__main__":
    main()
