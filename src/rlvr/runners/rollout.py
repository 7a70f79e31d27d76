"""Run many episodes of an environment against a policy, concurrently (what `rlvr eval` runs).

Each episode gets its own environment instance (from `env_factory`) and runs in the episode
driver (`rlvr.rollout.driver`: `reset`, then `policy.generate` and `env.step` until the environment
ends it), becoming one `Trajectory` with the messages, per-step rewards, the final verdict and,
when the policy returns token ids, token fields built by `rlvr.rollout.tokens` (the sampled ids
kept as-is, environment turns rendered as chat-template suffixes, `loss_mask` 1 only on sampled
tokens).

Episodes run as asyncio tasks under a semaphore (`concurrency`). An episode that raises (policy,
environment or tokens) becomes a trajectory with `error` set and an error verdict (reward None,
so trainers mask it); the others go on.

Example:
    >>> env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=4)    # doctest: +SKIP
    >>> trajectories = rollout_sync(clone_factory(env), OraclePolicy(), env.tasks, n=2)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import Task, Trajectory
from rlvr.environments.base import Environment
from rlvr.rollout.driver import run_episode
from rlvr.rollout.policy import Policy, aclose_policy
from rlvr.rollout.tokens import Layout

__all__ = ["clone_factory", "rollout", "rollout_episode", "rollout_sync", "token_batch"]

EnvFactory = Callable[[], Environment]


def clone_factory(env: Environment) -> EnvFactory:
    """A factory of per-episode copies of `env` (`Environment.episode_copy`: shared tasks, verifier, spec)."""
    return env.episode_copy


rollout_episode = run_episode
"""One episode in the episode driver (`rlvr.rollout.driver.run_episode`), kept under its old name."""


async def rollout(
    env_factory: EnvFactory,
    policy: Policy,
    tasks: Iterable[Task],
    *,
    n: int = 1,
    concurrency: int = 64,
    layout: Layout | None = "auto",
    seed: int | None = 0,
    skip: Iterable[tuple[str, int]] = (),
    on_trajectory: Callable[[Trajectory], None] | None = None,
) -> list[Trajectory]:
    """Run `n` episodes per task, at most `concurrency` at a time; return the trajectories in job order.

    Args:
        env_factory: builds one environment instance per concurrent episode (instances are
            reused by later episodes after `reset`); see `clone_factory`.
        policy: the policy.
        tasks: the tasks.
        n: samples (episodes) per task.
        concurrency: most episodes in flight at once.
        layout: token layout, or None for no token fields (see `rollout_episode`).
        seed: base seed; episode `sample` of a task resets with `seed + sample` (None: unseeded).
        skip: (task id, sample) pairs not to run (e.g. already written by a resumed run).
        on_trajectory: called with each trajectory as soon as its episode ends (completion order).

    Raises:
        ConfigError: `n` or `concurrency` < 1.
    """
    if n < 1 or concurrency < 1:
        raise ConfigError(f"n and concurrency must be >= 1, got n={n}, concurrency={concurrency}")
    done = set(skip)
    jobs = [(task, k) for task in tasks for k in range(n) if (task.id, k) not in done]
    pool: list[Environment] = []
    gate = asyncio.Semaphore(concurrency)

    async def run(task: Task, k: int) -> Trajectory:
        async with gate:
            env = pool.pop() if pool else env_factory()
            try:
                traj = await rollout_episode(env, task, policy, sample=k, layout=layout,
                                             seed=None if seed is None else seed + k)
            finally:
                pool.append(env)
        if on_trajectory is not None:
            on_trajectory(traj)
        return traj

    try:
        return list(await asyncio.gather(*(run(task, k) for task, k in jobs)))
    finally:
        await aclose_policy(policy)


def rollout_sync(env_factory: EnvFactory, policy: Policy, tasks: Iterable[Task], **kwargs: Any) -> list[Trajectory]:
    """Blocking `rollout` (not for use inside a running event loop)."""
    return asyncio.run(rollout(env_factory, policy, tasks, **kwargs))


def token_batch(trajectories: Sequence[Trajectory]) -> dict[str, list[Any]]:
    """Episode-layout token fields of many trajectories, as TRL's `rollout_func` returns them.

    Returns:
        `{"prompt_ids", "completion_ids", "logprobs", "env_mask"}`, each a list with one entry per
        trajectory; `env_mask` is the loss mask (1 = model token, 0 = environment token), the
        name TRL's GRPOTrainer reads from a rollout function's extra fields.

    Raises:
        ConfigError: a trajectory has no episode-layout token fields (it failed, or its policy
            returned no ids, or it fell back to per-turn samples); the message names it.
    """
    out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": []}
    for i, t in enumerate(trajectories):
        if t.prompt_ids is None or t.completion_ids is None or t.loss_mask is None:
            why = t.error or t.info.get("token_misaligned") or "the policy returned no token ids"
            raise ConfigError(f"trajectory {i} (task {t.task_id!r}) has no episode-layout tokens: {why}")
        out["prompt_ids"].append(t.prompt_ids)
        out["completion_ids"].append(t.completion_ids)
        out["logprobs"].append(t.logprobs if t.logprobs is not None else [0.0] * len(t.completion_ids))
        out["env_mask"].append(t.loss_mask)
    return out
