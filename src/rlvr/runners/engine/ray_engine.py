"""The `ray` engine: verification in Ray actors, each holding a warm verifier, across a cluster.

Each actor takes one CPU and holds the caller's verifier (pickled; its worker pool starts in
the actor and stays warm), so verdicts are those of the local engine. The driver feeds
batches with backpressure: at most `in_flight` batches per actor are outstanding, and input
batches are pulled only when a slot frees, so driver memory is bounded by the batches in
flight, not by the input size.

Failures (the exactly-once part): a batch whose actor process dies (node lost, `kill -9`, OOM
killer) or whose task raises is sent again, to a fresh actor when the old one died; only the
batch the dead actor was running is charged a try, not the ones queued behind it. After two
failed tries a batch is split into single rows, so one poisonous row cannot take its
neighbours down; a row that fails `max_attempts` times comes back with `status="error"` and the
last failure as the reason. Every row of every batch is yielded exactly once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rlvr.core.errors import BackendError, ConfigError, MissingExtraError
from rlvr.core.types import Verdict
from rlvr.runners.engine.base import Engine, failed_rows
from rlvr.runners.rows import Batch, BatchResult, RowKeys, score_rows
from rlvr.verifiers.base import PooledVerifier, Verifier

__all__: list[str] = []

_READY_TIMEOUT_S = 600.0


class _VerifyActor:
    """Ray actor body: one warm verifier (its own worker pool) scoring batches."""

    def __init__(self, verifier: Verifier, workers: int) -> None:
        self.verifier = verifier
        self.workers = workers

    def ready(self) -> int:
        """Start the verifier's worker processes now; return this actor's process id."""
        self.verifier.warm(self.workers)
        return os.getpid()

    def score(self, batch: Batch, keys: RowKeys) -> BatchResult:
        """Score one batch (as the local engine does)."""
        return score_rows(self.verifier, batch, keys, self.workers)

    def verify(self, response: str, reference: Any) -> Verdict:
        """Score one response (any picklable reference)."""
        return self.verifier.verify(response, reference)


@dataclass
class _Job:
    slot: int
    generation: int
    batch: Batch
    attempts: int
    seq: int


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError("ray", "ray") from exc
    return ray


class RayEngine(Engine):
    """Run verification in Ray actors on a cluster.

    Args:
        verifier: the verifier to run; pickled to every actor (its class must be importable on
            every node: built-in verifiers are; ship your own module with a Ray runtime_env).
        workers: actors, one CPU each; default: every CPU of the cluster.
        address: `auto` (the cluster started with `ray start` on this machine), `HOST:PORT` or
            `ray://HOST:PORT`; None: `ray.init()`'s default (`RAY_ADDRESS`, else start a local cluster).
        in_flight: outstanding batches per actor (2: one scoring, one queued).
        max_attempts: tries per row before it is given `status="error"`.

    Raises:
        MissingExtraError: Ray is not installed (`pip install 'rlvr[ray]'`).
        ConfigError: more workers than the cluster has CPUs.
        BackendError: the cluster cannot be reached, or the actors cannot build the verifier.
    """

    name: ClassVar[str] = "ray"

    def __init__(self, verifier: Verifier, workers: int | None = None, address: str | None = None,
                 *, in_flight: int = 2, max_attempts: int = 3) -> None:
        ray = self._ray = _import_ray()
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise BackendError(f"could not connect to the Ray cluster at {address or 'default'!r}: {exc}; "
                                   "start one with `ray start --head` or pass --ray-address HOST:PORT") from exc
        cpus = int(ray.cluster_resources().get("CPU", 0))
        self.workers = workers or max(1, cpus)
        if self.workers > cpus:
            self.close()
            raise ConfigError(f"--workers {self.workers} but the Ray cluster has {cpus} CPUs (one actor per CPU); "
                              "lower --workers or add nodes")
        self.default_batch_size = 64
        self.in_flight = in_flight
        self.max_attempts = max_attempts
        self._verifier = verifier
        self._actor_cls = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_VerifyActor)
        self._actors = [self._new_actor() for _ in range(self.workers)]
        self._generation = [0] * self.workers
        self._replaced = 0
        self._seq = 0
        self._running_when_died: dict[tuple[int, int], int] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._wait_ready()

    def _new_actor(self) -> Any:
        return self._actor_cls.remote(self._verifier, 1)

    def _wait_ready(self) -> None:
        ray = self._ray
        try:
            self.pids = ray.get([actor.ready.remote() for actor in self._actors], timeout=_READY_TIMEOUT_S)
        except ray.exceptions.RayError as exc:
            self.close()
            raise BackendError(f"Ray actors could not build the {self._verifier.name!r} verifier: {_reason(exc)} "
                               "(its module must be importable on every node)") from exc

    def run(self, batches: Iterable[Batch], keys: RowKeys) -> Iterator[BatchResult]:
        """Score batches on the actors; yield results in completion order (see the module docstring)."""
        ray = self._ray
        source = iter(batches)
        retry: deque[tuple[Batch, int]] = deque()
        pending: dict[Any, _Job] = {}
        load = [0] * self.workers
        exhausted = False
        while True:
            while not exhausted or retry:
                slot = min(range(self.workers), key=load.__getitem__)
                if load[slot] >= self.in_flight:
                    break
                if retry:
                    batch, attempts = retry.popleft()
                else:
                    next_batch = next(source, None)
                    if next_batch is None:
                        exhausted = True
                        break
                    batch, attempts = next_batch, 0
                ref = self._actors[slot].score.remote(batch, keys)
                pending[ref] = _Job(slot, self._generation[slot], batch, attempts + 1, self._seq)
                self._seq += 1
                load[slot] += 1
            if not pending:
                return
            ready, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(ready[0])
            load[job.slot] -= 1
            try:
                result: BatchResult = ray.get(ready[0])
            except ray.exceptions.RayError as exc:
                failed = self._on_failure(job, exc, retry, keys, pending.values())
                if failed is not None:
                    yield failed
                continue
            result.attempts = job.attempts
            yield result

    def verify(self, response: str, reference: Any) -> Verdict:
        """Score one response on the next actor (thread-safe; for callers that verify item by item).

        A failed call is retried on another actor, `max_attempts` tries in all; then the verdict is
        `status="error"` with the last failure as the reason.
        """
        ray = self._ray
        last: Exception | None = None
        for _ in range(self.max_attempts):
            with self._lock:
                slot = self._next = (self._next + 1) % self.workers
                actor, generation = self._actors[slot], self._generation[slot]
            try:
                verdict: Verdict = ray.get(actor.verify.remote(response, reference))
                return verdict
            except ray.exceptions.RayError as exc:
                last = exc
                with self._lock:
                    if isinstance(exc, ray.exceptions.RayActorError) and generation == self._generation[slot]:
                        self._replace(slot, exc)
        return Verdict.error(f"verification failed {self.max_attempts} times on the Ray cluster; "
                             f"last error: {_reason(last) if last else 'none'}")

    def as_verifier(self) -> Verifier:
        """A `Verifier` whose calls run on this engine's actors: a drop-in `env.verifier` (e.g. for `rlvr eval`)."""
        return RayVerifier(self)

    def _on_failure(self, job: _Job, exc: Exception, retry: deque[tuple[Batch, int]], keys: RowKeys,
                    pending: Iterable[_Job]) -> BatchResult | None:
        """Requeue a failed batch (split into rows after two tries); past `max_attempts`, error rows.

        When an actor dies, only the batch it was running is charged a try: an actor runs its tasks
        in submission order, so that is the oldest of its outstanding batches; the ones queued
        behind it are sent again with their tries unchanged (a poisonous row cannot use up its
        neighbours' tries).
        """
        if isinstance(exc, self._ray.exceptions.RayActorError):
            key = (job.slot, job.generation)
            if key not in self._running_when_died:
                same = [other.seq for other in pending if (other.slot, other.generation) == key]
                self._running_when_died[key] = min([job.seq, *same])
                self._replace(job.slot, exc)
            if job.seq != self._running_when_died[key]:
                retry.appendleft((job.batch, job.attempts - 1))
                return None
        if job.attempts >= self.max_attempts:
            reason = f"verification failed {job.attempts} times on the Ray cluster; last error: {_reason(exc)}"
            return failed_rows(job.batch, keys, reason, job.attempts)
        if job.attempts >= 2 and len(job.batch) > 1:
            retry.extend(([row], job.attempts) for row in job.batch)
        else:
            retry.append((job.batch, job.attempts))
        return None

    def _replace(self, slot: int, exc: Exception) -> None:
        """Start a fresh actor in place of a dead one; give up when actors keep dying."""
        self._replaced += 1
        if self._replaced > 10 + 5 * self.workers:
            raise BackendError(f"Ray actors died {self._replaced} times; last error: {_reason(exc)}")
        old = self._actors[slot]
        with contextlib.suppress(Exception):  # already gone
            self._ray.kill(old, no_restart=True)
        self._actors[slot] = self._new_actor()
        self._generation[slot] += 1

    def close(self) -> None:
        """Stop the actors; disconnect from (or stop) the cluster if this engine connected."""
        for actor in getattr(self, "_actors", []):
            with contextlib.suppress(Exception):  # already gone
                self._ray.kill(actor, no_restart=True)
        self._actors = []
        if self._owns_connection and self._ray.is_initialized():
            self._ray.shutdown()


class RayVerifier(PooledVerifier):
    """The engine's verifier, but scoring on the Ray actors (`verify`, `averify`, `verify_batch`).

    Closing it does not stop the engine; close the engine.
    """

    def __init__(self, engine: RayEngine) -> None:
        super().__init__(engine._verifier.config)
        self.engine = engine
        self.inner = engine._verifier

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The wrapped verifier's scorer."""
        return self.inner.scorer()

    def reference_response(self, reference: Any) -> str:
        """The wrapped verifier's reference response."""
        return self.inner.reference_response(reference)

    def verify(self, response: str, reference: Any) -> Verdict:
        """Score on the next actor (see `RayEngine.verify`)."""
        return self.engine.verify(response, reference)

    def verify_batch(self, pairs: Iterable[tuple[str, Any]], workers: int | None = None) -> list[Verdict]:
        """Score pairs on every actor at once; same order as input (`workers` is the engine's)."""
        return list(self.engine.verify_pairs(pairs))

    def close(self) -> None:
        """Nothing to release: the engine owns the actors."""


def _reason(exc: BaseException) -> str:
    """A short description of a Ray failure: its type and first meaningful line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:500]
