"""Base classes of rlvr verifiers: one `verify` and one `verify_batch`, every call under a hard time limit.

A verifier supplies `scorer()`: the pure scoring callable `(response, reference) -> Verdict`. Where it runs
is its base class's choice, and both keep the same rules (`rlvr.verifiers.pool`, `rlvr.verifiers.threads`):

- `PooledVerifier`: warm worker processes behind a parent watchdog (`WorkerPool`), for scoring that
  computes here (math, SQL, reasoning-gym): a pathological input is killed with its worker (`timeout`),
  a crash inside the scorer is `error` with `reward=None`, and neither can hang or kill the caller.
- `ThreadedVerifier`: threads of this process behind the same kind of watchdog (`ThreadPool`), for
  verifiers whose work happens in a sandbox or over HTTP (code, terminal, the LLM judges): a call past
  its limit is `timeout`, an exception `error`.

`Verifier` holds what both share: `verify`, `averify`, `verify_batch` and `check` (no subclass overrides
them), the outcome → verdict rule (timeout kept apart from error, a broken grader never a 0), the
pool's lifecycle, and the config constructor `Verifier(config=None, **overrides)` (`config_type`).
`scoring="inline"` runs the scorer in the calling thread instead (debugging; no hard limit).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.registry import load_attr
from rlvr.core.types import Verdict
from rlvr.verifiers.pool import Outcome, PoolClosedError, WorkerPool
from rlvr.verifiers.threads import Grouping, ThreadPool

__all__ = ["PooledVerifier", "ThreadedVerifier", "Verifier", "VerifierConfig"]

THREAD_GRACE_S = 5.0
"""Seconds a threaded call may run past its verifier's own limit (`config.timeout_s`) before the watchdog
calls it a timeout: the start of a sandbox, the last read of a reply."""


@dataclass(frozen=True)
class ScorerRef:
    """A scoring function named `"module:function"`, with its leading arguments: `scorer()`'s picklable form.

    Calling it runs `function(*args, response, reference)`. The module is imported where the reference is
    unpickled (a worker process, while it starts: before its first item's time limit runs) or first
    called (inline scoring), so a process that only sends the scorer to worker processes never imports
    what only the workers need (the math scorer's sympy and LaTeX parser).
    """

    target: str
    args: tuple[Any, ...] = ()

    def __call__(self, response: str, reference: Any) -> Verdict:
        """`function(*args, response, reference)`."""
        verdict: Verdict = _function(self.target)(*self.args, response, reference)
        return verdict

    def __reduce__(self) -> tuple[Any, ...]:
        return _loaded_scorer, (self.target, self.args)


@functools.lru_cache(maxsize=64)
def _function(target: str) -> Callable[..., Any]:
    function: Callable[..., Any] = load_attr(target)
    return function


def _loaded_scorer(target: str, args: tuple[Any, ...]) -> ScorerRef:
    """A `ScorerRef` as unpickled: its function imported now (in a worker process, while it starts)."""
    _function(target)
    return ScorerRef(target, args)


class VerifierConfig(BaseModel):
    """Execution settings shared by every verifier."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=10.0, gt=0, description="Hard wall-clock limit per item, seconds.")
    scoring: Literal["process", "inline"] = Field(
        default="process",
        description="Where scoring runs. 'process': in the verifier's pool under a hard per-item limit (default; "
        "worker processes, or watchdog threads for verifiers whose work runs in a sandbox or over HTTP). "
        "'inline': in the calling thread, one item after another; faster to debug, but no hard limit. "
        "(Sandbox isolation levels are `SandboxConfig.isolation`.)",
    )
    memory_limit_mb: int | None = Field(
        default=4096, ge=64, description="Address-space limit of each worker process, MiB (None: unlimited)."
    )
    workers: int = Field(default=1, ge=1, description="Worker processes used by `verify`/`averify`.")


class Verifier(ABC):
    """Verify responses against references.

    Subclasses pick a pool (`PooledVerifier`, `ThreadedVerifier`) and implement `scorer` and
    `reference_response`.
    """

    name: ClassVar[str] = "verifier"
    config_type: ClassVar[type[VerifierConfig]] = VerifierConfig
    """The configuration model `Verifier(config=None, **overrides)` validates."""
    config: VerifierConfig

    def __init__(self, config: VerifierConfig | None = None, **overrides: Any) -> None:
        """Build from a config (`config_type`) or its fields by keyword, or a config with fields overridden.

        Raises:
            pydantic.ValidationError: an unknown field or a bad value.
        """
        if config is None:
            config = self.config_type(**overrides)
        elif overrides:
            config = self.config_type.model_validate({**config.model_dump(), **overrides})
        self.config = config
        self._pool: WorkerPool | ThreadPool | None = None
        self._pool_lock = threading.Lock()

    @abstractmethod
    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Return the pure scoring function `(response, reference) -> Verdict` (picklable for worker processes)."""

    @abstractmethod
    def _new_pool(self, workers: int) -> WorkerPool | ThreadPool:
        """The pool `scorer()` runs in, sized for `workers` calls at once."""

    def reference_response(self, reference: Any) -> str:
        """A response that must verify `correct` against `reference` (used by `check`)."""
        return str(reference)

    def concurrency(self, workers: int | None = None) -> int:
        """Calls a batch runs at once when the caller asks for `workers` (None: the verifier's own default).

        Default: `workers`, else `config.workers`.
        """
        return workers or self.config.workers

    # -- scoring ----------------------------------------------------------------------------
    def verify(self, response: str, reference: Any) -> Verdict:
        """Score one response against one reference. Never raises for bad input.

        Returns a Verdict; `timeout` past the per-item limit, `error` (reward None) if the scorer crashed.
        """
        if self.config.scoring == "inline":
            return self._inline(response, reference)
        for _ in range(3):  # a concurrent close() may retire the pool under us: take the new one
            try:
                return self._from_outcome(self._get_pool(self.concurrency()).call(response, reference))
            except PoolClosedError:
                continue
        return Verdict.error(f"{self.name} verifier: the worker pool was closed while this call waited")

    async def averify(self, response: str, reference: Any) -> Verdict:
        """Async `verify`: runs in a thread, so the event loop never blocks on scoring."""
        return await asyncio.to_thread(self.verify, response, reference)

    def verify_batch(self, pairs: Iterable[tuple[str, Any]], workers: int | None = None) -> list[Verdict]:
        """Score `(response, reference)` pairs, up to `concurrency(workers)` at once; same order as input."""
        items = list(pairs)
        if self.config.scoring == "inline":
            return [self._inline(r, ref) for r, ref in items]
        n = max(1, min(self.concurrency(workers), len(items) or 1))
        pool = self._get_pool(n)
        return [self._from_outcome(o) for o in pool.map(items, concurrency=n)]

    def check(self, reference: Any) -> Verdict:
        """Prove the verifier accepts the reference solution: verify `reference_response(reference)`."""
        return self.verify(self.reference_response(reference), reference)

    # -- plumbing ---------------------------------------------------------------------------
    def _inline(self, response: str, reference: Any) -> Verdict:
        start = time.monotonic()
        try:
            return self.scorer()(response, reference)
        except Exception as exc:  # a crash of the grader is an error verdict, never a 0
            return Verdict.error(f"{self.name} verifier crashed: {type(exc).__name__}: {exc}",
                                 elapsed_s=time.monotonic() - start)

    def _from_outcome(self, outcome: Outcome) -> Verdict:
        if outcome.kind == "ok":
            verdict: Verdict = outcome.value
            return verdict
        if outcome.kind == "timeout":
            return Verdict.timeout(f"{self.name} verifier: {outcome.value}", elapsed_s=outcome.elapsed_s)
        return Verdict.error(f"{self.name} verifier {outcome.kind}: {str(outcome.value).strip()[-2000:]}",
                             elapsed_s=outcome.elapsed_s)

    def _get_pool(self, workers: int) -> WorkerPool | ThreadPool:
        with self._pool_lock:
            if self._pool is not None and not self._pool.closed:
                self._pool.resize(workers)  # grow in place: never close a pool other threads use
            else:
                self._pool = self._new_pool(workers)
            return self._pool

    def warm(self, workers: int | None = None) -> None:
        """Start the pool's workers now (otherwise they start on first use); nothing for inline scoring."""
        if self.config.scoring == "process":
            self._get_pool(workers or self.concurrency()).warm()

    def close(self) -> None:
        """Stop the worker processes (they also stop when the verifier is garbage-collected)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_pool"] = None
        state["_pool_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pool_lock = threading.Lock()


class PooledVerifier(Verifier):
    """A verifier whose scorer computes in warm worker processes, each call killed past `config.timeout_s`.

    `config.workers` processes serve `verify`/`averify`; a batch grows the pool to its `workers`;
    `config.memory_limit_mb` caps each process's address space.
    """

    def _new_pool(self, workers: int) -> WorkerPool:
        return WorkerPool(self.scorer(), workers=workers, timeout_s=self.config.timeout_s,
                          memory_limit_mb=self.config.memory_limit_mb)


class ThreadedVerifier(Verifier):
    """A verifier whose work happens in a sandbox or over HTTP: scored in threads of this process.

    The scorer waits rather than computes, and its work has limits of its own (the sandbox's, the HTTP
    timeouts), so a thread per call suffices; the pool's watchdog still turns a call that outlives
    `call_timeout_s()` into a `timeout` verdict, so no response can hang the caller. `memory_limit_mb`
    does not apply (the sandbox limits memory). Subclasses may refine three hooks: `concurrency`
    (threads of a batch), `max_in_flight` (a cap over every call of this verifier) and `grouping`
    (group judges: pairs with equal references scored in one call).
    """

    def call_timeout_s(self) -> float:
        """The watchdog's limit on one call, seconds: `config.timeout_s` plus `THREAD_GRACE_S`."""
        return self.config.timeout_s + THREAD_GRACE_S

    def max_in_flight(self) -> int | None:
        """Most calls of this verifier running at once, over every caller (None: no cap)."""
        return None

    def grouping(self) -> Grouping | None:
        """How a batch is split into group calls (None: each pair is scored alone)."""
        return None

    def _new_pool(self, workers: int) -> ThreadPool:
        return ThreadPool(self.scorer(), timeout_s=self.call_timeout_s(), capacity=self.max_in_flight(),
                          group=self.grouping())
