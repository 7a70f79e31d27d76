"""Environments that wrap another library's environment and are scored by its episode return.

Gymnasium (`rlvr.environments.gym`), skyrl-gym (`rlvr.environments.skyrl`) and remote OpenEnv
servers (`openenv/remote-v1`) grade episodes themselves: each step returns a reward, and rlvr's
verdict is read from the episode return. One rule for all of them (`return_verdict`):

- `correct` when the episode terminated (the wrapped env said done; not cut at a turn or time
  limit) with a return >= `success_threshold` (default: return > 0); else `incorrect`.
- the verdict's own reward is 0: the wrapped env's per-step rewards (the `env_reward` step
  component, weight 1) add up to the trajectory reward, so the reward is the return.
- a return that is not finite (finite step rewards whose sum overflows, e.g. 1e308 twice) cannot
  be scored: `error` (reward None, masked), never a correct inf.

Such an environment has no reference response and cannot score a lone response: its verifier is
`ReturnVerifier`, whose scorer answers `error` (reward None) rather than guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier, VerifierConfig

__all__ = ["ReturnVerifier"]


class ReturnVerifier(PooledVerifier):
    """Verifier of environments scored by their episode return (see the module docstring)."""

    name: ClassVar[str] = "episode_return"

    def __init__(self, source: str = "a wrapped environment") -> None:
        super().__init__(VerifierConfig(scoring="inline"))
        self.source = source

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """A scorer that explains why a single response cannot be scored (status error, reward None)."""
        source = self.source

        def not_scorable(response: str, reference: Any) -> Verdict:
            return Verdict.error(f"{source} is scored by its episode return, not by a single response")

        return not_scorable

    def reference_response(self, reference: Any) -> str:
        """Return-scored environments have no reference response (ValueError)."""
        raise ValueError(f"{self.source} has no reference response")


def check_success_threshold(success_threshold: float | None) -> None:
    """ConfigError unless `success_threshold` is None or finite (NaN makes no episode correct, -inf every one)."""
    if success_threshold is not None and not math.isfinite(success_threshold):
        raise ConfigError(f"success_threshold must be a finite number or None, got {success_threshold!r}")


def return_verdict(episode_return: float, terminated: bool, turns: int,
                   success_threshold: float | None = None) -> Verdict:
    """The verdict of a return-scored episode (rule in the module docstring).

    Args:
        episode_return: sum of the wrapped environment's step rewards.
        terminated: the wrapped environment ended the episode itself (not a turn/time limit).
        turns: model turns taken (for the detail text).
        success_threshold: return needed for `correct`; None means return > 0.

    Returns:
        A Verdict with reward 0 and `components={"return": episode_return}`; `error` (reward None)
        when `episode_return` is not finite.
    """
    if not math.isfinite(episode_return):
        return Verdict.error(f"the episode return {episode_return} is not finite (the step rewards overflow) "
                             f"after {turns} turns; the episode cannot be scored")
    reached = episode_return >= success_threshold if success_threshold is not None else episode_return > 0
    success = terminated and reached
    return Verdict(status="correct" if success else "incorrect", reward=0.0,
                   components={"return": episode_return},
                   detail=f"return {episode_return:g} after {turns} turns"
                          + ("" if terminated else " (the episode did not terminate)"))
