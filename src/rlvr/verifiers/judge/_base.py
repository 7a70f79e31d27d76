"""What the pointwise and the RULER judge share: the call-validate-retry loop, the cache, verdicts.

A judge waits on the network, so it is a `ThreadedVerifier`: it runs in threads of the calling
process (at most `max_concurrency` judgements at once), not in the worker processes other verifiers
use. Its limits: one deadline per HTTP call (`timeout_s`: connect, status line, headers and body together),
retried at most `retries` times, plus at most `protocol_retries` fresh calls after a reply that does
not validate; the pool's watchdog ends a judgement that outlives all of them (`call_timeout_s`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from rlvr.core.types import Status, Verdict
from rlvr.verifiers.base import THREAD_GRACE_S, ThreadedVerifier
from rlvr.verifiers.judge._cache import ScoreCache
from rlvr.verifiers.judge._client import Call, ChatClient
from rlvr.verifiers.judge._reply import ReplyError
from rlvr.verifiers.judge.config import JudgeConfig

__all__: list[str] = []

T = TypeVar("T")

Request = tuple[list[dict[str, str]], dict[str, Any], str, int]
"""(messages, reply JSON schema, schema name, max_tokens of the reply) of one judge call."""


@dataclass
class Asked:
    """Outcome of asking the judge: the validated value or the problem, and every HTTP attempt."""

    value: Any = None
    problem: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)


def judge_detail(why: str, **fields: Any) -> str:
    """A verdict's detail: a JSON object whose first key `why` says what happened in words."""
    return json.dumps({"why": why, **fields}, ensure_ascii=False)


class JudgeBase(ThreadedVerifier):
    """Shared machinery of `JudgeVerifier` and `RulerVerifier` (see the module docstring)."""

    config: JudgeConfig
    wants_prompt = True
    """Read by `rlvr verify --prompt-key` and the trainer adapters: the reference must carry the question."""

    config_type: ClassVar[type[JudgeConfig]] = JudgeConfig

    def __init__(self, config: JudgeConfig | None = None, **overrides: Any) -> None:
        """Build from a config (`config_type`) or its fields by keyword (`model=` is required)."""
        super().__init__(config, **overrides)
        self._setup()

    def concurrency(self, workers: int | None = None) -> int:
        """`max_concurrency`: the judgements of a batch running at once (a batch's `workers` does not change it)."""
        return self.config.max_concurrency

    def max_in_flight(self) -> int:
        """`max_concurrency`: the judgements of this verifier running at once, over every caller."""
        return self.config.max_concurrency

    def call_timeout_s(self) -> float:
        """The longest one judgement may take, seconds.

        Every HTTP attempt (`timeout_s` each) and backoff (at most 30 s each) of every protocol retry,
        plus `THREAD_GRACE_S`.
        """
        c = self.config
        return (c.protocol_retries + 1) * ((c.retries + 1) * c.timeout_s + c.retries * 30.0) + THREAD_GRACE_S

    def _setup(self) -> None:
        self.client = ChatClient(self.config)
        self.cache = ScoreCache(self.config.cache_path) if self.config.cache else None

    def ask(self, build: Callable[[int], Request], parse: Callable[[str | None, int], T]) -> Asked:
        """Call the judge, validate the reply, and retry a bad reply up to `protocol_retries` times.

        Args:
            build: attempt number → (messages, schema, schema name, max_tokens); RULER reshuffles per
                attempt and scales max_tokens with the group.
            parse: (reply content, attempt) → validated value; raises `ReplyError` (a malformed reply,
                or a passing grade that follows one planted in the response: `_planted`).

        Returns:
            `Asked` with `value` set, or with `problem` set (the caller makes it an error verdict).
        """
        asked = Asked()
        for attempt in range(self.config.protocol_retries + 1):
            messages, schema, name, max_tokens = build(attempt)
            calls = self.client.chat(messages, schema, name, max_tokens)
            asked.calls += [c.record() for c in calls]
            last = calls[-1]
            problem = self._transport_problem(last, len(calls))
            if problem is not None:
                asked.problem = problem
                return asked  # already retried with backoff at the HTTP level
            try:
                asked.value = parse(self._content(last), attempt)
                asked.problem = None
                return asked
            except ReplyError as exc:
                cut = " (the reply was cut by max_tokens)" if last.finish_reason == "length" else ""
                asked.problem = f"judge reply rejected: {exc}{cut}"
        asked.problem = f"{asked.problem} (after {self.config.protocol_retries + 1} call(s))"
        return asked

    @staticmethod
    def _transport_problem(call: Call, attempts: int) -> str | None:
        if call.error is None or (call.status is not None and 200 <= call.status < 300):
            return None  # a 2xx with an unreadable body is a bad reply: retried like one
        return f"judge call failed after {attempts} attempt(s): {call.error}"

    @staticmethod
    def _content(call: Call) -> str | None:
        if call.error is not None:
            raise ReplyError(call.error)
        if call.refusal is not None:
            raise ReplyError(f"the judge refused: {call.refusal}")
        if call.finish_reason == "content_filter":
            raise ReplyError("the judge's reply was withheld by a content filter")
        return call.content

    def error(self, problem: str, calls: list[dict[str, Any]], start: float, **fields: Any) -> Verdict:
        """An error verdict (reward None: the sample is masked) that records the calls made."""
        return Verdict.error(judge_detail(problem, model=self.config.model, calls=calls, **fields),
                             elapsed_s=time.monotonic() - start)

    def scored(self, score: float, reasoning: str, calls: list[dict[str, Any]], start: float,
               **fields: Any) -> Verdict:
        """A verdict for a validated score: 'correct' at or above `threshold`, else 'incorrect'."""
        status: Status = "correct" if score >= self.config.threshold else "incorrect"
        why = f"judge score {score:g} {'>=' if status == 'correct' else '<'} threshold {self.config.threshold:g}"
        return Verdict(status=status, reward=score, components={"judge": score},
                       detail=judge_detail(why, reasoning=reasoning, model=self.config.model, calls=calls, **fields),
                       elapsed_s=time.monotonic() - start)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("client", None)
        state.pop("cache", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._setup()
