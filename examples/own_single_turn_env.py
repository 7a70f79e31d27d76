"""Your own single-turn environment: a task set, a verifier of your own, a registered id, `rlvr.check`.

The task: spell a word backwards. The verifier reads the one `<answer>...</answer>` block of the
response and compares it with the reversed word. rlvr scores in worker processes under a hard time
limit, so the scoring function must be importable by module name: this file runs itself as the module
`own_single_turn_env` (its folder is on `sys.path`), and registers `own_single_turn_env:make_env`,
resolved lazily like every built-in id.

    python examples/own_single_turn_env.py [--size 16]

Prints a correct, a wrong and an unanswered step, then each check of `rlvr.check`; exits 1 if one fails.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable
from typing import Any

import rlvr
from rlvr import EnvSpec, Message, SingleTurnEnv, Task, Verdict
from rlvr.verifiers import PooledVerifier

ENV_ID = "examples/reverse-word-v1"
WORDS = ("planet", "garden", "silver", "rocket", "window", "pencil", "castle", "bridge", "forest", "marble")
SYSTEM_PROMPT = "Write the final answer alone between <answer> and </answer>."
ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def make_tasks(size: int, seed: int) -> list[Task]:
    """`size` tasks drawn with `seed` (the same seed, the same tasks); each reference is the reversed word."""
    rng = random.Random(seed)
    tasks = []
    for i in range(size):
        word = rng.choice(WORDS)
        prompt = (Message(role="system", content=SYSTEM_PROMPT),
                  Message(role="user", content=f"Spell the word '{word}' backwards."))
        tasks.append(Task(id=f"reverse-{seed}-{i}", prompt=prompt, reference=word[::-1]))
    return tasks


def score(response: str, reference: str) -> Verdict:
    """One `<answer>` block holding the reference (case and surrounding spaces ignored) is correct."""
    found = ANSWER.findall(response)
    if not found:
        return Verdict(status="no_answer", reward=0.0, detail="no <answer>...</answer> block")
    if len(found) > 1:
        return Verdict(status="incorrect", reward=0.0, extracted=found[-1], detail="more than one answer block")
    answer = found[0].strip()
    ok = answer.lower() == reference.lower()
    return Verdict(status="correct" if ok else "incorrect", reward=1.0 if ok else 0.0, extracted=answer,
                   detail="" if ok else f"expected {reference!r}")


class ReversedWordVerifier(PooledVerifier):
    """`score` in rlvr's worker processes (a hard limit per call, `timeout_s`; a crash is an `error` verdict)."""

    name = "reverse-word"

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The scoring function (module level, so worker processes import it by name)."""
        return score

    def reference_response(self, reference: Any) -> str:
        """A response `score` calls correct: what `rlvr.check` and the oracle policy replay."""
        return f"<answer>{reference}</answer>"


def make_env(size: int = 16, seed: int = 0, **verifier_options: Any) -> SingleTurnEnv:
    """The environment's factory (what the registry calls: `rlvr.make(ENV_ID, size=8)` passes `size=8`)."""
    spec = EnvSpec(id=ENV_ID, description="Spell a word backwards.", reward_range=(0.0, 1.0), max_turns=1)
    return SingleTurnEnv(make_tasks(size, seed), ReversedWordVerifier(**verifier_options), spec)


def main(argv: list[str] | None = None) -> int:
    """Register, make, step and check the environment; 0 when every check passed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="tasks in the environment")
    args = parser.parse_args(argv)

    # Register by "module:factory" (a package does it with the `rlvr.environments` entry point instead).
    rlvr.registry.register(ENV_ID, f"{__name__}:make_env", description="Spell a word backwards.")
    env = rlvr.make(ENV_ID, size=args.size)
    try:
        prompt, _ = env.reset_sync(seed=1)
        print(f"task {env.task.id}: {prompt[-1].content}")
        for response in (f"<answer>{env.task.reference}</answer>", "<answer>wrong</answer>", "I am not sure."):
            env.reset_sync(seed=1)
            result = env.step_sync(response)
            print(f"step {response!r}: status={result.verdict.status} reward={result.reward} "
                  f"terminated={result.terminated}")

        report = rlvr.check(env, n=8)
        for r in report.results:
            print(f"check {r.name}: {'passed' if r.passed else 'FAILED'} {r.detail}")
        print(f"check passed: {report.passed}")
        return 0 if report.passed else 1
    finally:
        env.close()


if __name__ == "__main__":
    # Run as the importable module `own_single_turn_env`, not as `__main__`: worker processes import `score`
    # by its module's name, and no process can import another one's `__main__`.
    import own_single_turn_env

    sys.exit(own_single_turn_env.main())
