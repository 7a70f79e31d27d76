"""TRL rewards: `reward_funcs` for `GRPOTrainer` (the dataset is `rlvr.adapters.trl.data.to_dataset`).

Written against TRL 1.16 (`trl/trainer/grpo_trainer.py`), which calls every custom reward function
once per generation batch from `GRPOTrainer._calculate_rewards` as

```
reward_func(prompts=..., completions=..., completion_ids=..., **columns,
            trainer_state=..., log_extra=..., log_metric=...)
```

where `columns` holds every dataset column except `prompt` (one value per completion, already
repeated `num_generations` times). A `None` reward becomes NaN and is masked by TRL's nan-aware
baseline (`nanmean`/`nansum`); a completion every reward function scored None gets advantage 0.
`log_metric(name, value)` is averaged per logging step into the trainer's logs (it appears in
`trainer.state.log_history`), and `log_extra(column, values)` adds a column to the completions table.

Caveat with several reward functions: TRL sums the weighted rewards with `nansum`, so a None is
masked only when *every* reward function returned None for that completion. If the rlvr reward
says `error` (None) but a companion reward (format, length, ...) returns a number, TRL treats the
rlvr reward as 0 and trains on the companion's score alone. Wrap companions with
`mask_errors(*companions, like=rlvr_reward)` so they return None wherever the rlvr reward's verdict
was `error`, and list the rlvr reward first in `reward_funcs` (TRL calls them in order).

Metrics are logged per reward function as `rlvr/<reward name>/<status>` and
`rlvr/<reward name>/verify_s`; completion-table columns as `<reward name>/status` and
`<reward name>/extracted`, so two `VerifierReward`s never collide.

Example:
    >>> from trl import GRPOConfig, GRPOTrainer                                    # doctest: +SKIP
    >>> env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=500)  # doctest: +SKIP
    >>> trainer = GRPOTrainer(model="path/to/model", args=GRPOConfig(...),         # doctest: +SKIP
    ...                       train_dataset=to_dataset(env), reward_funcs=reward_funcs(env))

The multi-turn rewards (`EpisodeReward`, `RolloutReward`) live with the episodes, in `rlvr.adapters.trl.agent`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rlvr.adapters.trl.data import REFERENCE_COLUMN, require_trl
from rlvr.core.errors import AdapterError
from rlvr.core.metrics import status_fractions
from rlvr.core.types import Verdict

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__: list[str] = []


METRIC_PREFIX = "rlvr"
"""Metrics logged through TRL's `log_metric`: `rlvr/<reward name>/<status>` (fraction of the batch),
`rlvr/<reward name>/verify_s`, and for multi-turn rewards (`rlvr.adapters.trl.agent.EpisodeReward`,
`rlvr.adapters.trl.rollout.RolloutReward`) the episode metrics `rlvr/<reward name>/<key>` of
`rlvr.core.metrics.EPISODE_METRICS` (tool-call rate, tool calls, failed calls, turns)."""


logger = logging.getLogger(__name__)


# -- rewards --------------------------------------------------------------------------------
def completion_text(completion: Any) -> str:
    """The text of one TRL completion.

    Accepts the standard format (a string) and the conversational one (a list of messages, the
    last assistant message is the answer; its `content` may be a string or a list of
    `{"type": "text", "text": ...}` blocks). Anything else gives ''.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                return _content_text(message.get("content"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


class VerifierReward:
    """A TRL reward function backed by an rlvr environment's verifier.

    Called by `GRPOTrainer` with `(prompts, completions, **kwargs)`; reads the references from the
    `rlvr_reference` column written by `to_dataset`, scores the whole batch with
    `env.verifier.verify_batch` (worker processes with hard timeouts) and returns
    `list[float | None]`: None where the verdict is `error`, so TRL masks the sample. A reference
    that is not valid JSON gives an `error` verdict for that row (logged once), not a crash.

    With other reward functions next to this one, TRL masks a None only if they also return None:
    wrap them with `mask_errors(..., like=this_reward)`.

    Attributes:
        __name__: the name TRL logs rewards under (`rewards/<name>/mean`).
        last_verdicts: the verdicts of the latest call (for tests and debugging).
    """

    def __init__(self, env: Environment, *, workers: int | None = None, name: str | None = None) -> None:
        self.env = env
        self.workers = workers if workers is not None else max(1, min(4, os.cpu_count() or 1))
        self.__name__ = name or reward_name(env)
        self.last_verdicts: list[Verdict] = []
        self.last_texts: list[str] = []
        self.calls = 0
        self._warned_bad_reference = False

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        """Score `completions` (one per row of the batch) against the `rlvr_reference` column in `kwargs`."""
        references = self._references(kwargs, len(completions))
        if getattr(self.env.verifier, "wants_prompt", False):  # LLM judges read the question too
            from rlvr.verifiers.judge.config import judge_reference

            references = [r if isinstance(r, Verdict) else judge_reference(p, r)
                          for p, r in zip(prompts, references, strict=True)]
        texts = [completion_text(c) for c in completions]
        good = [i for i, r in enumerate(references) if not isinstance(r, Verdict)]
        start = time.monotonic()
        scored = self.env.verifier.verify_batch([(texts[i], references[i]) for i in good], workers=self.workers)
        elapsed = time.monotonic() - start
        verdicts: list[Verdict] = list(references)  # undecodable rows already hold their error verdict
        for i, verdict in zip(good, scored, strict=True):
            verdicts[i] = verdict
        self.last_verdicts = verdicts
        self.last_texts = texts
        self.calls += 1
        _log(self.__name__, verdicts, elapsed, kwargs.get("log_metric"), kwargs.get("log_extra"))
        return [v.reward for v in verdicts]

    def _references(self, kwargs: dict[str, Any], n: int) -> list[Any]:
        """Decoded references; an undecodable value becomes its row's error Verdict (masked)."""
        column = kwargs.get(REFERENCE_COLUMN)
        if column is None:
            raise AdapterError(f"reward function {self.__name__!r} needs a {REFERENCE_COLUMN!r} column in the "
                               f"dataset (got columns: {', '.join(sorted(kwargs)) or 'none'}); "
                               "build the dataset with rlvr.adapters.trl.to_dataset(env)")
        if len(column) != n:
            raise AdapterError(f"got {n} completions but {len(column)} references; TRL should pass one each")
        out: list[Any] = []
        for value in column:
            try:
                out.append(json.loads(value))
            except (TypeError, ValueError) as exc:
                detail = (f"the {REFERENCE_COLUMN!r} value {str(value)[:60]!r} is not a JSON string written by "
                          f"to_dataset: {exc}")
                if not self._warned_bad_reference:
                    self._warned_bad_reference = True
                    message = f"reward {self.__name__!r}: {detail}; such rows get an error verdict (masked)"
                    logger.warning(message)
                    warnings.warn(message, RuntimeWarning, stacklevel=3)
                out.append(Verdict.error(detail))
        return out

    def __repr__(self) -> str:
        return f"<VerifierReward {self.__name__} env={self.env.spec.id} workers={self.workers}>"


def reward_name(env: Environment) -> str:
    """The name TRL logs the reward under (`rewards/<name>/mean`): e.g. `rlvr_math_reasoning_gym_v1`."""
    return "rlvr_" + re.sub(r"[^0-9a-zA-Z]+", "_", env.spec.id).strip("_")


def _log(
    name: str,
    verdicts: Sequence[Verdict],
    elapsed_s: float,
    log_metric: Callable[[str, float], None] | None,
    log_extra: Callable[[str, list[Any]], None] | None,
    episodes: dict[str, float] | None = None,
) -> None:
    """Report status fractions, verification time and the `episodes` metrics via TRL's `log_metric`/`log_extra`."""
    if log_metric is not None and verdicts:
        for status, fraction in status_fractions(v.status for v in verdicts).items():
            log_metric(f"{METRIC_PREFIX}/{name}/{status}", fraction)
        log_metric(f"{METRIC_PREFIX}/{name}/verify_s", elapsed_s)
        for key, value in (episodes or {}).items():
            log_metric(f"{METRIC_PREFIX}/{name}/{key}", value)
    if log_extra is not None:
        log_extra(f"{name}/status", [v.status for v in verdicts])
        log_extra(f"{name}/extracted", [v.extracted for v in verdicts])


class _MaskedReward:
    """A companion reward function that returns None wherever `like`'s latest verdict was `error`."""

    def __init__(self, fn: Callable[..., list[float | None]], like: VerifierReward) -> None:
        self.fn = fn
        self.like = like
        self.__name__ = getattr(fn, "__name__", None) or type(fn).__name__

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        rewards = list(self.fn(prompts=prompts, completions=completions, **kwargs))
        verdicts, texts = self.like.last_verdicts, self.like.last_texts
        if len(verdicts) != len(rewards) or texts != [completion_text(c) for c in completions]:
            like = self.like.__name__
            raise AdapterError(f"mask_errors: {self.__name__!r} was called before {like!r} scored this batch; "
                               f"list {like!r} before it in reward_funcs (TRL calls them in order)")
        return [None if v.status == "error" else r for r, v in zip(rewards, verdicts, strict=True)]

    def __repr__(self) -> str:
        return f"<mask_errors {self.__name__} like={self.like.__name__}>"


def mask_errors(*funcs: Callable[..., list[float | None]], like: VerifierReward) -> list[_MaskedReward]:
    """Wrap companion reward functions so they return None wherever `like` gave an `error` verdict.

    TRL sums weighted rewards with `nansum` and masks a completion only when *every* reward function
    returned None, so without this wrapper an rlvr `error` (None) next to a numeric format reward
    trains on the format reward alone. Put `like` before the wrapped functions in `reward_funcs`:

    >>> rlvr_reward = VerifierReward(env)                                           # doctest: +SKIP
    >>> reward_funcs = [rlvr_reward, *mask_errors(format_reward, like=rlvr_reward)]  # doctest: +SKIP

    Raises:
        AdapterError: at call time, if `like` has not scored the same batch first.
    """
    return [_MaskedReward(fn, like) for fn in funcs]


def reward_funcs(env: Environment, *, workers: int | None = None, name: str | None = None) -> list[VerifierReward]:
    """TRL `reward_funcs` for `env`: one `VerifierReward` scoring with the env's verifier.

    To add other reward functions, list them after this one and wrap them with
    `mask_errors(*others, like=rewards[0])`: TRL masks a None reward only when every reward function
    returned None for that completion, so an unwrapped companion would turn rlvr `error` verdicts
    into training signal.

    Args:
        env: the environment whose verifier scores completions.
        workers: verifier worker processes (default: min(4, CPU count)).
        name: the reward's logging name (default `rlvr_<env id>`, e.g. `rlvr_math_reasoning_gym_v1`).

    Raises:
        MissingExtraError: if trl is not installed.
    """
    require_trl()
    return [VerifierReward(env, workers=workers, name=name)]
