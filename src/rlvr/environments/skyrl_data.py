"""SkyRL rows from rlvr's own data, and `skyrl/gsm8k-v1`: skyrl-gym's gsm8k envs (extra `rlvr[skyrl]`).

SkyRL rows (`rlvr.environments.skyrl`) are written as SkyRL's gsm8k dataset script writes them:
the question with `GSM8K_INSTRUCTION` appended, `reward_spec.ground_truth` the final number as
skyrl's scorer extracts it (commas removed), `extra_info.index` the position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlvr.core.errors import DataError
from rlvr.core.types import Task
from rlvr.environments.loaders import Rows, load_rows, require_field
from rlvr.environments.skyrl import SkyRLEnv, from_skyrl_gym

__all__ = ["make_skyrl_gsm8k"]

GSM8K_INSTRUCTION = 'Let\'s think step by step and output the final answer after "####".'
"""The instruction SkyRL's gsm8k dataset script appends to each question (its scorer reads `#### N`)."""


def skyrl_rows(tasks: Sequence[Task], *, env_class: str = "gsm8k", data_source: str = "rlvr",
               instruction: str = GSM8K_INSTRUCTION) -> list[dict[str, Any]]:
    """SkyRL rows of rlvr tasks whose reference is the answer string (e.g. `math/reasoning-gym-v1`'s numeric ones).

    The prompt is the task's last user message with `instruction` appended, as SkyRL's gsm8k
    dataset script writes it; `extra_info.index` is the position, `extra_info.rlvr_task_id` the id.
    """
    rows = []
    for i, task in enumerate(tasks):
        question = next(m.content for m in reversed(task.prompt) if m.role == "user")
        rows.append({"data_source": data_source,
                     "prompt": [{"role": "user", "content": f"{question} {instruction}".strip()}],
                     "env_class": env_class, "reward_spec": {"method": "rule", "ground_truth": str(task.reference)},
                     "extra_info": {"index": i, "rlvr_task_id": task.id}})
    return rows


def _gsm8k_file_rows(path: str | Path, env_class: str) -> Rows:
    """SkyRL rows of a GSM8K-format file (`question`, `answer` ending in `#### N`), as SkyRL's gsm8k script."""
    source = load_rows(path=path)
    out = []
    for i, row in enumerate(source):
        where = source.where(i)
        question = require_field(row, "question", where)
        answer = require_field(row, "answer", where)
        if "####" not in answer:
            raise DataError(f"{where}: field 'answer' has no '#### <number>' final answer (GSM8K format)")
        truth = answer.split("####")[-1].strip().replace(",", "")
        out.append({"data_source": "openai/gsm8k",
                    "prompt": [{"role": "user", "content": f"{question} {GSM8K_INSTRUCTION}"}],
                    "env_class": env_class, "reward_spec": {"method": "rule", "ground_truth": truth},
                    "extra_info": {"index": i, "question": question}})
    return Rows(out, source.source, list(source.locations))


def make_skyrl_gsm8k(
    path: str | None = None,
    size: int = 100,
    seed: int = 0,
    task: str = "basic_arithmetic",
    multi_turn: bool = False,
    max_turns: int | None = None,
    success_threshold: float | None = None,
    limit: int | None = None,
) -> SkyRLEnv:
    """`skyrl/gsm8k-v1`: skyrl-gym's gsm8k env (or `gsm8k_multi_turn`) over offline or GSM8K rows.

    Args:
        path: a GSM8K-format file (`question`, `answer` with `#### N`); None: `size` offline tasks
            of the reasoning-gym generator `task` (integer answers), converted to SkyRL rows.
        size: number of generated tasks (without `path`).
        seed: generation seed (without `path`).
        task: a numeric reasoning-gym generator (without `path`).
        multi_turn: use skyrl's `gsm8k_multi_turn` (5 turns, per-turn rewards).
        max_turns: rlvr's turn limit; default 1, or 5 with `multi_turn`.
        success_threshold: default 1.0: one right answer (skyrl's multi-turn format score alone is
            not a pass).
        limit: keep the first `limit` rows.
    """
    env_class = "gsm8k_multi_turn" if multi_turn else "gsm8k"
    rows: Sequence[Mapping[str, Any]]
    if path is not None:
        rows = _gsm8k_file_rows(path, env_class)
    else:
        from rlvr.environments.registry import make

        source = make("math/reasoning-gym-v1", task=task, size=size, seed=seed, system_prompt="", verifier="math")
        try:
            rows = skyrl_rows(list(source.tasks), env_class=env_class, data_source=f"reasoning-gym/{task}")
        finally:
            source.close()
    threshold = 1.0 if success_threshold is None else success_threshold
    return from_skyrl_gym(env_class, rows, env_id="skyrl/gsm8k-v1", max_turns=max_turns or (5 if multi_turn else 1),
                          success_threshold=threshold, reward_range=(0.0, 1.2 if multi_turn else 1.0), limit=limit)
