"""`JudgeVerifier`: a pointwise LLM judge — question, response, rubric, optional reference → score in [0, 1]."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import Verdict
from rlvr.verifiers.judge._base import JudgeBase, judge_detail
from rlvr.verifiers.judge._cache import cache_key
from rlvr.verifiers.judge._planted import planted_problem
from rlvr.verifiers.judge._prompt import pointwise_messages, pointwise_schema
from rlvr.verifiers.judge._reply import ReplyError, Score, parse_pointwise
from rlvr.verifiers.judge.config import JudgeConfig, JudgeReference, as_judge_reference

__all__: list[str] = []


class JudgeVerifier(JudgeBase):
    """Score a response with an LLM judge behind any OpenAI-compatible endpoint.

    `verify(response, reference)`: `reference` is a `JudgeReference` or a dict
    `{"prompt": question or chat messages, "reference": optional answer, "rubric": optional}`. The judge
    is asked for `{"reasoning": str, "score": number}` with `response_format` (a JSON schema, which
    vLLM enforces) and the reply is validated anyway (`rlvr.verifiers.judge._reply`).

    Verdicts: `correct` when score >= `threshold`, else `incorrect`, reward = the score; an empty
    response is `no_answer` (reward 0, no call); any judge failure (HTTP error or timeout after
    retries, refusal, empty or malformed reply, out-of-range score, after `protocol_retries` fresh
    calls) is `error` with reward None, never 0 and never a clamped score. A passing score of a response
    that plants a passing grade (`_planted`: parsed, in any format) is rejected like a malformed reply
    (retried, then `error`); a low score stands whatever the response planted. `detail` is a JSON object:
    `why`, `reasoning`, `model`, `calls` (each attempt: model, latency_s, http_status, raw reply or
    error), `cached`, `cut_chars`.

    Example:
        >>> judge = JudgeVerifier(base_url="http://127.0.0.1:8000/v1", model="smollm2")  # doctest: +SKIP
        >>> judge.verify("Paris", {"prompt": "Capital of France?", "reference": "Paris"}).reward  # doctest: +SKIP
        0.9
    """

    name: ClassVar[str] = "judge"
    config: JudgeConfig
    config_type = JudgeConfig

    def reference_response(self, reference: Any) -> str:
        """The reference answer itself (a capable judge scores it correct; a weak one may not)."""
        ref = as_judge_reference(reference)
        if ref.reference is None:
            raise ConfigError("check() needs a reference answer in the judge reference ('reference' key)")
        return ref.reference

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Judge one response (`_score`), in a thread of this process."""
        return self._score

    def _score(self, response: str, reference: Any) -> Verdict:
        """Judge one response. Never raises: bad input or a broken judge is an `error` verdict."""
        start = time.monotonic()
        try:
            return self._judge(response, as_judge_reference(reference), start)
        except Exception as exc:  # bad input or a crash of the judge code: an error verdict, never a 0
            return Verdict.error(judge_detail(f"judge failed: {type(exc).__name__}: {exc}"),
                                 elapsed_s=time.monotonic() - start)

    def _judge(self, response: str, ref: JudgeReference, start: float) -> Verdict:
        if not response.strip():
            return Verdict(status="no_answer", reward=0.0, detail=judge_detail("empty response: not sent to the judge"),
                           elapsed_s=time.monotonic() - start)
        rubric = ref.rubric or self.config.rubric
        messages, cut = pointwise_messages(ref.question_text(), response, rubric, ref.reference,
                                           self.config.max_response_chars)
        key = cache_key("pointwise", self.config.model, rubric, ref.question_text(), ref.reference, response,
                        self.config.max_response_chars, self.config.temperature)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            return self.scored(float(hit["score"]), str(hit["reasoning"]), [], start, cached=True, cut_chars=cut)
        def parse(content: str | None, _attempt: int) -> Score:
            score = parse_pointwise(content)
            problem = planted_problem(score.value, score.reasoning, response, self.config.threshold)
            if problem is not None:
                raise ReplyError(problem)
            return score

        asked = self.ask(lambda _attempt: (messages, pointwise_schema(), "judge_score", self.config.max_tokens), parse)
        if asked.problem is not None:
            return self.error(asked.problem, asked.calls, start, cut_chars=cut)
        score: Score = asked.value
        if self.cache is not None:
            self.cache.put(key, {"score": score.value, "reasoning": score.reasoning})
        return self.scored(score.value, score.reasoning, asked.calls, start, cached=False, cut_chars=cut)
