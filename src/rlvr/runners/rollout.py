"""The rollout driver: run many episodes of an environment against a policy, concurrently.

Each episode gets its own environment instance (from `env_factory`), runs `reset` then
alternates `policy.generate` and `env.step` until the environment ends it, and becomes one
`Trajectory` with the messages, per-step rewards, the final verdict and, when the policy returns
token ids, token fields built by `rlvr.adapters.tokens` (the sampled ids kept as-is, environment
turns rendered as chat-template suffixes, `loss_mask` 1 only on sampled tokens).

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

from rlvr.adapters.tokens import EpisodeTokens, Layout
from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, Task, Trajectory, Verdict
from rlvr.environments.base import Environment
from rlvr.runners.policies import Episode, Policy, aclose_policy

__all__ = ["clone_factory", "rollout", "rollout_episode", "rollout_sync", "token_batch"]

EnvFactory = Callable[[], Environment]


def clone_factory(env: Environment) -> EnvFactory:
    """A factory of per-episode copies of `env` (`Environment.episode_copy`: shared tasks, verifier, spec)."""
    return env.episode_copy


def _error_trajectory(task: Task, messages: list[Message], rewards: list[float], exc: BaseException,
                      info: dict[str, Any]) -> Trajectory:
    detail = f"{type(exc).__name__}: {exc}"
    return Trajectory(task_id=task.id, messages=messages, rewards=rewards,
                      verdict=Verdict.error(f"rollout failed: {detail}"), error=detail, info=info)


async def rollout_episode(
    env: Environment,
    task: Task,
    policy: Policy,
    *,
    sample: int = 0,
    seed: int | None = None,
    layout: Layout | None = "auto",
    max_steps: int | None = None,
) -> Trajectory:
    """Run one episode of `task` in `env` with `policy`; never raises for a failing episode.

    Args:
        env: an environment instance used by this episode only.
        task: the task to pose.
        policy: the policy.
        sample: index of this episode among the task's samples (recorded in `info["sample"]`).
        seed: passed to `env.reset`.
        layout: token layout ('episode', 'turn', 'auto'; see `rlvr.adapters.tokens`), or None for
            no token fields. Token fields are only built when the policy has a tokenizer and
            returns sampled ids.
        max_steps: safety limit on policy turns (default `2 * env.spec.max_turns + 2`); an
            environment that runs past it is an error.

    Returns:
        The trajectory; `error` is set (and the verdict is an error verdict) if the episode broke.
    """
    info: dict[str, Any] = {"sample": sample}
    messages: list[Message] = []
    rewards: list[float] = []
    try:
        prompt, _ = await env.reset(task, seed=seed)
        messages = list(prompt)
        tools = list(env.spec.tools) or None
        limit = max_steps if max_steps is not None else 2 * env.spec.max_turns + 2
        tokens = _tracker(policy, prompt, tools, layout)
        verdict, finish = await _run_turns(env, task, policy, messages, rewards, tokens, tools, sample, limit, layout)
        info["finish_reasons"] = finish
        info["turns"] = len(finish)
        fields: dict[str, Any] = {}
        if tokens is not None and tokens.samples and layout is not None:
            fields = tokens.trajectory_fields(layout)
            info.update(fields.pop("info"))
        return Trajectory(task_id=task.id, messages=messages, rewards=rewards, verdict=verdict, info=info, **fields)
    except Exception as exc:  # one broken episode must not stop the others
        return _error_trajectory(task, messages, rewards, exc, info)


def _tracker(policy: Policy, prompt: Sequence[Message], tools: list[dict[str, Any]] | None,
             layout: Layout | None) -> EpisodeTokens | None:
    tokenizer = getattr(policy, "tokenizer", None)
    if layout is None or tokenizer is None:
        return None
    return EpisodeTokens(tokenizer, prompt, tools=tools)


async def _run_turns(
    env: Environment, task: Task, policy: Policy, messages: list[Message], rewards: list[float],
    tokens: EpisodeTokens | None, tools: list[dict[str, Any]] | None, sample: int, limit: int,
    layout: Layout | None,
) -> tuple[Verdict | None, list[str | None]]:
    """Alternate policy and environment until the episode ends; return the verdict and finish reasons."""
    token_in = bool(getattr(policy, "accepts_prompt_ids", False)) and layout != "turn"
    finish: list[str | None] = []
    for turn in range(limit):
        hint = tokens.context_ids() if tokens is not None and token_in else None
        gen = await policy.generate(messages, tools=tools, prompt_ids=hint,
                                    episode=Episode(env=env, task=task, sample=sample, turn=turn))
        finish.append(gen.finish_reason)
        if tokens is not None and gen.completion_ids is not None:
            tokens.add_model_turn(gen.message, gen.completion_ids, gen.logprobs, prompt_ids=gen.prompt_ids)
        messages.append(gen.message)
        result = await env.step(gen.message)
        rewards.append(result.reward)
        if result.terminated or result.truncated:
            return result.verdict, finish
        messages.extend(result.messages)
        if tokens is not None and gen.completion_ids is not None:
            tokens.add_env_turn(result.messages)
    raise ConfigError(f"environment {env.spec.id!r} did not end the episode after {limit} policy turns "
                      f"(spec.max_turns={env.spec.max_turns}); it must terminate or truncate by max_turns")


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
