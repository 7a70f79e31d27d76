"""`MathVerifier`: free-form model output vs a math reference answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier, ScorerRef
from rlvr.verifiers.math.config import MathConfig

__all__: list[str] = []


class MathVerifier(PooledVerifier):
    r"""Verify a model's final math answer against a reference answer or solution.

    Build from a `MathConfig`, or its fields by keyword (`MathVerifier(timeout_s=5)`).

    Example:
        >>> v = MathVerifier()
        >>> v.verify("so the answer is \\\\boxed{\\\\frac{1}{2}}", "0.5").status
        'correct'
    """

    name: ClassVar[str] = "math"
    config_type: ClassVar[type[MathConfig]] = MathConfig
    config: MathConfig

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """`score_math` bound to this config; sympy is imported where it runs (the worker processes) only."""
        return ScorerRef("rlvr.verifiers.math.score:score_math", (self.config,))

    def reference_response(self, reference: Any) -> str:
        """A response that must be correct: the reference itself (answer or full solution)."""
        return str(reference)
