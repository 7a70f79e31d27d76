"""The episode driver: the one place where a model turn is paired with an environment step.

`EpisodeRun` is one episode of an environment: `reset`, then `act` once per model turn (step the
environment, record the step reward, the verdict when it ends and the turn's tokens), `cut` when
the trainer's token budget ends it early, `end` when the caller ends it with a verdict of its own,
and `trajectory()` for the result. `play(policy)` is the loop over it that every consumer runs:
`rlvr eval` (`rlvr.rollout.batch`), TRL's `rollout_func` (`rlvr.adapters.trl.rollout`), the veRL
agent loop, the OpenRLHF agent executor, the parity replay and the conformance check
(`rlvr.rollout.check`); an adapter supplies a `Policy` fed by its trainer's generation server and
reads the `Trajectory`. Where the caller itself drives the turns (TRL's `environment_factory`,
which calls the environment's tool methods; an OpenEnv server session, whose client sends the
turns), it calls `reset`, `act`, `cut` and `end` directly, so the step, end and scoring rules are
still these.

Training samples: `training_sample()` holds the one rule by which a finished episode becomes a
trainer's sample (`TrainingSample`): a failed, errored, verdict-less or misaligned episode is
masked (an error verdict, reward None), never trained on as a fake 0. TRL, veRL and OpenRLHF all
call it.

History: the environment owns the conversation (`Environment.messages`, which `reset` starts and
`step` appends to); the policy is shown it, the token layer (`rlvr.rollout.tokens.EpisodeTokens`)
reads it and the trajectory copies it. An environment whose `step` does not record its turn has it
recorded here, so every consumer sees the same history.

Errors: an episode that raises (environment, tokens, or the policy unless `raise_policy_errors`)
becomes a trajectory with `error` set and an error verdict (reward None, so trainers mask it).

Example:
    >>> run = EpisodeRun(env.episode_copy(), task, tokenizer=policy.tokenizer)   # doctest: +SKIP
    >>> trajectory = await run.play(policy)                                      # doctest: +SKIP
    >>> sample = run.training_sample()                                           # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, StepResult, Task, TokenSample, Trajectory, Verdict
from rlvr.environments.base import Environment
from rlvr.rollout.policy import Episode, Generation, Policy
from rlvr.rollout.tokens import ChatTokenizer, EpisodeTokens, Layout

__all__ = ["EpisodeRun", "TokenBudget", "TrainingSample"]


@dataclass(frozen=True)
class TokenBudget:
    """A trainer's token budget for one episode; past it the episode is cut and scored as it stands.

    Attributes:
        limit: most tokens, > 0.
        counts: what counts against `limit`: 'completion' (model and environment tokens after the
            first prompt: veRL's `rollout.response_length`) or 'context' (the prompt too:
            OpenRLHF's `max_length`).
    """

    limit: int
    counts: Literal["completion", "context"] = "completion"

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ConfigError(f"a token budget must be >= 1 token, got {self.limit}")
        if self.counts not in ("completion", "context"):
            raise ConfigError(f"TokenBudget.counts must be 'completion' or 'context', got {self.counts!r}")

    def left(self, tokens: EpisodeTokens) -> int:
        """Tokens still allowed after what `tokens` holds (may be <= 0)."""
        used = len(tokens.completion_ids) + (len(tokens.prompt_ids) if self.counts == "context" else 0)
        return self.limit - used


@dataclass(frozen=True)
class TrainingSample:
    """A finished episode as one trainer sample (`EpisodeRun.training_sample`, the rule every trainer applies).

    Attributes:
        trajectory: the episode's trajectory.
        verdict: the verdict to train on: the episode's own, or an error verdict (reward None: the
            trainer masks the sample, never learns a fake 0) when the episode cannot be trained on.
        tokens: the episode's tokens in one sequence as played (`EpisodeTokens.played_sample`):
            the whole episode when they line up, else the tokens up to where the chat template
            rewrote history; None when the episode recorded no tokens (no tokenizer: e.g. TRL's
            `environment_factory`, where TRL owns the tokens).
        complete: True when `tokens` hold the whole episode, lined up, with at least one sampled
            token. A trainer that cannot take a partial sequence (TRL) gives a masked placeholder
            in its place (mask zero).
    """

    trajectory: Trajectory
    verdict: Verdict
    tokens: TokenSample | None
    complete: bool


class EpisodeRun:
    """One episode of `env` on `task` (see the module docstring).

    Args:
        env: an environment instance used by this episode only.
        task: the task to pose, or None to let the environment draw one on `reset` (seeded by
            its `seed`, `Environment.reset`).
        tokenizer: the policy's tokenizer; with it (and a `layout`) each turn that reports sampled
            ids is recorded by `EpisodeTokens`. None: no token fields.
        layout: token layout of the trajectory ('episode', 'turn', 'auto'), or None for none.
        sample: index of this episode among the task's samples (`info["sample"]`).
        budget: the trainer's token budget, or None (needs `tokenizer`).
        max_steps: safety limit on model turns (default `2 * env.spec.max_turns + 2`); an
            environment that runs past it is an error.
        stop_on_misalignment: end the episode with an error verdict as soon as its tokens stop
            lining up (trainers that need one token sequence); False lets the policy go on from
            the messages.

    Attributes:
        task: the episode's task (the one the environment drew, after `reset`, when none was given).
        reset_info: the environment's `reset` info (`{"task_id", ...}`), empty before `reset`.
        tokens: the episode's `EpisodeTokens` (after `reset`), or None.
        rewards: per-step rewards, in order.
        step_components: the environment's step components (`StepResult.info["components"]`, e.g. a
            `ToolEnv`'s `tool_calls` / `tool_errors`) summed over the turns so far.
        turn: model turns played so far (`act` calls).
        finish_reasons: the policy's finish reason per model turn (`play` only).
        verdict: the final verdict once the episode ended (None if the environment gave none).
        done: True once the episode ended.
        was_cut: True when the token budget (or the caller, via `cut()`) ended the episode.
    """

    def __init__(self, env: Environment, task: Task | None, *, tokenizer: ChatTokenizer | None = None,
                 layout: Layout | None = "auto", sample: int = 0, budget: TokenBudget | None = None,
                 max_steps: int | None = None, stop_on_misalignment: bool = False) -> None:
        if budget is not None and tokenizer is None:
            raise ConfigError("a token budget needs the policy's tokenizer (tokens are counted by EpisodeTokens)")
        self.env = env
        self.task = task
        self.tokenizer = tokenizer if layout is not None else None
        self.layout = layout
        self.sample = sample
        self.budget = budget
        self.max_steps = max_steps if max_steps is not None else 2 * env.spec.max_turns + 2
        self.stop_on_misalignment = stop_on_misalignment
        self.tools: list[dict[str, Any]] | None = list(env.spec.tools) or None
        self.reset_info: dict[str, Any] = {}
        self.tokens: EpisodeTokens | None = None
        self.rewards: list[float] = []
        self.step_components: dict[str, float] = {}
        self.finish_reasons: list[str | None] = []
        self.verdict: Verdict | None = None
        self.done = False
        self.was_cut = False
        self.turn = 0
        self._started = False
        self._policy_failed = False
        self._played: Trajectory | None = None

    @property
    def messages(self) -> list[Message]:
        """The conversation so far: the environment's history (empty before `reset`)."""
        return self.env.messages if self._started else []

    @property
    def task_id(self) -> str:
        """The episode's task id ('' while no task is known: before a `reset` that draws one)."""
        return self.task.id if self.task is not None else ""

    # -- the steps -----------------------------------------------------------------------
    async def reset(self, seed: int | None = None, *, prompt_ids: Sequence[int] | None = None) -> list[Message]:
        """Reset the environment with the task; start the token record. Returns the prompt messages."""
        prompt, self.reset_info = await self.env.reset(self.task, seed=seed)
        if self.task is None:
            self.task = self.env.task  # the environment drew it (None only for an env that breaks the protocol)
        if self.env.messages != prompt:  # (identical messages compare by identity: cheap)
            self.env.messages = list(prompt)  # an env that does not keep its history: it starts here
        self._started = True
        if self.tokenizer is not None:
            self.tokens = EpisodeTokens(self.tokenizer, prompt, tools=self.tools, prompt_ids=prompt_ids,
                                        history=self.env.messages)
        return list(prompt)

    async def act(self, message: Message, generation: Generation | None = None) -> StepResult:
        """Play one model turn: record its tokens, step the environment, record the result.

        Args:
            message: the assistant message the environment steps with.
            generation: the policy's turn (its sampled ids, logprobs and prompt ids), if any.

        Raises:
            ConfigError: the episode is over, or `reset` was not called.
        """
        if not self._started or self.done:
            raise ConfigError("act() needs a running episode: call reset() first; an ended episode takes no turns")
        env, tokens = self.env, self.tokens
        if tokens is not None and (generation is None or generation.completion_ids is None):
            tokens = None  # a turn without sampled ids (a scripted policy) has no tokens to record
        if tokens is not None and generation is not None and generation.completion_ids is not None:
            tokens.add_model_turn(message, generation.completion_ids, generation.logprobs,
                                  prompt_ids=generation.prompt_ids)
        before = len(env.messages)
        result = await env.step(message)
        if len(env.messages) < before + 1 + len(result.messages):  # the env did not record its turn
            self._record_history(before, message, result.messages)
        self.turn += 1
        self.rewards.append(result.reward)
        for name, value in (result.info.get("components") or {}).items():
            self.step_components[name] = self.step_components.get(name, 0.0) + float(value)
        if result.terminated or result.truncated:
            self.verdict, self.done = result.verdict, True
        elif tokens is not None:
            tokens.add_env_turn(result.messages)
        return result

    def _record_history(self, before: int, message: Message, observation: Sequence[Message]) -> None:
        history = self.env.messages
        if len(history) == before:
            history.append(message)
        if len(history) == before + 1 and observation:
            history.extend(observation)

    async def cut(self) -> Verdict:
        """End the episode where it stands and score it by the environment's rule for a cut episode.

        `final_verdict()` when the environment has one (`MultiTurnEnv`: its final response under
        its scoring deadline), else the last assistant message scored by `env.ascore`.
        """
        final = getattr(self.env, "final_verdict", None)
        if final is not None:
            verdict: Verdict = await final()
        else:
            last = next((m.content for m in reversed(self.messages) if m.role == "assistant"), "")
            verdict = await self.env.ascore(self._task(), last)
        self.end(verdict)
        self.was_cut = True
        return verdict

    def end(self, verdict: Verdict) -> None:
        """End the episode with `verdict` (e.g. an adapter's error verdict)."""
        self.verdict, self.done = verdict, True

    def _task(self) -> Task:
        if self.task is None:
            raise ConfigError(f"environment {self.env.spec.id!r} set no task on reset (Environment.reset must set "
                              "self.task to the task it poses)")
        return self.task

    # -- the loop ------------------------------------------------------------------------
    async def play(self, policy: Policy, *, seed: int | None = None, raise_policy_errors: bool = False) -> Trajectory:
        """Run the episode to its end with `policy`; never raises for a failing episode.

        Each turn: stop if the budget is spent (before the first turn: an error verdict, the
        prompt leaves no room) or, with `stop_on_misalignment`, if the tokens stopped lining up;
        else ask the policy (token-in policies get the episode's ids, `Episode.max_tokens` what is
        left of the budget) and `act` on its message.

        Args:
            policy: the policy.
            seed: passed to `env.reset` (when `reset` was not called yet).
            raise_policy_errors: let an exception of `policy.generate` (the trainer's generation
                server) propagate instead of becoming an error trajectory.

        Returns:
            The trajectory; `error` is set (and the verdict is an error verdict) if the episode broke.
        """
        try:
            if not self._started:
                await self.reset(seed)
            while not self.done:
                if await self._stops():
                    break
                await self._turn(policy)
            self._played = self.trajectory()
        except Exception as exc:  # one broken episode must not stop the others
            if self._policy_failed and raise_policy_errors:
                raise
            self._played = self.error_trajectory(exc)
        return self._played

    async def _stops(self) -> bool:
        """End the episode before the next turn if the budget is spent or (when asked) the tokens stopped lining up.

        Raises:
            ConfigError: the environment ran past `max_steps` without ending the episode.
        """
        tokens, budget = self.tokens, self.budget
        if budget is not None and tokens is not None and budget.left(tokens) <= 0:
            await self._out_of_budget()
            return True
        if self.stop_on_misalignment and tokens is not None and tokens.misaligned is not None:
            self.end(Verdict.error(f"token alignment failed: {tokens.misaligned}"))
            return True
        if self.turn >= self.max_steps:
            spec = self.env.spec
            raise ConfigError(f"environment {spec.id!r} did not end the episode after {self.turn} policy turns "
                              f"(spec.max_turns={spec.max_turns}); it must terminate or truncate by max_turns")
        return False

    async def _turn(self, policy: Policy) -> None:
        """Ask the policy for one turn (token-in policies get the episode's ids) and `act` on it."""
        tokens, budget = self.tokens, self.budget
        token_in = bool(getattr(policy, "accepts_prompt_ids", False)) and self.layout != "turn"
        left = budget.left(tokens) if budget is not None and tokens is not None else None
        hint = tokens.context_ids() if tokens is not None and token_in else None
        episode = Episode(env=self.env, task=self._task(), sample=self.sample, turn=self.turn, max_tokens=left)
        try:
            gen = await policy.generate(self.env.messages, tools=self.tools, prompt_ids=hint, episode=episode)
        except Exception:
            self._policy_failed = True
            raise
        self.finish_reasons.append(gen.finish_reason)
        await self.act(gen.message, gen)

    async def _out_of_budget(self) -> None:
        """The budget is spent: cut the episode, or (before the first turn) end it with an error verdict."""
        if self.turn > 0:
            await self.cut()
            return
        assert self.tokens is not None and self.budget is not None
        self.end(Verdict.error(f"the episode prompt is {len(self.tokens.prompt_ids)} tokens, leaving no room "
                               f"to generate within the token budget of {self.budget.limit}; raise it"))

    # -- the result ----------------------------------------------------------------------
    def _counts(self) -> dict[str, Any]:
        """`turns` (model turns) and `step_components` (their sums): what `rlvr.core.metrics.EpisodeStats` reads."""
        return {"turns": self.turn, "step_components": dict(self.step_components)}

    def trajectory(self) -> Trajectory:
        """The episode as a `Trajectory`: messages (the env's history), rewards, verdict, token fields.

        `info` holds `sample`, `finish_reasons`, `turns` (model turns played), `step_components` (the
        environment's step components summed over the episode) and the token layout fields.

        Raises:
            TokenAlignmentError: layout 'episode' on an episode whose tokens do not line up.
        """
        info: dict[str, Any] = {"sample": self.sample, "finish_reasons": self.finish_reasons, **self._counts()}
        fields: dict[str, Any] = {}
        if self.tokens is not None and self.tokens.model_turns and self.layout is not None:
            fields = self.tokens.trajectory_fields(self.layout)
            info.update(fields.pop("info"))
        return Trajectory(task_id=self.task_id, messages=list(self.messages), rewards=self.rewards,
                          verdict=self.verdict, info=info, **fields)

    def error_trajectory(self, exc: BaseException) -> Trajectory:
        """The trajectory of an episode that raised `exc`: an error verdict (reward None), `error` set."""
        detail = f"{type(exc).__name__}: {exc}"
        return Trajectory(task_id=self.task_id, messages=list(self.messages), rewards=list(self.rewards),
                          verdict=Verdict.error(f"rollout failed: {detail}"), error=detail,
                          info={"sample": self.sample, **self._counts()})

    def training_sample(self) -> TrainingSample:
        """The finished episode as one trainer sample: the one masking rule TRL, veRL and OpenRLHF apply.

        The verdict is the episode's own unless the episode cannot be trained on; then it is an
        error verdict (reward None: the trainer masks the sample, never learns a fake 0):

        - the episode failed (the environment, its tokens or the policy raised): `play`'s error verdict;
        - the environment ended it without a verdict;
        - its tokens do not line up (`EpisodeTokens.check_episode`: the chat template rewrote
          history), in the words `play` uses when it stops a misaligned episode;
        - it records tokens (a tokenizer was given) but holds no sampled token.

        Raises:
            ConfigError: the episode has not ended (neither played nor ended by `act`/`cut`/`end`).
        """
        if self._played is None and not self.done:
            raise ConfigError("training_sample() needs a finished episode: play() it, or end it with act/cut/end")
        trajectory = self._played if self._played is not None else self.trajectory()
        verdict = trajectory.verdict or Verdict.error("the environment ended the episode without a verdict")
        tokens = self.tokens.played_sample() if self.tokens is not None else None
        why = self.tokens.check_episode() if self.tokens is not None else None
        complete = trajectory.error is None and why is None and tokens is not None and bool(tokens.completion_ids)
        if verdict.status != "error" and why is not None:
            verdict = Verdict.error(f"token alignment failed: {why}")
        elif verdict.status != "error" and tokens is not None and not complete:
            verdict = Verdict.error("the episode has no sampled tokens to train on")
        return TrainingSample(trajectory=trajectory, verdict=verdict, tokens=tokens, complete=complete)


async def run_episode(
    env: Environment,
    task: Task,
    policy: Policy,
    *,
    sample: int = 0,
    seed: int | None = None,
    layout: Layout | None = "auto",
    max_steps: int | None = None,
) -> Trajectory:
    """Run one episode of `task` in `env` with `policy` (`EpisodeRun(...).play(policy)`); never raises.

    Args:
        env: an environment instance used by this episode only.
        task: the task to pose.
        policy: the policy.
        sample: index of this episode among the task's samples (recorded in `info["sample"]`).
        seed: passed to `env.reset`.
        layout: token layout ('episode', 'turn', 'auto'; see `rlvr.rollout.tokens`), or None for
            no token fields. Token fields are only built when the policy has a tokenizer and
            returns sampled ids.
        max_steps: safety limit on policy turns (default `2 * env.spec.max_turns + 2`); an
            environment that runs past it is an error.

    Returns:
        The trajectory; `error` is set (and the verdict is an error verdict) if the episode broke.
    """
    run = EpisodeRun(env, task, tokenizer=getattr(policy, "tokenizer", None), layout=layout, sample=sample,
                     max_steps=max_steps)
    return await run.play(policy, seed=seed)
