r"""Verifier wrappers: behaviour added around a verifier, not flags inside it (see STYLE.md).

`FormatReward` adds a `format` component for a well-formed final answer. It composes at the
scorer level, so the wrapped scorer and the format check run together in one worker process,
under the inner verifier's timeout and memory limit.

Format rewards are easy to game, so the check is strict: exactly one final-answer marker
(default `\boxed{...}`), its content non-empty, with at least one letter or digit, and at most
`max_answer_chars` characters. `\boxed{}`, `\boxed{ }`, `\boxed{?}`, an unclosed brace or a box
per candidate answer earns nothing.

`IntegerAnswer` keeps a `correct` verdict only for an answer written as an integer literal (tasks
that ask for a value, where restating the expression must not score).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier, Verifier
from rlvr.verifiers.math.boxes import match_brace
from rlvr.verifiers.registry import VerifierSpec

__all__ = ["FormatReward", "IntegerAnswer", "last_boxed"]

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ALNUM = re.compile(r"[^\W_]")


def boxed_contents(text: str) -> list[str | None]:
    r"""Contents of every `\boxed{...}` / `\fbox{...}` in `text`, in order (None: brace never closed).

    Braces are matched with a counter, so `\boxed{\frac{1}{2}}` gives `\frac{1}{2}`.
    """
    found: list[str | None] = []
    for match in _BOXED.finditer(text):
        close = match_brace(text, match.end() - 1)
        found.append(None if close is None else text[match.end() : close])
    return found


def last_boxed(text: str) -> str | None:
    r"""The content of the last closed `\boxed{...}` in `text`, stripped, or None if there is none."""
    for content in reversed(boxed_contents(text)):
        if content is not None:
            return content.strip()
    return None


def format_score(response: str, pattern: str | None = None, max_answer_chars: int = 200) -> float:
    r"""1.0 if `response` holds exactly one well-formed, non-empty final answer, else 0.0.

    Args:
        response: the model's text.
        pattern: None for `\boxed{...}` (balanced braces), or a regex whose group 1 (group 0 if it
            has no group) is the answer; it must match exactly once.
        max_answer_chars: longer answers score 0 (stops dumping the whole reasoning in the box).

    Returns:
        1.0 or 0.0.
    """
    if pattern is None:
        answers = boxed_contents(response)
    else:
        answers = [m.group(1) if m.groups() else m.group(0) for m in re.finditer(pattern, response, re.DOTALL)]
    if len(answers) != 1 or answers[0] is None:
        return 0.0
    answer = answers[0].strip()
    if not answer or len(answer) > max_answer_chars or not _ALNUM.search(answer):
        return 0.0
    return 1.0


def _score_with_format(
    inner: Callable[[str, Any], Verdict],
    weight: float,
    pattern: str | None,
    max_answer_chars: int,
    response: str,
    reference: Any,
) -> Verdict:
    verdict = inner(response, reference)
    if verdict.reward is None:  # the grader broke: stays an error, never gains a format bonus
        return verdict
    fmt = format_score(response, pattern, max_answer_chars)
    components = {**verdict.components, "format": fmt}
    return verdict.model_copy(update={"reward": verdict.reward + weight * fmt, "components": components})


class FormatReward(PooledVerifier):
    r"""Add `weight * format` to the wrapped verifier's reward; `components["format"]` is 0 or 1.

    Args:
        verifier: the verifier to wrap; its config (timeout, workers, isolation) is reused.
        weight: the bonus for a well-formed answer (reward range grows by `weight`).
        pattern: None for `\boxed{...}`, or a regex (see `format_score`).
        max_answer_chars: longer answers earn no format bonus.

    Status is the wrapped verifier's: a wrong but well-formed answer stays `incorrect` (with
    reward `weight`); an `error` verdict stays an error with reward None. Its spec (`VerifierSpec.of`)
    is the wrapped verifier's with this wrapper added (none when the wrapped one has none or is wrapped).

    Raises:
        ConfigError: if `weight` is negative or `pattern` is not a valid regex.
    """

    name: ClassVar[str] = "format"

    def __init__(
        self, verifier: Verifier, weight: float = 0.1, pattern: str | None = None, max_answer_chars: int = 200
    ) -> None:
        if weight < 0:
            raise ConfigError(f"format weight must be >= 0, got {weight}")
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"format pattern {pattern!r} is not a valid regex: {exc}") from exc
        super().__init__(verifier.config)
        self.inner = verifier
        self.weight = weight
        self.pattern = pattern
        self.max_answer_chars = max_answer_chars
        self.name = f"{verifier.name}+format"  # type: ignore[misc]
        inner_spec = VerifierSpec.of(verifier)
        if inner_spec is not None and inner_spec.wrapper is None:
            inner_spec.with_wrapper(f"{__name__}:FormatReward", weight=weight, pattern=pattern,
                                    max_answer_chars=max_answer_chars).record(self)

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The inner scorer followed by the format check (picklable)."""
        return functools.partial(
            _score_with_format, self.inner.scorer(), self.weight, self.pattern, self.max_answer_chars
        )

    def reference_response(self, reference: Any) -> str:
        """The inner verifier's reference response (correct; not necessarily well-formed)."""
        return self.inner.reference_response(reference)

    def close(self) -> None:
        """Stop this wrapper's workers and the inner verifier's."""
        super().close()
        self.inner.close()


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


class IntegerAnswer(PooledVerifier):
    r"""The wrapped verifier, with a correct verdict kept only for an integer-literal answer (module docstring).

    Args:
        verifier: the verifier to wrap (e.g. the math verifier); its config is reused.

    For tasks that ask for a value ("What is 347 * 829?") restating the question is no answer: the
    math verifier compares symbolically, so `\boxed{347 * 829}` equals the gold 287663; this wrapper
    turns such a `correct` into `incorrect` unless the extracted answer is an integer literal
    (optional sign, digits, optionally grouped in threes by commas or thin spaces). `incorrect`,
    `no_answer`, `timeout` and `error` verdicts pass through unchanged. Its spec is the wrapped
    verifier's with this wrapper added (as for `FormatReward`).
    """

    name: ClassVar[str] = "integer"

    def __init__(self, verifier: Verifier) -> None:
        super().__init__(verifier.config)
        self.inner = verifier
        self.name = f"{verifier.name}+integer"  # type: ignore[misc]
        inner_spec = VerifierSpec.of(verifier)
        if inner_spec is not None and inner_spec.wrapper is None:
            inner_spec.with_wrapper(f"{__name__}:IntegerAnswer").record(self)

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
