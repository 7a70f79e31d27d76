"""Test doubles for people testing their own environments and trainers."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.types import Status, Verdict
from rlvr.verifiers.base import PooledVerifier, VerifierConfig

__all__ = ["ConstantVerifier"]


def _constant(status: Status, reward: float | None, response: str, reference: Any) -> Verdict:
    return Verdict(status=status, reward=reward, extracted=response, detail="constant verifier")


class ConstantVerifier(PooledVerifier):
    """Always returns the same verdict (inline, no worker processes).

    Args:
        status: the status to return.
        reward: the reward to return (must be None for 'error', a float otherwise).
    """

    name: ClassVar[str] = "constant"

    def __init__(self, status: Status = "correct", reward: float | None = 1.0) -> None:
        super().__init__(VerifierConfig(scoring="inline"))
        Verdict(status=status, reward=reward)  # validate the pair now, not at first call
        self.status: Status = status
        self.reward = reward

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Return the constant scorer."""
        return functools.partial(_constant, self.status, self.reward)
