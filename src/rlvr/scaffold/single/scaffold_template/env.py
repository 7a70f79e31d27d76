"""scaffold-template: a single-turn rlvr environment -- one prompt, one answer, one verdict.

The task: sort a few words alphabetically. Replace `make_tasks` with your own task set (a list of
`rlvr.Task`: an id, the prompt messages, the reference the verifier needs) and `score` with your
grading rule; keep `reference_response` returning a response that `score` calls correct (that is
what `rlvr check` and the oracle policy replay).

Registered under the `rlvr.environments` entry point in pyproject.toml, so after
`pip install -e .` every rlvr command finds it by id: `rlvr check scaffold/template-v1`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from rlvr import EnvSpec, Message, SingleTurnEnv, Task, Verdict
from rlvr.verifiers.base import PooledVerifier

ENV_ID = "scaffold/template-v1"
"""The id this environment is registered under (pyproject.toml `[project.entry-points."rlvr.environments"]`)."""

WORDS = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "kiwi", "lemon", "mango", "olive")

SYSTEM_PROMPT = "Solve the task. Write the final answer alone between <answer> and </answer>."

ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def make_tasks(size: int, seed: int) -> list[Task]:
    """`size` sorting tasks drawn with `seed` (the same seed gives the same tasks).

    Each task's reference is the sorted words joined by single spaces.
    """
    rng = random.Random(seed)
    tasks = []
    for i in range(size):
        words = rng.sample(WORDS, rng.randint(3, 5))
        prompt = [Message(role="system", content=SYSTEM_PROMPT),
                  Message(role="user", content=f"Sort these words alphabetically: {', '.join(words)}.")]
        tasks.append(Task(id=f"sort-{seed}-{i}", prompt=prompt, reference=" ".join(sorted(words))))
    return tasks


def score(response: str, reference: str) -> Verdict:
    """Score one response: the one `<answer>` block must hold the reference words in order.

    Commas and extra spaces are ignored; case is not. No answer block is `no_answer`, two or more
    are `incorrect` (an answer is one answer).
    """
    found = ANSWER.findall(response)
    if not found:
        return Verdict(status="no_answer", reward=0.0, detail="no <answer>...</answer> block")
    if len(found) > 1:
        return Verdict(status="incorrect", reward=0.0, extracted=found[-1], detail=f"{len(found)} answer blocks")
    words = found[0].replace(",", " ").split()
    if words == reference.split():
        return Verdict(status="correct", reward=1.0, extracted=found[0], detail="words in order")
    return Verdict(status="incorrect", reward=0.0, extracted=found[0], detail=f"expected {reference!r}")


class SortedWordsVerifier(PooledVerifier):
    """Runs `score` in rlvr's worker processes (each call under a hard time limit, `timeout_s`)."""

    name = "scaffold-template"

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The scoring function (a module-level function, so worker processes can import it)."""
        return score

    def reference_response(self, reference: Any) -> str:
        """A response `score` calls correct: what `rlvr check` and the oracle policy replay."""
        return f"<answer>{reference}</answer>"


def make_env(size: int = 64, seed: int = 0, **verifier_options: Any) -> SingleTurnEnv:
    """Build the environment (the entry point's factory; `rlvr ... --env-arg size=8` passes `size=8`).

    Args:
        size: number of tasks.
        seed: seed of the task draw.
        **verifier_options: `VerifierConfig` fields, e.g. `timeout_s=5`, `scoring="inline"`.
    """
    spec = EnvSpec(id=ENV_ID, description="Sort a few words alphabetically.", reward_range=(0.0, 1.0), max_turns=1,
                   dataset=f"scaffold_template?size={size}&seed={seed}")
    return SingleTurnEnv(make_tasks(size, seed), SortedWordsVerifier(**verifier_options), spec)
