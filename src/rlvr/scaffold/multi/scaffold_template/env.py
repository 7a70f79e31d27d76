"""scaffold-template: a multi-turn rlvr environment -- the environment answers each move until the episode ends.

The task: find a secret number; after each guess the environment says "higher" or "lower".
`GuessEnv.env_response` is the environment's side of every step (the `MultiTurnEnv` hook its
`step` calls): read the policy's message, answer it, say whether the episode is over. Replace it
with your own interaction (a game, a simulator, a user simulator), `make_tasks` with your task
set, and `reference_actions` with moves that solve a task (what `rlvr check` and the oracle policy
replay). The last guess is scored by `score` when the episode ends.

Registered under the `rlvr.environments` entry point in pyproject.toml, so after
`pip install -e .` every rlvr command finds it by id: `rlvr check scaffold/template-v1`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from rlvr import EnvSpec, Message, Task, Verdict
from rlvr.environments.multi_turn import MultiTurnEnv
from rlvr.verifiers.base import PooledVerifier

ENV_ID = "scaffold/template-v1"
"""The id this environment is registered under (pyproject.toml `[project.entry-points."rlvr.environments"]`)."""

LOW, HIGH = 1, 100

SYSTEM_PROMPT = (f"Find my secret whole number between {LOW} and {HIGH}. Answer each turn with one guess as "
                 "<guess>N</guess>; I reply 'higher', 'lower' or 'correct'.")

GUESS = re.compile(r"<guess>\s*(-?\d+)\s*</guess>")


def make_tasks(size: int, seed: int) -> list[Task]:
    """`size` secrets drawn with `seed`; each task's reference is the secret (an int)."""
    rng = random.Random(seed)
    prompt = [Message(role="system", content=SYSTEM_PROMPT), Message(role="user", content="Your first guess?")]
    return [Task(id=f"secret-{seed}-{i}", prompt=prompt, reference=rng.randint(LOW, HIGH)) for i in range(size)]


def read_guess(text: str) -> int | None:
    """The one guess in `text`, or None when it holds none or several."""
    found = GUESS.findall(text)
    return int(found[0]) if len(found) == 1 else None


def score(response: str, reference: int) -> Verdict:
    """Score the episode's last message: correct when it guesses the secret."""
    guess = read_guess(response)
    if guess is None:
        return Verdict(status="no_answer", reward=0.0, detail="no single <guess>N</guess> in the last message")
    status = "correct" if guess == reference else "incorrect"
    return Verdict(status=status, reward=float(guess == reference), extracted=str(guess), detail=f"guessed {guess}")


class SecretVerifier(PooledVerifier):
    """Runs `score` in rlvr's worker processes (each call under a hard time limit, `timeout_s`)."""

    name = "scaffold-template"

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The scoring function (a module-level function, so worker processes can import it)."""
        return score

    def reference_response(self, reference: Any) -> str:
        """A last message `score` calls correct."""
        return f"<guess>{reference}</guess>"


class GuessEnv(MultiTurnEnv):
    """Answers each guess with a hint; the episode ends on the right guess or after `max_turns` guesses."""

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """The hint for the policy's guess, and whether the episode is over."""
        assert self.task is not None
        guess = read_guess(action.content)
        if guess is None:
            return [Message(role="user", content="Answer with one guess as <guess>N</guess>.")], False
        if guess == self.task.reference:
            return [], True
        return [Message(role="user", content="higher" if guess < self.task.reference else "lower")], False

    def reference_actions(self, task: Task) -> list[Message] | None:
        """A binary search's guesses up to the secret (they end the episode within `max_turns` for 1..100)."""
        low, high, moves = LOW, HIGH, []
        while True:
            mid = (low + high) // 2
            moves.append(Message(role="assistant", content=f"<guess>{mid}</guess>"))
            if mid == task.reference:
                return moves
            low, high = (mid + 1, high) if mid < task.reference else (low, mid - 1)


def make_env(size: int = 64, seed: int = 0, max_turns: int = 8, **verifier_options: Any) -> GuessEnv:
    """Build the environment (the entry point's factory; `rlvr ... --env-arg size=8` passes `size=8`).

    Args:
        size: number of tasks.
        seed: seed of the task draw.
        max_turns: guesses per episode (7 always suffice for 1..100 by binary search).
        **verifier_options: `VerifierConfig` fields, e.g. `timeout_s=5`, `scoring="inline"`.
    """
    spec = EnvSpec(id=ENV_ID, description=f"Find a secret number in {LOW}..{HIGH} from higher/lower hints.",
                   reward_range=(0.0, 1.0), max_turns=max_turns, dataset=f"scaffold_template?size={size}&seed={seed}")
    return GuessEnv(make_tasks(size, seed), SecretVerifier(**verifier_options), spec)
