r"""Conformance check of an environment, in the spirit of Gymnasium's `utils/env_checker.py`.

`check(env)` runs, on `n` tasks spread over the dataset:

- `reference_correct`: the verifier's reference response (`verifier.reference_response`) is correct;
- `deterministic`: verifying the same response twice gives the same status and reward;
- `junk_rejected`: junk responses ('', 'I do not know.', `\boxed{}`) are not correct;
- `reward_in_range`: every reward lies within `spec.reward_range` (or is None for an error);
- `time_budget`: each verification takes at most `time_budget_s` seconds (after a warm-up call), or
  the environment's own `spec.resources["time_budget_s"]` when that is larger (a terminal task's
  verification replays its solution and runs its tests: it may take the task's time budget);

and once: `reset_deterministic` (the same seed poses the same task) and `episode_protocol`
(reset → step with the reference response → terminated, with a Verdict and a float reward).
Environments that say where their tasks run (`placement_summary()`, the terminal ones) get an
informational `placement` result. Multi-turn environments (`spec.max_turns > 1`) also get `oracle_episode` (replaying
`env.reference_actions(task)` through a real episode ends it with a correct verdict) and
`noop_episode` (empty assistant messages until the episode ends never score correct).
Environments scored by their episode return (`rlvr.environments.external.ReturnVerifier`: gymnasium,
skyrl-gym, remote OpenEnv servers) cannot score a lone response: the per-response checks are replaced
by one informational `response_scoring` result, `episode_protocol` plays the reference actions (or
empty messages when there are none) to the end, and they always get `oracle_episode`/`noop_episode`.

Every episode is played in the episode driver (`rlvr.rollout.driver.EpisodeRun`: `reset`, `act`,
`play`), so the check holds an environment to the same step, end and error rules as every trainer
path. It lives in the episode layer for that reason (environments sit below it); its public name
is `rlvr.check`.

`rlvr check --adversarial` (the hack-resistance audit: wrong responses that must not score
correct) is `rlvr.environments.audit`.

Example:
    >>> report = check("math/reasoning-gym-v1", n=4)  # doctest: +SKIP
    >>> report.passed
    True
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.core.types import Message, Task, Trajectory, Verdict
from rlvr.environments.base import Environment, as_message
from rlvr.environments.external import ReturnVerifier
from rlvr.environments.loaders import spread_tasks
from rlvr.rollout.driver import EpisodeRun
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import ChatTokenizer

__all__ = ["check"]

JUNK_RESPONSES: tuple[str, ...] = ("", "I do not know.", "\\boxed{}")
"""Responses that must never verify as correct."""


class CheckResult(BaseModel):
    """Outcome of one named check."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Check name, e.g. 'reference_correct'.")
    passed: bool = Field(description="True when every item passed.")
    detail: str = Field(default="", description="What failed (count and first items), or a summary when passed.")
    items: int = Field(default=0, ge=0, description="How many items this check looked at.")
    failed: int = Field(default=0, ge=0, description="How many items failed.")
    failed_items: list[str] = Field(
        default_factory=list, description="The first failing items (at most 5), one message each."
    )


class CheckReport(BaseModel):
    """All check results for one environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    env_id: str = Field(description="The checked environment's spec id.")
    n: int = Field(ge=0, description="Number of tasks checked.")
    seed: int = Field(description="Seed used for reset checks.")
    elapsed_s: float = Field(ge=0, description="Wall-clock time of the whole check, seconds.")
    results: list[CheckResult] = Field(description="One result per check, in run order.")

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> list[CheckResult]:
        """The checks that failed."""
        return [r for r in self.results if not r.passed]


MAX_SHOWN = 5
"""Failing items kept per check (`CheckResult.failed_items`); the rest are only counted."""


class _Tally:
    """Collects per-item failures of one check (keeps the first `MAX_SHOWN` for the message)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items = 0
        self.errors: list[str] = []

    def record(self, ok: bool, what: str) -> None:
        self.items += 1
        if not ok:
            self.errors.append(what)

    def result(self, summary: str = "") -> CheckResult:
        shown = self.errors[:MAX_SHOWN]
        more = len(self.errors) - len(shown)
        detail = f"{len(self.errors)} of {self.items} failed: " + "; ".join(shown)
        detail += f" (+{more} more)" if more else ""
        return CheckResult(name=self.name, passed=not self.errors, detail=detail if self.errors else summary,
                           items=self.items, failed=len(self.errors), failed_items=shown)


def _timed(fn: Callable[[Task, str], Verdict], task: Task, response: str) -> tuple[Verdict, float]:
    start = time.monotonic()
    verdict = fn(task, response)
    return verdict, time.monotonic() - start


def _in_range(verdict: Verdict, lo: float, hi: float) -> bool:
    return verdict.reward is None or lo - 1e-9 <= verdict.reward <= hi + 1e-9


def _check_tasks(env: Environment, tasks: list[Task], time_budget_s: float) -> list[CheckResult]:
    names = ("reference_correct", "deterministic", "junk_rejected", "reward_in_range", "time_budget")
    tally = {name: _Tally(name) for name in names}
    lo, hi = env.spec.reward_range
    worst = 0.0
    for task in tasks:
        response = env.verifier.reference_response(task.reference)
        first, t1 = _timed(env.score, task, response)
        second, t2 = _timed(env.score, task, response)
        tally["reference_correct"].record(first.is_correct, f"{task.id}: {first.status} ({first.detail[:120]})")
        tally["deterministic"].record((first.status, first.reward) == (second.status, second.reward),
                                      f"{task.id}: {first.status}/{first.reward} then {second.status}/{second.reward}")
        verdicts = [first, second]
        for junk in JUNK_RESPONSES:
            bad, t3 = _timed(env.score, task, junk)
            tally["junk_rejected"].record(not bad.is_correct, f"{task.id}: junk {junk!r} scored correct")
            verdicts.append(bad)
            t2 = max(t2, t3)
        for v in verdicts:
            tally["reward_in_range"].record(_in_range(v, lo, hi), f"{task.id}: reward {v.reward} outside {(lo, hi)}")
        slowest = max(t1, t2)
        worst = max(worst, slowest)
        tally["time_budget"].record(slowest <= time_budget_s, f"{task.id}: {slowest:.2f} s > {time_budget_s:g} s")
    return [tally[n].result(f"slowest {worst:.3f} s" if n == "time_budget" else f"{tally[n].items} ok")
            for n in names]


def _guarded(name: str, fn: Callable[[Environment, int], CheckResult], env: Environment, seed: int) -> CheckResult:
    """`fn(env, seed)`, or a failed `name` result naming the error when the episode itself cannot run."""
    try:
        return fn(env, seed)
    except RlvrError as exc:
        return CheckResult(name=name, passed=False, detail=f"{type(exc).__name__}: {exc}"[:600], items=1, failed=1)


def _check_reset(env: Environment, seed: int) -> CheckResult:
    first, info1 = asyncio.run(_reset(env, seed))
    second, info2 = asyncio.run(_reset(env, seed))
    same = first == second and info1.get("task_id") == info2.get("task_id")
    detail = "" if same else f"seed {seed} gave tasks {info1.get('task_id')!r} and {info2.get('task_id')!r}"
    return CheckResult(name="reset_deterministic", passed=same, detail=detail or f"task {info1.get('task_id')}",
                       items=2)


async def _reset(env: Environment, seed: int) -> tuple[list[Message], dict[str, Any]]:
    """Reset an episode whose task the environment draws with `seed`: (prompt, the env's reset info)."""
    run = EpisodeRun(env, None, layout=None)
    prompt = await run.reset(seed)
    return prompt, run.reset_info


def _check_episode(env: Environment, seed: int) -> CheckResult:
    problems = asyncio.run(_episode_problems(env, seed))
    return CheckResult(name="episode_protocol", passed=not problems, detail="; ".join(problems) or "ok", items=1,
                       failed=len(problems), failed_items=problems[:MAX_SHOWN])


async def _episode_problems(env: Environment, seed: int) -> list[str]:
    """What breaks the episode protocol: reset with `seed`, then step with the reference response.

    An environment scored by its episode return plays its reference actions (or empty messages when
    it has none) to the end instead.
    """
    run = EpisodeRun(env, None, layout=None)
    messages = await run.reset(seed)
    problems = []
    if not messages:
        problems.append("reset returned no messages")
    if run.task is None:
        return ["reset did not set env.task"]
    if isinstance(env.verifier, ReturnVerifier):  # scored by the episode: play it to its end
        task = run.task
        played = await _play(env, task, None if env.reference_actions(task) else [""])
        if played.error is not None:
            problems.append(f"the episode failed: {played.error}")
        ended, verdict = played.error is None, played.verdict
    else:
        result = await run.act(as_message(env.verifier.reference_response(run.task.reference)))
        ended, verdict = result.terminated or result.truncated, result.verdict
    if not ended:
        problems.append("step with a final answer did not end the episode")
    if verdict is None:
        problems.append("the final StepResult has no verdict")
    if "task_id" not in run.reset_info:
        problems.append("reset info lacks 'task_id'")
    return problems


class _Replay:
    """The check's scripted policy: `actions` in turn, the last one repeated until the episode ends.

    With `actions` None, the environment's reference actions (`env.reference_actions(task)`), asked
    at the first turn, after the reset (as the oracle policy asks): a reference may depend on the
    episode's own state.
    """

    name = "check-replay"
    tokenizer: ChatTokenizer | None = None
    accepts_prompt_ids = False

    def __init__(self, actions: Sequence[str | Message] | None) -> None:
        self.actions = list(actions) if actions is not None else None

    async def generate(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       prompt_ids: Sequence[int] | None = None, episode: Episode | None = None) -> Generation:
        """The action of `episode.turn` (the last one past the end)."""
        if episode is None:
            raise ConfigError("the check's replay policy needs the episode (Episode(env, task, ...))")
        if self.actions is None:
            self.actions = list(episode.env.reference_actions(episode.task) or [])
        if not self.actions:
            raise ConfigError(f"environment {episode.env.spec.id!r} has no reference actions for task "
                              f"{episode.task.id!r} after reset")
        return Generation(message=as_message(self.actions[min(episode.turn, len(self.actions) - 1)]),
                          finish_reason="stop")


async def _play(env: Environment, task: Task, actions: Sequence[str | Message] | None) -> Trajectory:
    """One episode of `task` replaying `actions` (`_Replay`) in the driver, within `spec.max_turns` turns.

    An episode that raises, or that the environment does not end within `spec.max_turns` turns,
    is an error trajectory (`error` set).
    """
    run = EpisodeRun(env, task, layout=None, max_steps=env.spec.max_turns)
    return await run.play(_Replay(actions))


def _check_policies(env: Environment, tasks: list[Task]) -> list[CheckResult]:
    """`oracle_episode` and `noop_episode` over `tasks` (multi-turn environments)."""
    oracle, noop = _Tally("oracle_episode"), _Tally("noop_episode")
    for task in tasks:
        try:
            has_oracle = bool(env.reference_actions(task))
        except RlvrError as exc:  # the task's reference cannot even be built: a failure of this task
            for tally in (oracle, noop):
                tally.record(False, f"{task.id}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        if has_oracle:
            played = asyncio.run(_play(env, task, None))
            verdict = played.verdict
            what = (f"failed ({played.error[:200]})" if played.error is not None else
                    f"{verdict.status} after the reference actions ({verdict.detail[:100]})" if verdict is not None
                    else "no verdict after the reference actions")
            oracle.record(played.error is None and verdict is not None and verdict.is_correct, f"{task.id}: {what}")
        played = asyncio.run(_play(env, task, [""]))
        verdict = played.verdict
        what = (f"failed ({played.error[:200]})" if played.error is not None else
                f"scored {verdict.status}" if verdict is not None else "never ended the episode")
        noop.record(played.error is None and verdict is not None and not verdict.is_correct,
                    f"{task.id}: empty messages {what}")
    summary = f"{oracle.items} ok" if oracle.items else "no reference actions"
    return [oracle.result(summary), noop.result(f"{noop.items} ok")]


def check(
    env_or_id: Environment | str,
    n: int = 20,
    seed: int = 0,
    time_budget_s: float = 5.0,
    env_kwargs: dict[str, Any] | None = None,
) -> CheckReport:
    """Run the conformance checks on an environment (or a registered id).

    Args:
        env_or_id: an `Environment`, or an id built with `rlvr.make(id, **env_kwargs)` (and closed after).
        n: number of tasks to check, spread evenly over the dataset (all if it has fewer).
        seed: seed for the reset checks.
        time_budget_s: per-verification wall-clock budget, seconds (worker start-up excluded).
        env_kwargs: factory arguments when `env_or_id` is an id.

    Returns:
        A `CheckReport`; `report.passed` is True when every check passed.

    Raises:
        ConfigError: unknown id or bad factory arguments. DataError: the dataset cannot be read.
    """
    from rlvr.environments.registry import make

    start = time.monotonic()
    env = make(env_or_id, **(env_kwargs or {})) if isinstance(env_or_id, str) else env_or_id
    try:
        total = len(env.tasks)
        tasks = spread_tasks(list(env.tasks), n)
        count = len(tasks)
        episode_scored = isinstance(env.verifier, ReturnVerifier)
        if episode_scored:
            results = [CheckResult(name="response_scoring", passed=True, items=0,
                                   detail="scored by the episode return: the per-response checks do not apply")]
        else:
            if tasks:  # warm-up: start the worker processes outside the time budget
                env.score(tasks[0], "")
            try:
                budget = max(time_budget_s, float(env.spec.resources.get("time_budget_s", 0.0)))
                results = _check_tasks(env, tasks, budget)
            except (ValueError, KeyError) as exc:  # the verifier cannot build a reference response
                raise ConfigError(
                    f"{env.spec.id}: `rlvr check` replays each task's reference solution, but {exc}; add one to "
                    "the rows (e.g. a 'solution' field for code tasks) or check a dataset that has them"
                ) from exc
        if total:
            results += [_guarded("reset_deterministic", _check_reset, env, seed),
                        _guarded("episode_protocol", _check_episode, env, seed)]
            if env.spec.max_turns > 1 or episode_scored:
                results += _check_policies(env, tasks)
        else:
            results.append(CheckResult(name="dataset", passed=False, detail="the environment has no tasks"))
        placement = getattr(env, "placement_summary", None)
        if callable(placement):  # where the tasks run (terminal environments: locally, or left out)
            results.append(CheckResult(name="placement", passed=True, detail=str(placement()), items=total))
        return CheckReport(env_id=env.spec.id, n=count, seed=seed, elapsed_s=time.monotonic() - start,
                           results=results)
    finally:
        if isinstance(env_or_id, str):
            env.close()
