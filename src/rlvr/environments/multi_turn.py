"""Multi-turn environments: `MultiTurnEnv` (the environment talks back) and `ToolEnv` (tools).

Episode: `reset` poses the task; each `step(action)` appends the assistant message, asks
`env_response` for the observation messages and whether the episode is done, and records the
step's named reward components. When the episode is done (`terminated`) or the turn limit is
reached (`truncated`: `max_turns` assistant messages), the verifier scores `final_response()`
once, under a per-call timeout, and the final `StepResult` carries the `Verdict`.

Rewards (computed once, at the end of the episode):

- per step t, `step_reward(action, observation)` returns named components `c[t][k]`
  (e.g. `{"tool_errors": 1.0}`); they are always reported in `StepResult.info["components"]`,
  and count towards the reward only with a weight: `r[t] = sum_k reward_weights.get(k, 0) * c[t][k]`.
- the final verdict `V` comes from the verifier. The trajectory-level reward is
  `R = V.reward + sum_t r[t]`. The episode's final `Verdict` is `V` with `reward=R` and, for
  each weighted component `k`, `components["step/<k>"] = sum_t c[t][k]` (unweighted totals);
  with no weights it is `V` unchanged.
- `StepResult.reward` is `r[t]` on every step but the last, and `R - sum_{t<T} r[t]` on the last,
  so the step rewards sum to `R` (the gymnasium return equals `Trajectory.reward`).
- if the verifier broke (`V.status == "error"`, `reward=None`), the episode is masked exactly
  like `SingleTurnEnv`: the final verdict keeps `reward=None`, the last `StepResult.reward` is
  0.0 and `info["masked"]` is True; a trainer must drop the sample.
"""

from __future__ import annotations

import copy
import json
import math
import time
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, ToolCall, Verdict
from rlvr.environments.actions import ParsedCall, TextTag, parse_actions, render_text_results
from rlvr.environments.base import Environment, as_message
from rlvr.environments.tools import Tool, ToolError, run_with_timeout
from rlvr.verifiers.base import Verifier

__all__ = ["ToolEnv", "tool_call_message"]

VERIFIER_TIMEOUT_MARGIN_S = 5.0
"""Seconds added to the verifier's own `timeout_s` for the environment's backstop limit on scoring.

Only for verifiers without a hard limit of their own (inline) or with their own `verify`; a stock
verifier scoring in its pool (worker processes or watchdog threads) has the pool's deadline as the only
one (`MultiTurnEnv.scoring_deadline`)."""


class MultiTurnEnv(Environment):
    """Base of environments where the policy acts over several turns.

    Subclasses implement `env_response`; they may override `final_response` and `step_reward`.

    Args:
        tasks: the dataset (an indexable sequence of `Task`).
        verifier: scores `final_response()` against `task.reference` at the end.
        spec: the environment manifest.
        max_turns: turn limit (assistant messages per episode); None uses `spec.max_turns`.
        reward_weights: weight of each named step component in the reward (unnamed ones weigh 0;
            see the module docstring for the exact formula).
        verifier_timeout_s: per-call limit on the final scoring, seconds; None: the verifier's own
            deadline (see `scoring_deadline`). Past it the verdict is `status="timeout"`, reward 0.

    Attributes:
        done: True once the episode ended; `step` then raises until `reset`.
        step_components: per-step component dicts of the current episode, in order.
        step_rewards: per-step weighted rewards `r[t]` of the current episode.

    Raises:
        ConfigError: max_turns < 1, or a non-finite reward weight.
    """

    def __init__(
        self,
        tasks: Sequence[Task],
        verifier: Verifier,
        spec: EnvSpec,
        *,
        max_turns: int | None = None,
        reward_weights: Mapping[str, float] | None = None,
        verifier_timeout_s: float | None = None,
    ) -> None:
        super().__init__()
        if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
            raise ConfigError(f"max_turns must be an int >= 1 (or None for spec.max_turns), got {max_turns!r}")
        self.tasks = tasks
        self.verifier = verifier
        self.max_turns = max_turns if max_turns is not None else spec.max_turns
        self.spec = spec if spec.max_turns == self.max_turns else spec.model_copy(update={"max_turns": self.max_turns})
        self.reward_weights = _check_weights(reward_weights)
        if verifier_timeout_s is not None and not verifier_timeout_s > 0:
            raise ConfigError(f"verifier_timeout_s must be > 0 seconds or None, got {verifier_timeout_s!r}")
        self.verifier_timeout_s = verifier_timeout_s
        self.done = False
        self.step_components: list[dict[str, float]] = []
        self.step_rewards: list[float] = []

    # -- hooks for subclasses -----------------------------------------------------------
    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """The environment's answer to `action`: (observation messages, episode done).

        The default ends the episode on the first message (a single-turn episode); subclasses
        override it.
        """
        return [], True

    def final_response(self) -> str:
        """The text the verifier scores: the content of the last assistant message ('' if none)."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message.content
        return ""

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        """Named reward components of one step (default: none). Weighted by `reward_weights`."""
        return {}

    def scoring_deadline(self) -> float | None:
        """The one deadline on the final scoring, seconds, or None when the verifier enforces its own.

        `verifier_timeout_s` when given. Otherwise a stock verifier scoring in its pool already ends a
        call past its limit (a watchdog: a killed worker process, or an abandoned thread for sandbox and
        HTTP verifiers, `rlvr.verifiers.base`), so no second deadline is stacked on it (None). Inline
        verifiers and verifiers with their own `verify` get `config.timeout_s + VERIFIER_TIMEOUT_MARGIN_S`
        as the environment's backstop.
        """
        if self.verifier_timeout_s is not None:
            return self.verifier_timeout_s
        stock = type(self.verifier).verify is Verifier.verify
        if stock and self.verifier.config.scoring == "process":
            return None
        return float(self.verifier.config.timeout_s) + VERIFIER_TIMEOUT_MARGIN_S

    async def final_verdict(self) -> Verdict:
        """Score the episode: `score(task, final_response())` in a thread, under `scoring_deadline()`."""
        assert self.task is not None
        task, response = self.task, self.final_response()
        limit = self.scoring_deadline()
        start = time.monotonic()
        try:
            return await run_with_timeout(lambda: self.score(task, response), limit, f"verifier {self.verifier.name}")
        except TimeoutError:
            return Verdict.timeout(f"{self.verifier.name} verifier did not answer within {limit:g} s "
                                   "(environment per-call limit)", elapsed_s=time.monotonic() - start)
        except Exception as exc:  # a grader that crashes is an error verdict, never a 0
            return Verdict.error(f"{self.verifier.name} verifier crashed: {type(exc).__name__}: {exc}",
                                 elapsed_s=time.monotonic() - start)

    # -- episode API -------------------------------------------------------------------
    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Start an episode (see `Environment.reset`)."""
        result = await super().reset(task, seed)
        self.done = False
        self.step_components = []
        self.step_rewards = []
        return result

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """Apply one assistant message; score the episode when it ends.

        Returns:
            The observation; on the last step also `verdict`, `terminated` (the environment said
            done) or `truncated` (turn limit), and the reward described in the module docstring.
            `info` holds `turn`, `components` (this step's), `task_id`, and on the last step
            `status` and `masked`.

        Raises:
            ConfigError: `reset` was not called, or the episode is over.
        """
        if self.task is None:
            raise ConfigError("step() called before reset(); call env.reset() (or env.reset_sync()) first")
        if self.done:
            raise ConfigError("episode is over; call reset() (or reset_sync()) to start a new one")
        message = as_message(action)
        if message.role != "assistant":
            raise ConfigError(f"an action must be an assistant message, got role={message.role!r}")
        self.messages.append(message)
        self.turn += 1
        observation, finished = await self.env_response(message)
        self.messages.extend(observation)
        components = {k: float(v) for k, v in self.step_reward(message, observation).items()}
        bad = [k for k, v in components.items() if not math.isfinite(v)]
        if bad:
            raise ConfigError(f"step_reward of {self.spec.id!r} returned non-finite components {bad}; "
                              "return finite floats")
        step_reward = sum(self.reward_weights.get(k, 0.0) * v for k, v in components.items())
        self.step_components.append(components)
        self.step_rewards.append(step_reward)
        truncated = not finished and self.turn >= self.max_turns
        info: dict[str, Any] = {"task_id": self.task.id, "turn": self.turn, "components": dict(components)}
        if not (finished or truncated):
            return StepResult(messages=tuple(observation), reward=step_reward, info=info)
        self.done = True
        verdict = self._combine(await self.final_verdict())
        masked = verdict.reward is None
        last = 0.0 if masked else float(verdict.reward) - sum(self.step_rewards[:-1])  # type: ignore[arg-type]
        info.update(status=verdict.status, masked=masked)
        return StepResult(messages=tuple(observation), reward=last, terminated=finished, truncated=truncated,
                          verdict=verdict, info=info)

    def _combine(self, verdict: Verdict) -> Verdict:
        """Add the weighted step rewards to the verifier's verdict (module docstring formula)."""
        if not self.reward_weights or verdict.reward is None:
            return verdict
        totals: dict[str, float] = {}
        for comps in self.step_components:
            for k, v in comps.items():
                if k in self.reward_weights:
                    totals[k] = totals.get(k, 0.0) + v
        components = {**verdict.components, **{f"step/{k}": v for k, v in totals.items()}}
        return verdict.model_copy(update={"reward": verdict.reward + sum(self.step_rewards),
                                          "components": components})


def _check_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, weight in (weights or {}).items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise ConfigError(f"reward_weights[{name!r}] must be a finite number, got {weight!r}")
        out[str(name)] = float(weight)
    return out


class ToolEnv(MultiTurnEnv):
    """An environment whose policy calls tools until it gives a final answer.

    Each assistant message is parsed with `parse_actions` (native `tool_calls`, or the
    configured `text_tags`). A message with calls runs them in order, each under its tool's
    timeout; answers to native calls are `Message(role="tool", tool_call_id=..., name=...)`,
    answers to text-tag calls one `role="user"` message (each answer in its tag's
    `response_template`). Unknown tools, unparsable calls, bad arguments, timeouts and tool
    exceptions are answered with `"Error: ..."` text; they never end the episode. A message
    without calls is the final answer: the episode terminates and is scored.

    Step components (weight them with `reward_weights`, e.g. `{"tool_errors": -0.1}`):
    `tool_calls` (calls in the message) and `tool_errors` (calls answered with an error).

    Args:
        tasks: the dataset.
        verifier: scores the final answer.
        spec: the manifest; `spec.tools` is filled from `tools` when empty (and must match otherwise).
        tools: `Tool`s or plain functions (wrapped with `Tool(fn)`), e.g. bound methods.
        text_tags: text-tag actions read from assistant content (none by default).
        native: read native `tool_calls`.
        max_turns: turn limit; None uses `spec.max_turns`.
        max_calls_per_turn: calls beyond this many in one message are answered with an error.
        reward_weights: weights of the step components.
        verifier_timeout_s: per-call limit on scoring (see `MultiTurnEnv`).

    Raises:
        ConfigError: duplicate tool names, a text tag naming an unknown tool, or `spec.tools`
            disagreeing with `tools`.
    """

    def __init__(
        self,
        tasks: Sequence[Task],
        verifier: Verifier,
        spec: EnvSpec,
        tools: Sequence[Tool | Callable[..., Any]],
        *,
        text_tags: Sequence[TextTag] | None = None,
        native: bool = True,
        max_turns: int | None = None,
        max_calls_per_turn: int = 8,
        reward_weights: Mapping[str, float] | None = None,
        verifier_timeout_s: float | None = None,
    ) -> None:
        built = [t if isinstance(t, Tool) else Tool(t) for t in tools]
        self.tools: dict[str, Tool] = {}
        for t in built:
            if t.name in self.tools:
                raise ConfigError(f"two tools are named {t.name!r}; give one another name with Tool(fn, name=...)")
            self.tools[t.name] = t
        self.text_tags = tuple(text_tags or ())
        for tag in self.text_tags:
            if tag.tool is not None and tag.tool not in self.tools:
                raise ConfigError(f"text tag {tag.label!r} calls tool {tag.tool!r}, which is not among the tools "
                                  f"({', '.join(self.tools) or 'none'})")
        schemas = tuple(t.schema for t in built)
        if not spec.tools:
            spec = spec.model_copy(update={"tools": schemas})
        elif list(spec.tools) != list(schemas):
            raise ConfigError(f"spec.tools of {spec.id!r} does not match the tools passed; leave spec.tools empty "
                              "and ToolEnv fills it from the tools")
        if isinstance(max_calls_per_turn, bool) or not isinstance(max_calls_per_turn, int) or max_calls_per_turn < 1:
            raise ConfigError(f"max_calls_per_turn must be an int >= 1, got {max_calls_per_turn!r}")
        super().__init__(tasks, verifier, spec, max_turns=max_turns, reward_weights=reward_weights,
                         verifier_timeout_s=verifier_timeout_s)
        self.native = native
        self.max_calls_per_turn = max_calls_per_turn
        self._last_calls = self._last_errors = 0

    async def call_tool(self, call: ParsedCall) -> tuple[str, bool]:
        """Run one parsed call; return (answer text, whether it is an error). Never raises for bad calls."""
        if call.error is not None:
            return f"Error: {call.error}", True
        found = self.tools.get(call.name)
        if found is None:
            known = ", ".join(self.tools) or "none"
            return f"Error: unknown tool {call.name!r}; available tools: {known}", True
        try:
            return await found.call(call.arguments), False
        except ToolError as exc:
            return f"Error: {exc}", True

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """Run the message's tool calls and answer them; no calls means the final answer (done)."""
        calls = parse_actions(action, self.text_tags, native=self.native)
        self._last_calls, self._last_errors = len(calls), 0
        if not calls:
            return [], True
        answers: list[tuple[ParsedCall, str]] = []
        for i, call in enumerate(calls):
            if i >= self.max_calls_per_turn:
                text, failed = f"Error: at most {self.max_calls_per_turn} tool calls per message; call not run", True
            else:
                text, failed = await self.call_tool(call)
            self._last_errors += failed
            answers.append((call, text))
        messages = [Message(role="tool", tool_call_id=call.call_id, name=call.name or None, content=text)
                    for call, text in answers if call.source == "native"]
        text_answers = [(call, text) for call, text in answers if call.source == "text"]
        if text_answers:
            messages.append(Message(role="user", content=render_text_results(text_answers)))
        return messages, False

    def final_response(self) -> str:
        """The final answer: the last assistant message when it made no tool call; '' when the turns ran out.

        An episode cut at `max_turns` on a message with calls has no final answer (the prompt asks for
        one without a call), so its call markup is never scored: a calculator call whose expression
        is the answer (`{"expression": "-4"}`) would otherwise read as the answer -4.
        """
        return "" if self._last_calls else super().final_response()

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        """`tool_calls` and `tool_errors` of this step (0 for the final answer)."""
        return {"tool_calls": float(self._last_calls), "tool_errors": float(self._last_errors)}

    episode_shared: ClassVar[frozenset[str]] = Environment.episode_shared | {"tools", "text_tags"}

    def __copy__(self) -> ToolEnv:
        """A shallow copy whose tools that are bound methods of this env are bound to the copy.

        The rollout driver and the TRL adapter run each episode in a shallow copy
        (`Environment.episode_copy`) sharing tasks and verifier; a tool such as `Tool(self.execute_sql)` must
        read the copy's episode (`self.task`), not the original's.
        """
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.tools = {name: _rebound(t, self, clone) for name, t in self.tools.items()}
        return clone


def _rebound(t: Tool, old: object, new: object) -> Tool:
    """`t` with its function re-bound to `new` when it is a bound method of `old`; else `t` itself."""
    fn = t.fn
    if getattr(fn, "__self__", None) is not old or not isinstance(fn, types.MethodType):
        return t
    clone = copy.copy(t)
    clone.fn = types.MethodType(fn.__func__, new)
    return clone


def tool_call_message(name: str, arguments: Mapping[str, Any], call_id: str = "call_0", content: str = "") -> Message:
    """An assistant message with one native tool call (e.g. for `reference_actions`)."""
    return Message(role="assistant", content=content,
                   tool_calls=(ToolCall(id=call_id, name=name, arguments=json.dumps(dict(arguments))),))
