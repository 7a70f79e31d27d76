r"""`ReasoningGymVerifier`: score with a reasoning-gym generator's own `score_answer`.

For reasoning-gym tasks whose answers are not numbers (spelling, puzzles, logic), the generator
knows best how to grade. The verifier rebuilds the dataset from `(task, config, seed, size)` in
the worker process (cached there), looks the entry up by index, extracts the answer from the
response and calls `dataset.score_answer(answer, entry)`.

Reference format: `{"index": int, "answer": str}` (what `make_reasoning_gym` stores when
`verifier="reasoning_gym"`). A plain string reference is accepted and scored against a minimal
entry `{"answer": reference}`; generators whose `score_answer` needs the entry's metadata then
report an error verdict.

Answer extraction: the last `<answer>...</answer>` (reasoning-gym's convention), else the last
`\boxed{...}`, else the last non-empty line.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import Field

from rlvr.core.errors import ConfigError
from rlvr.core.types import Status, Verdict
from rlvr.verifiers.base import PooledVerifier, VerifierConfig
from rlvr.verifiers.wrappers import last_boxed

__all__ = ["ReasoningGymVerifier"]

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


class ReasoningGymConfig(VerifierConfig):
    """Which reasoning-gym dataset to rebuild for scoring. Frozen; unknown fields rejected."""

    task: str = Field(description="reasoning-gym generator name, e.g. 'spell_backward'.")
    dataset_config: dict[str, Any] = Field(default_factory=dict, description="Generator config (its dataclass fields).")
    seed: int = Field(default=0, description="Seed the dataset was generated with.")
    size: int = Field(default=1000, ge=1, description="Number of entries the dataset was generated with.")
    correct_threshold: float = Field(
        default=1.0, description="A score_answer result >= this is status 'correct'; lower is 'incorrect'."
    )


def extract_answer(response: str) -> str | None:
    r"""The final answer in `response`: last `<answer>` tag, else last `\boxed{}`, else last non-empty line."""
    tags = _ANSWER_TAG.findall(response)
    if tags:
        return str(tags[-1]).strip()
    boxed = last_boxed(response)
    if boxed is not None:
        return boxed
    lines = [line.strip() for line in response.strip().splitlines() if line.strip()]
    return lines[-1] if lines else None


@functools.lru_cache(maxsize=8)
def _dataset(task: str, config_json: str, seed: int, size: int) -> Any:
    import reasoning_gym

    return reasoning_gym.create_dataset(task, seed=seed, size=size, **json.loads(config_json))


def _entry_for(config: ReasoningGymConfig, reference: Any) -> tuple[Any, dict[str, Any]]:
    """Return (dataset, entry) for a reference; raise ValueError when they do not match."""
    ds = _dataset(config.task, json.dumps(config.dataset_config, sort_keys=True), config.seed, config.size)
    if isinstance(reference, dict):
        index = int(reference["index"])
        entry: dict[str, Any] = ds[index]
        if "answer" in reference and str(entry["answer"]) != str(reference["answer"]):
            raise ValueError(
                f"the rebuilt {config.task!r} dataset has answer {entry['answer']!r} at index {index}, but the "
                f"reference says {reference['answer']!r}: verifier (seed, size, config) differ from the task's"
            )
        return ds, entry
    return ds, {"question": "", "answer": str(reference), "metadata": {}}


def score_reasoning_gym(config: ReasoningGymConfig, response: str, reference: Any) -> Verdict:
    """Score one response with the generator's `score_answer`; a crash becomes an error verdict."""
    start = time.monotonic()
    try:
        ds, entry = _entry_for(config, reference)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return Verdict.error(f"bad reasoning-gym reference {reference!r}: {exc}", elapsed_s=time.monotonic() - start)
    answer = extract_answer(response)
    if answer is None:
        return Verdict(status="no_answer", reward=0.0, detail="empty response", elapsed_s=time.monotonic() - start)
    try:
        score = float(ds.score_answer(answer, entry))
    except Exception as exc:  # the generator's grader broke: error (masked), never a silent 0
        return Verdict.error(f"{config.task}.score_answer crashed: {type(exc).__name__}: {exc}",
                             extracted=answer, elapsed_s=time.monotonic() - start)
    status: Status = "correct" if score >= config.correct_threshold else "incorrect"
    return Verdict(
        status=status,
        reward=score,
        components={"score_answer": score},
        extracted=answer,
        detail=f"{config.task}.score_answer = {score:g}",
        elapsed_s=time.monotonic() - start,
    )


class ReasoningGymVerifier(PooledVerifier):
    """Verify with reasoning-gym's own grader for the generator `task`.

    Args:
        config: a `ReasoningGymConfig`, or None to build one from `overrides`.
        **overrides: fields of `ReasoningGymConfig` (`task`, `dataset_config`, `seed`, `size`,
            `timeout_s`, ...).

    Raises:
        ConfigError: if `task` is missing or not a registered reasoning-gym generator.

    Example:
        >>> v = ReasoningGymVerifier(task="spell_backward", size=4, scoring="inline")
        >>> v.verify("<answer>x</answer>", {"index": 0, "answer": v.answer(0)}).status
        'incorrect'
    """

    name: ClassVar[str] = "reasoning_gym"
    config_type: ClassVar[type[ReasoningGymConfig]] = ReasoningGymConfig
    config: ReasoningGymConfig

    def __init__(self, config: ReasoningGymConfig | None = None, **overrides: Any) -> None:
        if config is None and "task" not in overrides:
            raise ConfigError("ReasoningGymVerifier needs task= (a reasoning-gym generator name)")
        super().__init__(config, **overrides)
        _check_generator(self.config.task)

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """`score_reasoning_gym` bound to this config (picklable)."""
        return functools.partial(score_reasoning_gym, self.config)

    def reference_response(self, reference: Any) -> str:
        """`<answer>ANSWER</answer>` with the reference's answer."""
        answer = reference.get("answer") if isinstance(reference, dict) else reference
        return f"<answer>{answer}</answer>"

    def answer(self, index: int) -> str:
        """The reference answer of entry `index` (built in this process)."""
        ds = _dataset(self.config.task, json.dumps(self.config.dataset_config, sort_keys=True),
                      self.config.seed, self.config.size)
        return str(ds[index]["answer"])


def _check_generator(task: str) -> None:
    from reasoning_gym.factory import DATASETS

    if task not in DATASETS:
        import difflib

        close = difflib.get_close_matches(task, list(DATASETS), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"unknown reasoning-gym task {task!r}.{hint}")
