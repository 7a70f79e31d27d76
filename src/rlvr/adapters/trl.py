"""TRL adapter: an rlvr environment as a `datasets.Dataset` plus `reward_funcs` for `GRPOTrainer`.

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

Example:
    >>> from trl import GRPOConfig, GRPOTrainer                                    # doctest: +SKIP
    >>> env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=500)  # doctest: +SKIP
    >>> trainer = GRPOTrainer(model="path/to/model", args=GRPOConfig(...),         # doctest: +SKIP
    ...                       train_dataset=to_dataset(env), reward_funcs=reward_funcs(env))
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, get_args

from rlvr.core.errors import AdapterError, MissingExtraError
from rlvr.core.types import Status, Task, Verdict

if TYPE_CHECKING:
    from datasets import Dataset

    from rlvr.environments.base import Environment

__all__ = [
    "METRIC_PREFIX",
    "STATUSES",
    "VerifierReward",
    "completion_text",
    "require_trl",
    "reward_funcs",
    "task_row",
    "to_dataset",
]

STATUSES: tuple[str, ...] = get_args(Status)
"""Verdict statuses, in the order they are logged."""

METRIC_PREFIX = "rlvr"
"""Metrics logged through TRL's `log_metric`: `rlvr/<status>` (fraction of the batch) and `rlvr/verify_s`."""

REFERENCE_COLUMN = "reference"
TASK_ID_COLUMN = "task_id"


def require_trl() -> None:
    """Raise `MissingExtraError` (naming `pip install 'rlvr[trl]'`) unless trl and datasets import."""
    for package in ("trl", "datasets"):
        try:
            __import__(package)
        except ImportError as exc:
            raise MissingExtraError(package, "trl") from exc


# -- dataset --------------------------------------------------------------------------------
def task_row(task: Task) -> dict[str, Any]:
    """One dataset row for `task`: conversational `prompt`, `task_id`, JSON-encoded `reference`.

    The reference is stored as a JSON string so any ground truth (a string, a dict, a list of
    tests) survives Arrow's column typing; `reward_funcs` decodes it.

    Raises:
        AdapterError: if a prompt message carries tool calls (not representable in a
            single-turn TRL prompt) or the reference is not JSON-serialisable.
    """
    prompt = []
    for message in task.prompt:
        if message.tool_calls or message.tool_call_id is not None:
            raise AdapterError(f"task {task.id!r}: single-turn TRL prompts hold role/content only; "
                               "tool-call messages need the multi-turn adapter")
        prompt.append({"role": message.role, "content": message.content})
    try:
        reference = json.dumps(task.reference, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"task {task.id!r}: reference is not JSON-serialisable: {exc}") from exc
    return {"prompt": prompt, TASK_ID_COLUMN: task.id, REFERENCE_COLUMN: reference}


def to_dataset(env: Environment, *, limit: int | None = None) -> Dataset:
    """The environment's tasks as a TRL dataset (conversational `prompt` + `task_id` + `reference`).

    Args:
        env: an environment with a `tasks` sequence.
        limit: keep only the first `limit` tasks (procedural envs generate tasks lazily, so a
            limit avoids generating rows a short run never reads).

    Raises:
        MissingExtraError: if `datasets`/`trl` are not installed.
        AdapterError: if the environment has no tasks or a task cannot be a row.
    """
    require_trl()
    from datasets import Dataset

    n = len(env.tasks) if limit is None else min(limit, len(env.tasks))
    if n <= 0:
        raise AdapterError(f"environment {env.spec.id!r} gave no tasks (limit={limit}); check its arguments")
    rows = [task_row(env.tasks[i]) for i in range(n)]
    return Dataset.from_list(rows)


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
    `reference` column written by `to_dataset`, scores the whole batch with
    `env.verifier.verify_batch` (worker processes with hard timeouts) and returns
    `list[float | None]`: None where the verdict is `error`, so TRL masks the sample.

    Attributes:
        __name__: the name TRL logs rewards under (`rewards/<name>/mean`).
        last_verdicts: the verdicts of the latest call (for tests and debugging).
    """

    def __init__(self, env: Environment, *, workers: int | None = None, name: str | None = None) -> None:
        self.env = env
        self.workers = workers if workers is not None else max(1, min(4, os.cpu_count() or 1))
        self.__name__ = name or _default_name(env)
        self.last_verdicts: list[Verdict] = []
        self.calls = 0

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        """Score `completions` (one per row of the batch) against the `reference` column in `kwargs`."""
        references = self._references(kwargs, len(completions))
        texts = [completion_text(c) for c in completions]
        start = time.monotonic()
        verdicts = self.env.verifier.verify_batch(list(zip(texts, references, strict=True)), workers=self.workers)
        elapsed = time.monotonic() - start
        self.last_verdicts = verdicts
        self.calls += 1
        _log(verdicts, elapsed, kwargs.get("log_metric"), kwargs.get("log_extra"))
        return [v.reward for v in verdicts]

    def _references(self, kwargs: dict[str, Any], n: int) -> list[Any]:
        column = kwargs.get(REFERENCE_COLUMN)
        if column is None:
            raise AdapterError(f"reward function {self.__name__!r} needs a {REFERENCE_COLUMN!r} column in the "
                               f"dataset (got columns: {', '.join(sorted(kwargs)) or 'none'}); "
                               "build the dataset with rlvr.adapters.trl.to_dataset(env)")
        if len(column) != n:
            raise AdapterError(f"got {n} completions but {len(column)} references; TRL should pass one each")
        try:
            return [json.loads(r) for r in column]
        except (TypeError, ValueError) as exc:
            raise AdapterError(f"the {REFERENCE_COLUMN!r} column must hold JSON strings written by to_dataset: "
                               f"{exc}") from exc

    def __repr__(self) -> str:
        return f"<VerifierReward {self.__name__} env={self.env.spec.id} workers={self.workers}>"


def _default_name(env: Environment) -> str:
    return "rlvr_" + re.sub(r"[^0-9a-zA-Z]+", "_", env.spec.id).strip("_")


def _log(
    verdicts: Sequence[Verdict],
    elapsed_s: float,
    log_metric: Callable[[str, float], None] | None,
    log_extra: Callable[[str, list[Any]], None] | None,
) -> None:
    """Report status fractions and verification time through TRL 1.16's `log_metric`/`log_extra`."""
    if log_metric is not None and verdicts:
        counts: Counter[str] = Counter(v.status for v in verdicts)
        for status in STATUSES:
            log_metric(f"{METRIC_PREFIX}/{status}", counts.get(status, 0) / len(verdicts))
        log_metric(f"{METRIC_PREFIX}/verify_s", elapsed_s)
    if log_extra is not None:
        log_extra("status", [v.status for v in verdicts])
        log_extra("extracted", [v.extracted for v in verdicts])


def reward_funcs(env: Environment, *, workers: int | None = None, name: str | None = None) -> list[VerifierReward]:
    """TRL `reward_funcs` for `env`: one `VerifierReward` scoring with the env's verifier.

    Args:
        env: the environment whose verifier scores completions.
        workers: verifier worker processes (default: min(4, CPU count)).
        name: the reward's logging name (default `rlvr_<env id>`, e.g. `rlvr_math_reasoning_gym_v1`).

    Raises:
        MissingExtraError: if trl is not installed.
    """
    require_trl()
    return [VerifierReward(env, workers=workers, name=name)]
