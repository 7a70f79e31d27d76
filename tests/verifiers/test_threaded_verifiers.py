"""Threaded verifiers (sandbox / HTTP work): the same watchdog rule as the worker pool, errors, groups, the cap."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.core.types import Verdict
from rlvr.verifiers.base import ThreadedVerifier, VerifierConfig
from rlvr.verifiers.threads import Grouping


class _Waits(ThreadedVerifier):
    """Scores by waiting (as a sandbox or an HTTP call would): 'hang' outlives every limit, 'raise' is a grader bug."""

    name = "waits"

    def __init__(self, cap: int | None = None, **config: Any) -> None:
        super().__init__(VerifierConfig(**config))
        self.cap = cap
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()

    def scorer(self) -> Callable[[str, Any], Verdict]:
        return self._score

    def max_in_flight(self) -> int | None:
        return self.cap

    def call_timeout_s(self) -> float:
        return self.config.timeout_s  # no grace: the test's clock stays short

    def _score(self, response: str, reference: Any) -> Verdict:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if response == "hang":
                time.sleep(30)
            if response == "raise":
                raise RuntimeError("grader bug")
            time.sleep(0.05)
            ok = response == reference
            return Verdict(status="correct" if ok else "incorrect", reward=float(ok), extracted=response)
        finally:
            with self.lock:
                self.running -= 1


def test_a_call_past_its_limit_is_a_timeout_at_once() -> None:
    verifier = _Waits(timeout_s=0.5)
    start = time.monotonic()
    verdict = verifier.verify("hang", "x")
    assert verdict.status == "timeout" and verdict.reward == 0.0 and "abandoned" in verdict.detail
    assert time.monotonic() - start < 5
    assert verifier.verify("a", "a").status == "correct"


def test_a_crash_of_the_scorer_is_an_error_never_a_zero() -> None:
    verdict = _Waits(timeout_s=5).verify("raise", "x")
    assert verdict.status == "error" and verdict.reward is None and "grader bug" in verdict.detail


def test_a_batch_keeps_input_order_and_gives_each_item_its_own_limit() -> None:
    verifier = _Waits(timeout_s=1.0)
    pairs = [("a", "a"), ("hang", "x"), ("b", "c"), ("raise", "x"), ("d", "d")]
    start = time.monotonic()
    verdicts = verifier.verify_batch(pairs, workers=2)
    assert [v.status for v in verdicts] == ["correct", "timeout", "incorrect", "error", "correct"]
    assert [v.extracted for v in verdicts if v.status in ("correct", "incorrect")] == ["a", "b", "d"]
    assert time.monotonic() - start < 10


def test_the_in_flight_cap_holds_over_every_caller() -> None:
    verifier = _Waits(cap=2, timeout_s=5)
    threads = [threading.Thread(target=verifier.verify_batch, args=([(str(i), str(i)) for i in range(6)], 6))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert verifier.most == 2


def test_inline_scoring_runs_in_the_calling_thread_without_a_limit() -> None:
    verifier = _Waits(timeout_s=0.01, scoring="inline")
    assert verifier.verify("a", "a").status == "correct"  # 50 ms of work: past the limit, yet scored
    assert verifier.verify("raise", "x").status == "error"


class _Groups(_Waits):
    """A group judge: pairs with equal references are scored in one call (as RULER's)."""

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.calls: list[tuple[list[str], Any]] = []

    def grouping(self) -> Grouping:
        return str, self._judge

    def _judge(self, responses: Sequence[str], reference: Any) -> list[Verdict]:
        self.calls.append((list(responses), reference))
        if "hang" in responses:
            time.sleep(30)
        return [Verdict(status="correct", reward=len(r) / 10, extracted=r) for r in responses]


def test_a_group_judge_scores_each_reference_once_and_answers_each_member() -> None:
    verifier = _Groups(timeout_s=1.0)
    pairs = [("a", "p"), ("bb", "q"), ("ccc", "p"), ("hang", "r"), ("dddd", "q"), ("x", "r")]
    verdicts = verifier.verify_batch(pairs)
    assert sorted((sorted(rs), ref) for rs, ref in verifier.calls) == [
        (["a", "ccc"], "p"), (["bb", "dddd"], "q"), (["hang", "x"], "r")]
    assert [v.reward for v in verdicts[:3]] + [verdicts[4].reward] == [0.1, 0.2, 0.3, 0.4]
    assert verdicts[3].status == verdicts[5].status == "timeout"  # one late group call: each member times out


def test_no_verifier_class_overrides_verify_or_verify_batch() -> None:
    from rlvr.verifiers.base import Verifier
    from rlvr.verifiers.code import UnitTestVerifier
    from rlvr.verifiers.judge import JudgeVerifier, RulerVerifier
    from rlvr.verifiers.math import MathVerifier
    from rlvr.verifiers.sql import SQLVerifier
    from rlvr.verifiers.terminal import TerminalVerifier
    from rlvr.verifiers.wrappers import FormatReward

    for cls in (_Waits, _Groups, UnitTestVerifier, JudgeVerifier, RulerVerifier, TerminalVerifier, MathVerifier,
                SQLVerifier, FormatReward):
        assert cls.verify is Verifier.verify and cls.verify_batch is Verifier.verify_batch, cls
