r"""`IntegerAnswer`: a wrapped verifier's verdict, correct only when the answer is written as an integer.

For tasks that ask for a value ("What is 347 * 829?"), restating the question is not an answer:
the math verifier compares symbolically, so `\boxed{347 * 829}` equals the gold 287663 and would
be scored correct -- a reward a policy earns without computing anything (SmolLM2-135M does it
unprompted). This wrapper keeps the wrapped verdict and turns a `correct` one into `incorrect`
when the extracted answer is not an integer literal (optional sign, digits, optionally grouped in
threes by commas or thin spaces: `287663`, `-1,024`, `287\,663`).

It composes at the scorer level, like `rlvr.verifiers.wrappers.FormatReward`: the wrapped scorer and
the check run together in one worker process, under the wrapped verifier's timeout.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.types import Verdict
from rlvr.verifiers.base import Verifier

__all__ = ["IntegerAnswer", "is_integer_literal"]

_INTEGER = re.compile(r"[+-]?(?:\d+|\d{1,3}(?:(?:,|\\,|\\!|\{,\}| )\d{3})+)")


def is_integer_literal(text: str | None) -> bool:
    r"""True when `text` (an extracted answer) is an integer written out, not an expression.

    Example:
        >>> [is_integer_literal(x) for x in ["287663", "-1,024", "$42$", "838 * 948 - 425", "2^{10}", None]]
        [True, True, True, False, False, False]
    """
    if text is None:
        return False
    return _INTEGER.fullmatch(text.strip().strip("$").strip()) is not None


def _score_integer(inner: Callable[[str, Any], Verdict], incorrect_reward: float, response: str,
                   reference: Any) -> Verdict:
    verdict = inner(response, reference)
    if verdict.status != "correct" or is_integer_literal(verdict.extracted):
        return verdict
    return verdict.model_copy(update={
        "status": "incorrect", "reward": incorrect_reward, "components": {**verdict.components, "correct": 0.0},
        "detail": f"the answer {verdict.extracted!r} is not written as an integer (the task asks for the value); "
                  f"wrapped verdict: {verdict.detail}"})


class IntegerAnswer(Verifier):
    """The wrapped verifier, with a correct verdict kept only for an integer-literal answer (module docstring).

    Args:
        verifier: the verifier to wrap (e.g. the math verifier); its config is reused.

    `incorrect`, `no_answer`, `timeout` and `error` verdicts pass through unchanged.
    """

    name: ClassVar[str] = "integer"

    def __init__(self, verifier: Verifier) -> None:
        super().__init__(verifier.config)
        self.inner = verifier
        self.name = f"{verifier.name}+integer"  # type: ignore[misc]

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The inner scorer followed by the integer check (picklable)."""
        incorrect = float(getattr(self.config, "incorrect_reward", 0.0))
        return functools.partial(_score_integer, self.inner.scorer(), incorrect)

    def reference_response(self, reference: Any) -> str:
        """The inner verifier's reference response."""
        return self.inner.reference_response(reference)

    def close(self) -> None:
        """Stop this wrapper's workers and the inner verifier's."""
        super().close()
        self.inner.close()
