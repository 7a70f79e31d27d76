"""`MathVerifier`: free-form model output vs a math reference answer."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.types import Verdict
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.math.config import MathConfig

__all__ = ["MathVerifier"]


class MathVerifier(Verifier):
    r"""Verify a model's final math answer against a reference answer or solution.

    Example:
        >>> v = MathVerifier()
        >>> v.verify("so the answer is \\\\boxed{\\\\frac{1}{2}}", "0.5").status
        'correct'
    """

    name: ClassVar[str] = "math"
    config: MathConfig

    def __init__(self, config: MathConfig | None = None, **overrides: Any) -> None:
        """Build from a `MathConfig`, optionally overriding fields by keyword (validated)."""
        base = config or MathConfig()
        if overrides:
            base = MathConfig.model_validate({**base.model_dump(), **overrides})
        super().__init__(base)

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Return `score_math` bound to this config (picklable, run in worker processes)."""
        from rlvr.verifiers.math.score import score_math  # sympy loads in the workers only

        return functools.partial(score_math, self.config)

    def reference_response(self, reference: Any) -> str:
        """A response that must be correct: the reference itself (answer or full solution)."""
        return str(reference)
