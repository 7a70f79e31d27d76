"""Base class of rlvr verifiers: sync, async and batch verification with hard timeouts.

A concrete verifier supplies `scorer()`: a picklable callable `(response, reference) -> Verdict`
holding the pure scoring logic. `Verifier` runs it in warm worker processes behind a parent
watchdog (`rlvr.verifiers._pool`), so a pathological input becomes `status="timeout"`, a crash
inside the scorer becomes `status="error"` with `reward=None`, and neither can hang or kill
the caller (a trainer, a data pipeline).
"""

from __future__ import annotations

import asyncio
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.types import Verdict
from rlvr.verifiers._pool import Outcome, PoolClosedError, WorkerPool

__all__ = ["Verifier", "VerifierConfig"]


class VerifierConfig(BaseModel):
    """Execution settings shared by every verifier."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=10.0, gt=0, description="Hard wall-clock limit per item, seconds.")
    scoring: Literal["process", "inline"] = Field(
        default="process",
        description="Where scoring runs. 'process': in worker processes with a hard timeout (default). "
        "'inline': in the calling thread; faster to debug, but no hard timeout. (Sandbox isolation levels "
        "are `SandboxConfig.isolation`.)",
    )
    memory_limit_mb: int | None = Field(
        default=4096, ge=64, description="Address-space limit of each worker process, MiB (None: unlimited)."
    )
    workers: int = Field(default=1, ge=1, description="Worker processes used by `verify`/`averify`.")


class Verifier(ABC):
    """Verify responses against references; subclasses implement `scorer` and `reference_response`."""

    name: ClassVar[str] = "verifier"
    config: VerifierConfig

    def __init__(self, config: VerifierConfig) -> None:
        self.config = config
        self._pool: WorkerPool | None = None
        self._pool_lock = threading.Lock()

    @abstractmethod
    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Return the picklable pure scoring function `(response, reference) -> Verdict`."""

    def reference_response(self, reference: Any) -> str:
        """A response that must verify `correct` against `reference` (used by `check`)."""
        return str(reference)

    # -- single item -------------------------------------------------------------------
    def verify(self, response: str, reference: Any) -> Verdict:
        """Score one response against one reference. Never raises for bad input.

        Returns a Verdict; `timeout` past `config.timeout_s` seconds, `error` (reward None)
        if the scorer crashed.
        """
        if self.config.scoring == "inline":
            return self._inline(response, reference)
        for _ in range(3):  # a concurrent close() may retire the pool under us: take the new one
            try:
                return self._from_outcome(self._get_pool(self.config.workers).call(response, reference))
            except PoolClosedError:
                continue
        return Verdict.error(f"{self.name} verifier: the worker pool was closed while this call waited")

    async def averify(self, response: str, reference: Any) -> Verdict:
        """Async `verify`: runs in a thread, so the event loop never blocks on scoring."""
        return await asyncio.to_thread(self.verify, response, reference)

    def verify_batch(self, pairs: Iterable[tuple[str, Any]], workers: int | None = None) -> list[Verdict]:
        """Score `(response, reference)` pairs with up to `workers` processes; same order as input."""
        items = list(pairs)
        if self.config.scoring == "inline":
            return [self._inline(r, ref) for r, ref in items]
        n = max(1, min(workers or self.config.workers, len(items) or 1))
        pool = self._get_pool(n)
        return [self._from_outcome(o) for o in pool.map(items, concurrency=n)]

    def check(self, reference: Any) -> Verdict:
        """Prove the verifier accepts the reference solution: verify `reference_response(reference)`."""
        return self.verify(self.reference_response(reference), reference)

    # -- plumbing ----------------------------------------------------------------------
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

    def _get_pool(self, workers: int) -> WorkerPool:
        with self._pool_lock:
            if self._pool is not None and not self._pool.closed:
                self._pool.resize(workers)  # grow in place: never close a pool other threads use
            else:
                self._pool = WorkerPool(
                    self.scorer(),
                    workers=workers,
                    timeout_s=self.config.timeout_s,
                    memory_limit_mb=self.config.memory_limit_mb,
                )
            return self._pool

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
