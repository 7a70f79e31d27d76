"""Run many episodes of an environment against a policy, concurrently (`rlvr eval`, TRL's `rollout_func`).

Each episode gets its own environment instance (from `env_factory`) and runs in the episode
driver (`rlvr.rollout.driver.EpisodeRun`: `reset`, then `policy.generate` and `env.step` until the
environment ends it), becoming one `Trajectory` with the messages, per-step rewards, the final
verdict and, when the policy returns token ids, token fields built by `rlvr.rollout.tokens` (the
sampled ids kept as-is, environment turns rendered as chat-template suffixes, `loss_mask` 1 only
on sampled tokens). `rollout_samples` returns each episode as the trainer's `TrainingSample`
instead (`EpisodeRun.training_sample`).

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
from typing import Any, TypeVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import Task, Trajectory
from rlvr.environments.base import Environment
from rlvr.rollout.driver import EpisodeRun, TokenBudget, TrainingSample
from rlvr.rollout.policy import Policy, aclose_policy
from rlvr.rollout.tokens import Layout

__all__ = ["clone_factory", "rollout", "rollout_samples", "rollout_sync", "token_batch"]

EnvFactory = Callable[[], Environment]
Result = TypeVar("Result")


def clone_factory(env: Environment) -> EnvFactory:
    """A factory of per-episode copies of `env` (`Environment.episode_copy`: shared tasks, verifier, spec)."""
    return env.episode_copy


async def rollout(
    env_factory: EnvFactory,
    policy: Policy,
    tasks: Iterable[Task],
    *,
    n: int = 1,
    concurrency: int = 64,
    layout: Layout | None = "auto",
    seed: int | None = 0,
    budget: TokenBudget | None = None,
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
        layout: token layout ('episode', 'turn', 'auto'; see `rlvr.rollout.tokens`), or None for
            no token fields. Token fields are only built when the policy has a tokenizer and
            returns sampled ids.
        seed: base seed; episode `sample` of a task resets with `seed + sample` (None: unseeded).
        budget: the trainer's token budget of each episode (`TokenBudget`; needs the policy's
            tokenizer), or None.
        skip: (task id, sample) pairs not to run (e.g. already written by a resumed run).
        on_trajectory: called with each trajectory as soon as its episode ends (completion order).

    Raises:
        ConfigError: `n` or `concurrency` < 1; a budget without the policy's tokenizer.
    """
    def finish(run: EpisodeRun, trajectory: Trajectory) -> Trajectory:
        if on_trajectory is not None:
            on_trajectory(trajectory)
        return trajectory

    return await _episodes(env_factory, policy, tasks, finish, n=n, concurrency=concurrency, layout=layout,
                           seed=seed, budget=budget, skip=skip)


async def rollout_samples(
    env_factory: EnvFactory,
    policy: Policy,
    tasks: Iterable[Task],
    *,
    n: int = 1,
    concurrency: int = 64,
    seed: int | None = 0,
    budget: TokenBudget | None = None,
) -> list[TrainingSample]:
    """`rollout` for a trainer: each episode (layout 'auto') as its `TrainingSample`, in job order.

    The sample is taken when the episode ends, before its environment instance is reused
    (`EpisodeRun.training_sample`: failed, verdict-less and misaligned episodes are masked).

    Raises:
        ConfigError: `n` or `concurrency` < 1; a budget without the policy's tokenizer.
    """
    def finish(run: EpisodeRun, trajectory: Trajectory) -> TrainingSample:
        return run.training_sample()

    return await _episodes(env_factory, policy, tasks, finish, n=n, concurrency=concurrency, layout="auto",
                           seed=seed, budget=budget, skip=())


async def _episodes(
    env_factory: EnvFactory,
    policy: Policy,
    tasks: Iterable[Task],
    finish: Callable[[EpisodeRun, Trajectory], Result],
    *,
    n: int,
    concurrency: int,
    layout: Layout | None,
    seed: int | None,
    budget: TokenBudget | None,
    skip: Iterable[tuple[str, int]],
) -> list[Result]:
    """The episodes of `rollout` and `rollout_samples`: `finish(run, trajectory)` of each, in job order."""
    if n < 1 or concurrency < 1:
        raise ConfigError(f"n and concurrency must be >= 1, got n={n}, concurrency={concurrency}")
    done = set(skip)
    jobs = [(task, k) for task in tasks for k in range(n) if (task.id, k) not in done]
    pool: list[Environment] = []
    gate = asyncio.Semaphore(concurrency)
    tokenizer = getattr(policy, "tokenizer", None)

    async def run(task: Task, k: int) -> Result:
        async with gate:
            env = pool.pop() if pool else env_factory()
            try:
                episode = EpisodeRun(env, task, tokenizer=tokenizer, layout=layout, sample=k, budget=budget)
                trajectory = await episode.play(policy, seed=None if seed is None else seed + k)
                return finish(episode, trajectory)
            finally:
                pool.append(env)

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
        if t.tokens is None:
            why = t.error or t.info.get("token_misaligned") or "the policy returned no token ids"
            raise ConfigError(f"trajectory {i} (task {t.task_id!r}) has no episode-layout tokens: {why}")
        out["prompt_ids"].append(t.tokens.prompt_ids)
        out["completion_ids"].append(t.tokens.completion_ids)
        out["logprobs"].append(t.tokens.logprobs if t.tokens.logprobs is not None
                               else [0.0] * len(t.tokens.completion_ids))
        out["env_mask"].append(t.tokens.loss_mask)
    return out
