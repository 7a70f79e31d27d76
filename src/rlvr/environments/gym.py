"""Gymnasium bridges: a `gymnasium.Env` view of any rlvr environment, and the reverse.

`GymnasiumEnv(env_or_id)` -- for gymnasium users:

- observation space: `UnicodeText` (a `gymnasium.spaces.Text` accepting any Unicode string up to
  `max_observation_length` characters; samples use printable ASCII). The observation is the text
  of the new messages (`observation="last"`: the prompt after `reset`, the environment's answer
  after `step`, '' when the episode ended) or of the whole conversation so far
  (`observation="conversation"`), rendered by `render_messages` ("role: content" blocks).
  `info["messages"]` always carries the new messages as OpenAI dicts, for chat templates.
- action space: `UnicodeText` up to `max_action_length` characters; the action is the assistant
  message's text (a dict in the OpenAI message format is also accepted, for native tool calls).
- `reset(seed=None, options=None) -> (obs, info)`: `seed` seeds gymnasium's `np_random` and the
  rlvr task draw (the same seed poses the same task); `options={"task_index": i}` or
  `{"task_id": "..."}` poses a given task.
- `step(action) -> (obs, reward, terminated, truncated, info)`, with the rlvr reward semantics
  (step rewards sum to the trajectory reward; a broken grader gives 0 with `info["masked"]`).
- built from an id, the view has a gymnasium `EnvSpec`, so `gymnasium.utils.env_checker.check_env`
  runs every check; built from an instance it has none: pass `skip_render_check=True`.

`from_gymnasium(env_or_id, ...)` -- wraps a text gymnasium environment as an rlvr `MultiTurnEnv`.
Supported: observation spaces `Text` (used as is) or any space with an `observation_to_text`
function; action spaces `Text` (the assistant text, stripped, must lie in the space) or
`Discrete(n)` with `actions=[name_0, ..., name_{n-1}]` (the action is the name that occurs last
in the message, whole word, case-insensitive). Anything else raises `ConfigError`. Tasks are
seeds (`Task.reference = {"seed": s}`); the prompt is the observation of `reset(seed=s)`. The
gymnasium reward of each step is the step component `env_reward` (weight 1); an invalid action
is answered with a message naming the valid ones and counts as `invalid_action`. The verdict is
`correct` when the episode terminated (not truncated) with a return >= `success_threshold`
(default: return > 0), else `incorrect`; its reward is the return.
"""

from __future__ import annotations

import copy
import math
import re
import string
from collections.abc import Callable, Sequence
from typing import Any, Literal

import gymnasium
from gymnasium import spaces

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.base import Environment, as_message
from rlvr.environments.external import ReturnVerifier, check_success_threshold, return_verdict
from rlvr.environments.loaders import TaskList
from rlvr.environments.multi_turn import MultiTurnEnv

__all__ = ["GymTextEnv", "GymnasiumEnv", "UnicodeText", "from_gymnasium", "render_messages"]

PRINTABLE = "".join(c for c in string.printable if c not in "\x0b\x0c\r")
"""Characters `UnicodeText.sample` draws from."""


class UnicodeText(spaces.Text):
    """A `Text` space of any Unicode string with `min_length <= len <= max_length` characters.

    `contains` ignores the charset (conversations hold any character); `sample` draws from
    `charset` (printable ASCII by default).
    """

    def __init__(self, max_length: int, *, min_length: int = 0, charset: str = PRINTABLE,
                 seed: int | None = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=charset, seed=seed)

    def contains(self, x: Any) -> bool:
        """True for a string whose length lies within the bounds."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


def render_messages(messages: Sequence[Message]) -> str:
    """Messages as text: 'role: content' blocks separated by blank lines; tool calls as JSON lines."""
    blocks = []
    for m in messages:
        role = f"tool ({m.name})" if m.role == "tool" and m.name else m.role
        text = m.content
        for call in m.tool_calls or ():
            text += ("\n" if text else "") + f'<tool_call>{{"name": "{call.name}", "arguments": {call.arguments}}}'
            text += "</tool_call>"
        blocks.append(f"{role}: {text}")
    return "\n\n".join(blocks)


def _build_view(**kwargs: Any) -> GymnasiumEnv:
    """Gymnasium entry point of a view built from an id (`EnvSpec.make`, `gymnasium.make`)."""
    return GymnasiumEnv(kwargs.pop("env"), **kwargs)


class GymnasiumEnv(gymnasium.Env[str, Any]):
    """A `gymnasium.Env` view of an rlvr environment (see the module docstring).

    Args:
        env: an rlvr `Environment` (closed by `close()`), or a registered id built with `env_kwargs`.
        env_kwargs: factory arguments when `env` is an id.
        observation: 'last' (the new messages) or 'conversation' (everything so far).
        render_mode: None or 'ansi' (`render()` returns the conversation text).
        max_observation_length: observation space bound, characters.
        max_action_length: action space bound, characters.

    Raises:
        ConfigError: unknown id, bad factory arguments, or a bad option.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium's own attribute)

    def __init__(
        self,
        env: Environment | str,
        *,
        env_kwargs: dict[str, Any] | None = None,
        observation: Literal["last", "conversation"] = "last",
        render_mode: str | None = None,
        max_observation_length: int = 1_000_000,
        max_action_length: int = 8192,
    ) -> None:
        if observation not in ("last", "conversation"):
            raise ConfigError(f"observation must be 'last' or 'conversation', got {observation!r}")
        if render_mode not in (None, "ansi"):
            raise ConfigError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if isinstance(env, str):
            from rlvr.environments.registry import make

            self.env: Environment = make(env, **(env_kwargs or {}))
            self.spec = gymnasium.envs.registration.EnvSpec(
                id=env, entry_point=_build_view, nondeterministic=False, disable_env_checker=True,
                kwargs={"env": env, "env_kwargs": dict(env_kwargs or {}), "observation": observation,
                        "max_observation_length": max_observation_length, "max_action_length": max_action_length})
        elif isinstance(env, Environment):
            if env_kwargs:
                raise ConfigError("env_kwargs are only used with an environment id; configure the instance instead")
            self.env = env
        else:
            raise ConfigError(f"env must be an rlvr Environment or a registered id, got {type(env).__name__}")
        self.observation_mode = observation
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_observation_length)
        self.action_space = UnicodeText(max_action_length)
        self._closed = False

    def _text(self, new: Sequence[Message]) -> str:
        return render_messages(self.env.messages if self.observation_mode == "conversation" else new)

    def _task_from_options(self, options: dict[str, Any] | None) -> Task | None:
        if not options:
            return None
        tasks = self.env.tasks
        if "task_index" in options:
            index = options["task_index"]
            if isinstance(index, bool) or not isinstance(index, int) or not -len(tasks) <= index < len(tasks):
                raise ConfigError(f"options['task_index'] must be an int in [0, {len(tasks)}), got {index!r}")
            return tasks[index]
        if "task_id" in options:
            for task in tasks:
                if task.id == options["task_id"]:
                    return task
            raise ConfigError(f"options['task_id'] {options['task_id']!r} is not a task of {self.env.spec.id!r}")
        raise ConfigError(f"unknown reset options {sorted(options)}; use 'task_index' or 'task_id'")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode; return (observation text, info with task_id, env_id and messages)."""
        super().reset(seed=seed)
        messages, info = self.env.reset_sync(self._task_from_options(options), seed)
        return self._text(messages), {**info, "messages": [m.to_openai() for m in messages]}

    def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply the assistant's text; return (observation, reward, terminated, truncated, info)."""
        result = self.env.step_sync(as_message(action))
        info = {**copy.deepcopy(result.info), "messages": [m.to_openai() for m in result.messages]}
        if result.verdict is not None:
            info["verdict"] = result.verdict.model_dump(exclude={"elapsed_s"})  # wall time would break determinism
        return self._text(result.messages), float(result.reward), result.terminated, result.truncated, info

    def render(self) -> str | None:
        """The conversation so far as text ('ansi'), or None without a render mode."""
        if self.render_mode == "ansi":
            return render_messages(self.env.messages)
        return None

    def close(self) -> None:
        """Close the wrapped environment (safe to call twice)."""
        if not self._closed:
            self._closed = True
            self.env.close()


class GymTextEnv(MultiTurnEnv):
    """An rlvr `MultiTurnEnv` over a text gymnasium environment; build it with `from_gymnasium`.

    Attributes:
        gym_env: the wrapped gymnasium environment.
        episode_return: sum of the gymnasium rewards of the current episode.
    """

    def __init__(
        self,
        gym_env: gymnasium.Env[Any, Any],
        probe: gymnasium.Env[Any, Any],
        spec: EnvSpec,
        *,
        size: int,
        seed: int,
        observation_to_text: Callable[[Any], str],
        action_from_text: Callable[[str], Any],
        action_help: str,
        instructions: str | None,
        success_threshold: float | None,
        reward_weights: dict[str, float] | None,
    ) -> None:
        def convert(index: int, task_seed: int) -> Task:
            observation, _ = probe.reset(seed=task_seed)
            prompt = [Message(role="user", content=observation_to_text(observation))]
            if instructions:
                prompt.insert(0, Message(role="system", content=instructions))
            return Task(id=f"{spec.id}-seed{task_seed}", prompt=tuple(prompt), reference={"seed": task_seed})

        tasks = TaskList(range(seed, seed + size), convert)
        weights = {"env_reward": 1.0, **(reward_weights or {})}
        super().__init__(tasks, ReturnVerifier("a gymnasium-wrapped environment"), spec, reward_weights=weights)
        self.gym_env = gym_env
        self.probe = probe
        self.observation_to_text = observation_to_text
        self.action_from_text = action_from_text
        self.action_help = action_help
        self.success_threshold = success_threshold
        self.episode_return = 0.0
        self._last: dict[str, float] = {}
        self._gym_terminated = self._gym_truncated = False

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Reset the gymnasium env with the task's seed; the prompt is its first observation."""
        messages, info = await super().reset(task, seed)
        assert self.task is not None
        observation, _ = self.gym_env.reset(seed=self.task.reference["seed"])
        text = self.observation_to_text(observation)
        if messages[-1].content != text:
            raise ConfigError(f"gymnasium env {self.spec.id!r}: reset(seed={self.task.reference['seed']}) is not "
                              "deterministic (its observation differs from the task prompt)")
        self.episode_return = 0.0
        self._gym_terminated = self._gym_truncated = False
        return messages, info

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """Step the gymnasium env with the parsed action; an invalid action is answered, not stepped."""
        try:
            gym_action = self.action_from_text(action.content)
        except ValueError as exc:
            self._last = {"env_reward": 0.0, "invalid_action": 1.0}
            self._gym_terminated = self._gym_truncated = False
            return [Message(role="user", content=f"Invalid action: {exc}. {self.action_help}")], False
        observation, reward, terminated, truncated, _ = self.gym_env.step(gym_action)
        reward = float(reward)
        if not math.isfinite(reward):
            raise ConfigError(f"gymnasium env {self.spec.id!r} returned a non-finite reward {reward!r}")
        self.episode_return += reward
        self._last = {"env_reward": reward, "invalid_action": 0.0}
        self._gym_terminated = bool(terminated)
        self._gym_truncated = bool(truncated) and not terminated
        return [Message(role="user", content=self.observation_to_text(observation))], bool(terminated or truncated)

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        """`env_reward` (the gymnasium reward) and `invalid_action` of this step."""
        return dict(self._last)

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """`MultiTurnEnv.step`; a gymnasium truncation (e.g. TimeLimit) is reported as truncated."""
        result = await super().step(action)
        if self._gym_truncated and result.terminated:
            return result.model_copy(update={"terminated": False, "truncated": True})
        return result

    async def final_verdict(self) -> Verdict:
        """Status from the return; reward 0 here, the weighted `env_reward` steps add the return."""
        return return_verdict(self.episode_return, self._gym_terminated, self.turn, self.success_threshold)

    def close(self) -> None:
        """Close both gymnasium instances."""
        self.gym_env.close()
        if self.probe is not self.gym_env:
            self.probe.close()


def _action_parser(space: spaces.Space[Any], actions: Sequence[str] | None) -> tuple[Callable[[str], Any], str]:
    if isinstance(space, spaces.Text):
        if actions is not None:
            raise ConfigError("actions= is for Discrete action spaces; a Text action space takes the text itself")

        def text_action(content: str) -> str:
            text = content.strip()
            if text not in space:
                raise ValueError(f"the action must be {space.min_length} to {space.max_length} characters "
                                 f"from {space.characters!r}")
            return text

        return text_action, "Reply with the action text only."
    if isinstance(space, spaces.Discrete):
        if actions is None or len(actions) != int(space.n) or len(set(a.lower() for a in actions)) != len(actions):
            raise ConfigError(f"a Discrete({int(space.n)}) action space needs actions=[...] with {int(space.n)} "
                              "distinct names (action i is actions[i])")
        start = int(space.start)
        pattern = re.compile(r"\b(" + "|".join(re.escape(a) for a in actions) + r")\b", re.IGNORECASE)
        lookup = {a.lower(): i for i, a in enumerate(actions)}

        def discrete_action(content: str) -> int:
            found = pattern.findall(content)
            if not found:
                raise ValueError("no action named")
            return start + lookup[found[-1].lower()]

        return discrete_action, f"Valid actions: {', '.join(actions)}."
    raise ConfigError(f"unsupported action space {space!r}: from_gymnasium supports Text, "
                      "or Discrete with actions=[...]")


def from_gymnasium(
    env_or_id: gymnasium.Env[Any, Any] | str,
    *,
    env_id: str | None = None,
    size: int = 1000,
    seed: int = 0,
    max_turns: int | None = None,
    actions: Sequence[str] | None = None,
    observation_to_text: Callable[[Any], str] | None = None,
    instructions: str | None = None,
    success_threshold: float | None = None,
    reward_weights: dict[str, float] | None = None,
    make_kwargs: dict[str, Any] | None = None,
    reward_range: tuple[float, float] = (0.0, 1.0),
) -> GymTextEnv:
    """Wrap a text gymnasium environment as an rlvr environment (see the module docstring).

    Args:
        env_or_id: a gymnasium env instance (copied with `copy.deepcopy` for prompt generation)
            or a gymnasium id (made twice with `gymnasium.make(id, **make_kwargs)`).
        env_id: the rlvr id (`family/name-vN`); default `gym/<name>-v<version>` from the gymnasium id.
        size: number of tasks (seeds `seed .. seed + size - 1`).
        seed: first seed.
        max_turns: turn limit; default the gymnasium spec's `max_episode_steps`, else 100.
        actions: names of the `Discrete` actions, in index order.
        observation_to_text: turns a non-Text observation into text.
        instructions: optional system message before the first observation.
        success_threshold: return needed for a `correct` verdict (default: return > 0).
        reward_weights: extra step-component weights (`env_reward` weighs 1 unless given,
            e.g. `{"invalid_action": -0.1}`).
        make_kwargs: keyword arguments of `gymnasium.make` when an id is given.
        reward_range: bounds of the episode return (for `spec.reward_range`).

    Raises:
        ConfigError: unsupported spaces, missing `actions`/`observation_to_text`, bad options, or
            an instance that cannot be copied.
    """
    check_success_threshold(success_threshold)
    if isinstance(env_or_id, str):
        try:
            gym_env = gymnasium.make(env_or_id, **(make_kwargs or {}))
            probe = gymnasium.make(env_or_id, **(make_kwargs or {}))
        except gymnasium.error.Error as exc:
            raise ConfigError(f"gymnasium cannot make {env_or_id!r}: {exc}") from exc
    elif isinstance(env_or_id, gymnasium.Env):
        gym_env = env_or_id
        try:
            probe = copy.deepcopy(env_or_id)
        except Exception as exc:  # any failure to copy: ask for an id instead
            raise ConfigError(f"cannot copy the gymnasium env for prompt generation ({exc}); pass its id") from exc
    else:
        raise ConfigError(f"env_or_id must be a gymnasium.Env or a gymnasium id, got {type(env_or_id).__name__}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ConfigError(f"size must be a positive int, got {size!r}")
    obs_space = gym_env.observation_space
    if observation_to_text is None:
        if not isinstance(obs_space, spaces.Text):
            raise ConfigError(f"observation space {obs_space!r} is not Text; pass observation_to_text=<function>")
        observation_to_text = str
    parse_action, action_help = _action_parser(gym_env.action_space, actions)
    gym_spec = gym_env.spec
    name = re.sub(r"[^a-z0-9_.-]", "-", (gym_spec.name if gym_spec else type(gym_env.unwrapped).__name__).lower())
    rlvr_id = env_id or f"gym/{name}-v{gym_spec.version if gym_spec and gym_spec.version is not None else 0}"
    limit = max_turns or (gym_spec.max_episode_steps if gym_spec and gym_spec.max_episode_steps else 100)
    spec = EnvSpec(id=rlvr_id, description=f"gymnasium {gym_spec.id if gym_spec else name} (text)", max_turns=limit,
                   seeding="procedural", reward_range=reward_range,
                   dataset=f"gymnasium:{gym_spec.id if gym_spec else name}?seed={seed}&size={size}")
    return GymTextEnv(gym_env, probe, spec, size=size, seed=seed, observation_to_text=observation_to_text,
                      action_from_text=parse_action, action_help=action_help, instructions=instructions,
                      success_threshold=success_threshold, reward_weights=reward_weights)
