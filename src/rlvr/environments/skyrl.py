"""skyrl-gym environments (PyPI `skyrl-gym`, extra `rlvr[skyrl]`) as rlvr environments, in-process.

`from_skyrl_gym(env_class, rows, ...)` wraps SkyRL's environment contract as an rlvr `MultiTurnEnv`:

- data: SkyRL dataset rows (a list of dicts, or a `.jsonl`/`.json`/`.parquet` path), each
  `{"data_source", "prompt": [chat messages], "env_class", "reward_spec": {"method", "ground_truth"},
  "extra_info": {...}}`. Like SkyRL's own dataset, a row minus `prompt` and `env_class` is the
  env's `extras`; it becomes `Task.reference` (`{"env_class": ..., "extras": ...}`), the prompt
  becomes `Task.prompt`. Task ids: the row's `uid` or `id`, else `{data_source}-{extra_info.index}`,
  else `{data_source}-{position}`; they must be unique.
- episode: `reset` builds a fresh skyrl env for the task (`skyrl_gym.make(env_class,
  env_config=..., extras=<a deep copy of the task's extras>)`, or the `Env` subclass itself) and
  calls its `init(prompt)`; each assistant message's text is `step(text)`; the step's
  `observations` are the env's answer messages (role `user` or `tool`), its `reward` is the step
  component `env_reward` (weight 1, so the rewards sum to the return), its `done` ends the episode
  (rlvr's `max_turns` cuts it otherwise, as `truncated`). The skyrl env's `close()` is called when
  the episode ends (SQL envs hold database handles), on the next `reset`, and on `close()`.
- verdict: the one rule of return-scored wrapped environments (`rlvr.environments.external`):
  `correct` when the skyrl env ended the episode with a return >= `success_threshold` (default:
  return > 0). A skyrl env that raises in its constructor, `init` or `step`, returns a reward that
  is not a finite number, or observations that are not chat messages, ends the episode with an
  `error` verdict (reward None: masked, never a 0).

What the model can and cannot touch: only `step(text)` sees the model's text; the ground truth
lives in the task's extras, deep-copied into each episode's env, so nothing the model writes can
change it or the reward path. rlvr wraps skyrl's scorers, it does not fix them; their quirks are
the env's rules. In skyrl-gym 0.4's gsm8k scorer (`envs/gsm8k/utils.py`, `method="strict"`):
the FIRST `#### <number>` in the text is the answer (a later correction does not count); commas
are deleted inside the number, so `#### 1,8` passes for a ground truth of 18 (false pass); the
comparison is of strings, so `#### 18.0` or `#### 18.` fails for 18, and the ground truth must
be written the way the regex extracts it. `gsm8k_multi_turn` pays a format score (0.2 / max_turns
per turn) for any well-formed wrong answer, so its return is > 0 without one right answer: pass
`success_threshold=1.0` there (as `skyrl/gsm8k-v1` does) or the default rule calls a format-only
episode correct.

Registered ids: `skyrl/env-v1` (any skyrl env over a rows file: `env_class=`, `rows=PATH`,
`env_config=`) and `skyrl/gsm8k-v1` (`rlvr.environments.skyrl_data`: skyrl's gsm8k env over
GSM8K-format rows, or offline reasoning-gym arithmetic converted to SkyRL rows).
"""

from __future__ import annotations

import copy
import importlib
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError, MissingExtraError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.external import ReturnVerifier, check_success_threshold, return_verdict
from rlvr.environments.loaders import Rows, load_rows
from rlvr.environments.multi_turn import MultiTurnEnv

__all__ = ["SkyRLEnv", "from_skyrl_gym", "make_skyrl_env"]

log = logging.getLogger(__name__)

GSM8K_CLASSES = frozenset({"gsm8k", "gsm8k_multi_turn"})
_PROMPT_ROLES = frozenset({"system", "user", "assistant"})
_ROW_FIX = ("a SkyRL row is {'data_source': str, 'prompt': [{'role': 'user', 'content': str}, ...], "
            "'env_class': str, 'reward_spec': {'method': 'rule', 'ground_truth': ...}, 'extra_info': {...}}")


def _skyrl_gym() -> Any:
    try:
        return importlib.import_module("skyrl_gym")  # untyped, and absent from the core install
    except ImportError as exc:
        raise MissingExtraError("skyrl-gym", "skyrl") from exc


def _env_config(env_config: Any) -> Any:
    """A dict becomes an OmegaConf `DictConfig` (what SkyRL passes; its SQL env reads attributes)."""
    if env_config is None or not isinstance(env_config, Mapping):
        return env_config
    from omegaconf import OmegaConf  # a dependency of skyrl-gym

    return OmegaConf.create(dict(env_config))


class SkyRLEnv(MultiTurnEnv):
    """An rlvr `MultiTurnEnv` over skyrl-gym environments; build it with `from_skyrl_gym`.

    Attributes:
        builder: builds one skyrl env: `builder(env_class_name, extras) -> skyrl_gym.Env`.
        skyrl_env: the current episode's skyrl env (None before `reset` and once closed).
        episode_return: sum of the skyrl rewards of the current episode.
        success_threshold: return needed for `correct` (None: return > 0).
    """

    def __init__(self, tasks: Sequence[Task], spec: EnvSpec, builder: Callable[[str, dict[str, Any]], Any], *,
                 success_threshold: float | None,
                 reference_actions: Callable[[dict[str, Any]], Sequence[str] | None] | None) -> None:
        super().__init__(tasks, ReturnVerifier("a skyrl-gym environment"), spec, reward_weights={"env_reward": 1.0})
        self.builder = builder
        self.success_threshold = success_threshold
        self.oracle = reference_actions
        self.skyrl_env: Any = None
        self.episode_return = 0.0
        self._error: str | None = None
        self._terminated = False
        self._last_reward = 0.0

    def _close_skyrl(self) -> None:
        env, self.skyrl_env = self.skyrl_env, None
        if env is None:
            return
        try:
            env.close()
        except Exception as exc:  # the episode is already graded; a failing close must not change it
            log.warning("skyrl env %s: close() raised %s: %s", self.spec.id, type(exc).__name__, exc)

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Pose the task: build a fresh skyrl env with the task's extras and call its `init(prompt)`.

        A skyrl env that fails here is not raised: the episode's first step ends it with an `error` verdict.
        """
        self._close_skyrl()
        messages, info = await super().reset(task, seed)
        assert self.task is not None
        self.episode_return, self._error, self._terminated, self._last_reward = 0.0, None, False, 0.0
        reference = self.task.reference
        stage = "construction"
        try:
            self.skyrl_env = self.builder(reference["env_class"], copy.deepcopy(reference["extras"]))
            stage = "init"
            prompt, _ = self.skyrl_env.init([m.to_openai() for m in messages])
            first = _as_messages(prompt)
        except Exception as exc:  # a broken env is this episode's error verdict, never a crash of the run
            self._error = f"skyrl env {reference['env_class']!r} failed in {stage}: {type(exc).__name__}: {exc}"
            return messages, info
        if first != messages:  # init may rewrite the prompt (e.g. add a system message): that is the episode's
            self.messages = list(first)
        return list(first), info

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """`step(text)` of the skyrl env: its observations, and its `done`; a failure ends the episode."""
        self._last_reward = 0.0
        if self._error is not None:
            return [], True
        try:
            output = self.skyrl_env.step(action.content)
            reward = float(output["reward"])
            if not math.isfinite(reward):
                raise ValueError(f"reward {output['reward']!r} is not finite")
            observation = _as_messages(output.get("observations") or [], observation=True)
            done = bool(output["done"])
        except Exception as exc:  # raising, a non-finite reward or a malformed output: error verdict
            assert self.task is not None
            self._error = f"skyrl env {self.task.reference['env_class']!r} failed in step: {type(exc).__name__}: {exc}"
            return [], True
        self._last_reward = reward
        self.episode_return += reward
        self._terminated = done
        return observation, done

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        """`env_reward`: the skyrl reward of this step (weight 1)."""
        return {"env_reward": self._last_reward}

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """`MultiTurnEnv.step`; the skyrl env is closed when the episode ends."""
        try:
            result = await super().step(action)
        except BaseException:
            self._close_skyrl()
            raise
        if result.terminated or result.truncated:
            self._close_skyrl()
        return result

    async def final_verdict(self) -> Verdict:
        """`error` if the skyrl env broke; else the return rule (`return_verdict`)."""
        if self._error is not None:
            return Verdict.error(self._error)
        return return_verdict(self.episode_return, self._terminated, self.turn, self.success_threshold)

    def reference_actions(self, task: Task) -> list[Message] | None:
        """The oracle's messages: `reference_actions(extras)` of `from_skyrl_gym` (gsm8k: `#### <ground truth>`)."""
        if self.oracle is None:
            return None
        texts = self.oracle(copy.deepcopy(task.reference["extras"]))
        return None if texts is None else [Message(role="assistant", content=t) for t in texts]

    def episode_copy(self) -> SkyRLEnv:
        """`Environment.episode_copy` that does not share the original's open skyrl env."""
        clone = super().episode_copy()
        assert isinstance(clone, SkyRLEnv)
        clone.skyrl_env = None
        return clone

    def close(self) -> None:
        """Close the current skyrl env, if any (the verifier holds no resources)."""
        self._close_skyrl()
        super().close()


def _as_messages(items: Any, *, observation: bool = False) -> list[Message]:
    """The skyrl env's message dicts as `Message`s (observations: role `user` unless `tool`); ValueError if bad."""
    if not isinstance(items, list | tuple):
        raise ValueError(f"expected a list of chat messages, got {type(items).__name__}")
    out = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
            raise ValueError(f"expected a chat message dict with string content, got {item!r:.200}")
        role = item.get("role", "user")
        if observation:
            role = "tool" if role == "tool" else "user"
        out.append(Message(role=role, content=item["content"]))
    return out


def _gsm8k_oracle(extras: dict[str, Any]) -> list[str]:
    return [f"#### {extras['reward_spec']['ground_truth']}"]


# -- rows ------------------------------------------------------------------------------------------
def _row_id(row: dict[str, Any], position: int) -> str:
    for key in ("uid", "id"):
        if isinstance(row.get(key), str | int) and not isinstance(row.get(key), bool):
            return str(row[key])
    source = row.get("data_source") or "skyrl"
    info = row.get("extra_info")
    index = info.get("index") if isinstance(info, Mapping) else None
    if isinstance(index, str | int) and not isinstance(index, bool):
        return f"{source}-{index}"
    return f"{source}-{position}"


def _check_row(row: Any, where: str, env_class: str | None, by_id: bool) -> str:
    """The row's env class name; DataError naming the field and the fix for a malformed row.

    `env_class` wraps every row (a row's own `env_class` must then match it when `by_id`, i.e. it
    is a skyrl-gym id, not an `Env` subclass); None uses each row's own.
    """
    if not isinstance(row, Mapping):
        raise DataError(f"{where}: a SkyRL row must be a JSON object, got {type(row).__name__}; {_ROW_FIX}")
    prompt = row.get("prompt")
    if not isinstance(prompt, list | tuple) or not prompt:
        raise DataError(f"{where}: field 'prompt' must be a non-empty list of chat messages, got "
                        f"{type(prompt).__name__}; {_ROW_FIX}")
    for k, m in enumerate(prompt):
        if not isinstance(m, Mapping) or m.get("role") not in _PROMPT_ROLES or not isinstance(m.get("content"), str):
            raise DataError(f"{where}: field 'prompt[{k}]' must be {{'role': 'system'|'user'|'assistant', "
                            f"'content': str}}, got {m!r:.200}")
    spec = row.get("reward_spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise DataError(f"{where}: field 'reward_spec' must be an object like {{'method': 'rule', "
                        f"'ground_truth': ...}}, got {type(spec).__name__}")
    own = row.get("env_class")
    if own is not None and not isinstance(own, str):
        raise DataError(f"{where}: field 'env_class' must be a skyrl-gym env id (str), got {type(own).__name__}")
    name = env_class or own
    if name is None:
        raise DataError(f"{where}: missing field 'env_class'; add it to the row or pass env_class= "
                        "(a skyrl-gym id such as 'gsm8k')")
    if by_id and env_class is not None and own is not None and own != env_class:
        raise DataError(f"{where}: field 'env_class' is {own!r} but the environment wraps {env_class!r}; "
                        "fix the row or pass env_class=None to use each row's own env_class")
    if name in GSM8K_CLASSES and (spec is None or spec.get("ground_truth") is None):
        raise DataError(f"{where}: missing field 'reward_spec.ground_truth' (skyrl's {name} env scores against "
                        "it); add 'reward_spec': {'method': 'rule', 'ground_truth': '<answer>'}")
    return name


def _tasks(rows: Rows, env_class: str | None, by_id: bool) -> list[Task]:
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for i, row in enumerate(rows):
        where = rows.where(i)
        name = _check_row(row, where, env_class, by_id)
        task_id = _row_id(row, i)
        if task_id in seen:
            raise DataError(f"{where}: task id {task_id!r} repeats the one of {seen[task_id]}; give each row "
                            "a unique 'uid' (or unique extra_info.index per data_source)")
        seen[task_id] = where
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
        prompt = tuple(Message(role=m["role"], content=m["content"]) for m in row["prompt"])
        tasks.append(Task(id=task_id, prompt=prompt, reference={"env_class": name, "extras": extras},
                          metadata={"data_source": row.get("data_source")}))
    return tasks


def _load(rows: Sequence[Mapping[str, Any]] | str | Path) -> Rows:
    if isinstance(rows, str | Path):
        return load_rows(path=rows)
    if isinstance(rows, Rows):
        return rows
    if not isinstance(rows, Sequence):
        raise ConfigError(f"rows must be a list of SkyRL row dicts or a .jsonl/.json/.parquet path, "
                          f"got {type(rows).__name__}")
    return Rows(list(rows), "rows", [f"rows[{i}]" for i in range(len(rows))])  # type: ignore[arg-type]


# -- the builder -----------------------------------------------------------------------------------
def _builder(env_class: Any, env_config: Any) -> tuple[Callable[[str, dict[str, Any]], Any], str | None, str]:
    """(build(name, extras), the fixed class name or None, a display name) for a skyrl id, class, or None."""
    skyrl_gym = _skyrl_gym()
    config = _env_config(env_config)
    if isinstance(env_class, type):
        if not issubclass(env_class, skyrl_gym.Env):
            raise ConfigError(f"env_class {env_class.__name__} is not a skyrl_gym.Env subclass")
        cls = env_class

        def build_class(name: str, extras: dict[str, Any]) -> Any:
            return cls(env_config=config, extras=extras)

        return build_class, cls.__name__, cls.__name__
    if env_class is not None and not isinstance(env_class, str):
        raise ConfigError(f"env_class must be a skyrl-gym id (str), a skyrl_gym.Env subclass or None, "
                          f"got {type(env_class).__name__}")
    known = set(skyrl_gym.envs.registration.registry)
    if env_class is not None and env_class not in known:
        raise ConfigError(f"skyrl-gym has no env {env_class!r}; registered: {', '.join(sorted(known))}")

    def build_id(name: str, extras: dict[str, Any]) -> Any:
        return skyrl_gym.make(name, env_config=config, extras=extras)

    return build_id, env_class, env_class or "mixed"


def from_skyrl_gym(
    env_class: str | type | None,
    rows: Sequence[Mapping[str, Any]] | str | Path,
    *,
    env_config: Mapping[str, Any] | Any | None = None,
    env_id: str | None = None,
    max_turns: int = 16,
    success_threshold: float | None = None,
    reference_actions: Callable[[dict[str, Any]], Sequence[str] | None] | None = None,
    reward_range: tuple[float, float] = (0.0, 1.0),
    limit: int | None = None,
    check: bool = True,
) -> SkyRLEnv:
    """Wrap skyrl-gym environments over SkyRL dataset rows as an rlvr environment (module docstring).

    Args:
        env_class: a skyrl-gym registered id ('gsm8k', 'gsm8k_multi_turn', 'text2sql', ...), a
            `skyrl_gym.Env` subclass (built as `cls(env_config=..., extras=...)`), or None to use
            each row's own `env_class`.
        rows: SkyRL rows, or a `.jsonl`/`.json`/`.parquet` file of them.
        env_config: the skyrl env's config (SkyRL's `environment.skyrl_gym.<env_class>` section); a
            dict is passed as an OmegaConf `DictConfig`.
        env_id: the rlvr id (`family/name-vN`); default `skyrl/<env_class>-v1`.
        max_turns: rlvr's turn limit (the skyrl env usually ends episodes itself, with `done`).
        success_threshold: return needed for `correct` (default: return > 0).
        reference_actions: `fn(extras) -> [assistant texts]` that solve a task (the `oracle` policy);
            default for gsm8k / gsm8k_multi_turn: `["#### <ground_truth>"]`, none otherwise.
        reward_range: bounds of the episode return (for `spec.reward_range`).
        limit: keep the first `limit` rows.
        check: build (and close) the first row's skyrl env now, so a missing database or a config
            the env rejects fails here rather than as error verdicts in every episode.

    Raises:
        MissingExtraError: skyrl-gym is not installed (`pip install 'rlvr[skyrl]'`).
        ConfigError: unknown env class, a bad option, or a first row's env that cannot be built.
        DataError: a malformed row (the message names the row, the field and the fix), or a
            missing rows file.
    """
    build, fixed, display = _builder(env_class, env_config)
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ConfigError(f"max_turns must be an int >= 1, got {max_turns!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be an int >= 1 or None, got {limit!r}")
    check_success_threshold(success_threshold)
    loaded = _load(rows)
    if limit is not None:
        loaded = Rows(loaded[:limit], loaded.source, loaded.locations[:limit])
    tasks = _tasks(loaded, fixed, by_id=not isinstance(env_class, type))
    if not tasks:
        raise DataError(f"no SkyRL rows in {loaded.source}; {_ROW_FIX}")
    if check:
        _check_first(build, tasks[0], loaded.where(0))
    if reference_actions is None and fixed in GSM8K_CLASSES:
        reference_actions = _gsm8k_oracle
    slug = re.sub(r"[^a-z0-9_.-]", "-", display.lower())
    spec = EnvSpec(id=env_id or f"skyrl/{slug}-v1", description=f"skyrl-gym {display} (in-process)",
                   max_turns=max_turns, reward_range=reward_range, dataset=f"skyrl:{loaded.source}")
    return SkyRLEnv(tasks, spec, build, success_threshold=success_threshold,
                    reference_actions=reference_actions)


def _check_first(build: Callable[[str, dict[str, Any]], Any], task: Task, where: str) -> None:
    name = task.reference["env_class"]
    try:
        env = build(name, copy.deepcopy(task.reference["extras"]))
    except Exception as exc:  # skyrl envs assert on rows and raise anything on config: name both
        raise ConfigError(f"skyrl env {name!r} cannot be built for {where}: {type(exc).__name__}: {exc} "
                          "(check env_config and the row's fields)") from exc
    try:
        env.close()
    except Exception as exc:  # a close that fails now would fail at every episode end: say so
        raise ConfigError(f"skyrl env {name!r}: close() raised {type(exc).__name__}: {exc}") from exc


def make_skyrl_env(
    env_class: str | None = None,
    rows: str | None = None,
    env_config: dict[str, Any] | None = None,
    max_turns: int = 16,
    success_threshold: float | None = None,
    limit: int | None = None,
    reward_range: Sequence[float] = (0.0, 1.0),
) -> SkyRLEnv:
    """`skyrl/env-v1`: any skyrl-gym env over a SkyRL rows file (CLI: `-a env_class=gsm8k -a rows=PATH`).

    Args:
        env_class: a skyrl-gym id; None: each row's own `env_class`.
        rows: the rows file (`.jsonl`/`.json`/`.parquet`).
        env_config: the skyrl env's config (a JSON object on the CLI: `-a 'env_config={"db_path": "..."}'`).
        max_turns: rlvr's turn limit.
        success_threshold: return needed for `correct` (default: return > 0).
        limit: keep the first `limit` rows.
        reward_range: bounds of the episode return, `[lo, hi]` (skyrl's text2sql gives -1 for a
            badly formatted answer: `-a 'reward_range=[-1, 1]'`).
    """
    if rows is None:
        raise ConfigError("skyrl/env-v1 needs rows=PATH (a .jsonl/.json/.parquet file of SkyRL rows; "
                          "CLI: -a rows=PATH)")
    if env_config is not None and not isinstance(env_config, Mapping):
        raise ConfigError(f"env_config must be a JSON object, got {type(env_config).__name__}")
    bounds = tuple(reward_range)
    if len(bounds) != 2 or not all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds):
        raise ConfigError(f"reward_range must be two numbers [lo, hi], got {reward_range!r}")
    return from_skyrl_gym(env_class, rows, env_config=env_config, max_turns=max_turns,
                          success_threshold=success_threshold, limit=limit,
                          reward_range=(float(bounds[0]), float(bounds[1])),
                          env_id="skyrl/env-v1")
