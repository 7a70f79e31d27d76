"""A pool of warm worker processes with a parent-side watchdog, and the `Outcome` of one call.

One of the two pools a verifier scores in, with one rule: every call gets its own hard time limit.
This one, `WorkerPool`, is for scoring that computes here (math, SQL, reasoning-gym);
`rlvr.verifiers.threads.ThreadPool` is for scoring whose work happens elsewhere (a sandbox, an HTTP
server). Both answer `call` and `map` with `Outcome`s (`ok`, `exc`, `timeout`, `crash`), which
`rlvr.verifiers.base.Verifier` turns into verdicts the same way for every verifier.

Hard time limits without signals: each call is sent to a worker process over a pipe and
the parent waits at most `timeout_s` for the answer. A worker that runs late is killed
(its whole process group) and replaced; a worker that dies is replaced. Nothing here uses
`signal.alarm`, so calls are safe from any thread and from asyncio (via `asyncio.to_thread`).

`map` sends items in chunks (one pickle and one thread hand-off per chunk, not per item); the
worker streams one reply per item, and the watchdog gives every item its own `timeout_s` from the
previous item's reply. An item past its deadline is `timeout` (its worker killed), one whose
worker died is `crash`; the items after it in its chunk are re-sent to a fresh worker, so each
still gets its own verdict.

Workers are started with `python -m rlvr.verifiers._worker` (not `multiprocessing`), so the
caller's `__main__` is never re-imported and scripts need no `if __name__ == "__main__"` guard.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from rlvr.core.errors import VerifierError
from rlvr.verifiers._worker import FRAME_HEADER, LOADING_ENV, encode_frame

__all__: list[str] = []

_START_TIMEOUT_S = 120.0
_MAX_CHUNK = 64  # items per chunk sent to one worker by `map`


class PoolClosedError(VerifierError):
    """The pool was closed (by `close()`) while a caller waited for a worker."""


@dataclass
class _Waiter:
    """A caller waiting for a worker; `_release` hands one over and sets the event."""

    event: threading.Event = field(default_factory=threading.Event)
    worker: _Worker | None = None


@dataclass(frozen=True)
class Outcome:
    """Result of one call: `kind` says whether `value` is a result or an error text."""

    kind: Literal["ok", "exc", "timeout", "crash"]
    value: Any
    elapsed_s: float


def _pickled(fn: Callable[..., Any]) -> bytes:
    """`fn` as the pickle every worker loads; VerifierError naming the fix when it cannot be pickled."""
    import pickle
    import pickletools

    try:
        blob = pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # a lambda, a nested function, an object holding a lock ...
        raise VerifierError(
            f"the scoring function {fn!r} cannot be sent to a verifier worker ({exc}): define it at the top level "
            "of an importable module (no lambdas, nested functions or open resources in what it holds)"
        ) from exc
    # protocol >= 4 names every global by two pushed strings (module, name) before STACK_GLOBAL
    if any(arg == "__main__" for _, arg, _ in pickletools.genops(blob)):
        raise VerifierError(
            f"the scoring function {fn!r} (or something it holds) is defined in the script you ran (`__main__`), "
            "which verifier worker processes cannot import: move it into a module beside the script (e.g. "
            "`my_verifier.py`) and import it from there"
        )
    return blob


def _load_failure(trace: str) -> str:
    """The error for a worker that could not unpickle the scoring callable: the last line of why."""
    last = trace.strip().splitlines()[-1] if trace.strip() else "unknown error"
    return f"verifier worker failed to start: it could not load the scoring function ({last})"


class _Worker:
    """One worker process and its pipes. Not thread-safe: the pool hands it to one caller."""

    def __init__(self, fn_pickle: bytes, memory_limit_bytes: int | None) -> None:
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlvr.verifiers._worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out_fd = self.proc.stdout.fileno()
        self._buf = bytearray()  # bytes read from the worker and not yet consumed
        self._send((list(sys.path), fn_pickle, memory_limit_bytes))
        self._ready = False

    def _send(self, obj: Any) -> None:
        self._in.write(encode_frame(obj))
        self._in.flush()

    def _read_exact(self, n: int, deadline: float) -> bytes | None:
        """Read n bytes before `deadline`; None on timeout. EOFError if the worker died.

        Reads whatever the pipe holds (up to 1 MiB a call) into a buffer, so replies that queued up while
        this thread was busy cost one system call together.
        """
        while len(self._buf) < n:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return None
            ready, _, _ = select.select([self._out_fd], [], [], wait)
            if not ready:
                return None
            chunk = os.read(self._out_fd, 1 << 20)
            if not chunk:
                raise EOFError("worker exited")
            self._buf += chunk
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    def recv(self, timeout_s: float) -> tuple[bool, Any]:
        """Return (True, frame) or (False, None) on timeout; EOFError if the worker died."""
        import pickle

        deadline = time.monotonic() + timeout_s
        header = self._read_exact(FRAME_HEADER.size, deadline)
        if header is None:
            return False, None
        (size,) = FRAME_HEADER.unpack(header)
        # The header arrived, so the body is being written now: allow it a grace second.
        body = self._read_exact(size, max(deadline, time.monotonic() + 1.0))
        if body is None:
            return False, None
        return True, pickle.loads(body)

    def wait_ready(self) -> None:
        if self._ready:
            return
        try:
            ok, frame = self.recv(_START_TIMEOUT_S)
        except EOFError:
            ok, frame = False, None
        if not ok or frame != ("ready", None):
            self.kill()
            if ok and isinstance(frame, tuple) and frame[0] == "failed":
                raise VerifierError(_load_failure(str(frame[1])))
            raise VerifierError(
                f"verifier worker failed to start (exit code {self.proc.poll()}); "
                f"run `{sys.executable} -m rlvr.verifiers._worker` to see why"
            )
        self._ready = True

    def call(self, payload: tuple[Any, ...], timeout_s: float) -> Outcome:
        """Run one payload within `timeout_s` (the worker is killed past it)."""
        return self.call_chunk([payload], timeout_s)[0]

    def call_chunk(self, payloads: Sequence[tuple[Any, ...]], timeout_s: float) -> list[Outcome]:
        """Run `payloads` in order; each has `timeout_s` from the previous one's reply (the first, from the send).

        Returns the outcomes of a prefix: all of them, or those up to and including the first that timed
        out or crashed (the worker is then dead; the caller re-sends the rest to another worker).
        """
        self.wait_ready()
        outcomes: list[Outcome] = []
        start = time.monotonic()
        try:
            self._send(list(payloads))
            for _ in payloads:
                ok, frame = self.recv(timeout_s)
                now = time.monotonic()
                if not ok:
                    self.kill()
                    outcomes.append(Outcome("timeout", f"no result within {timeout_s:g} s; worker killed", now - start))
                    return outcomes
                kind, value = frame
                outcomes.append(Outcome(kind, value, now - start))
                start = now
        except (EOFError, OSError, ValueError) as exc:  # ValueError: pipe closed by close()
            self.kill()
            detail = f"worker process died ({exc}; exit code {self.proc.poll()})"
            outcomes.append(Outcome("crash", detail, time.monotonic() - start))
        return outcomes

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        try:
            self._in.close()  # worker exits on EOF
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


class WorkerPool:
    """Up to `workers` warm processes running `fn(*payload)` with a hard per-call timeout.

    Args:
        fn: picklable callable (a module-level function or a `functools.partial` of one).
        workers: maximum number of processes; they start lazily, on demand.
        timeout_s: wall-clock limit of one call, seconds; a late worker is killed.
        memory_limit_mb: RLIMIT_AS of each worker in MiB, or None for no limit.

    Thread-safe: concurrent `call`s use different workers (callers wait for a free one).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        workers: int = 1,
        timeout_s: float = 10.0,
        memory_limit_mb: int | None = None,
    ) -> None:
        if workers < 1:
            raise VerifierError(f"workers must be >= 1, got {workers}")
        if os.environ.get(LOADING_ENV):
            raise VerifierError(
                "a verifier worker, importing the module that defines the scoring function, was asked to start "
                "workers of its own: that module scores at import time. Put the code that scores under "
                "`if __name__ == \"__main__\":` or in a function, so importing the module only defines things"
            )
        self._fn_pickle = _pickled(fn)
        self.workers = workers
        self.timeout_s = timeout_s
        self._memory = memory_limit_mb * 1024 * 1024 if memory_limit_mb else None
        self._idle: list[_Worker] = []
        self._waiters: collections.deque[_Waiter] = collections.deque()
        self._lock = threading.Lock()
        self._started = 0
        self._all: list[_Worker] = []
        self._closed = False

    def _acquire(self) -> _Worker:
        """Take a free worker, start one if under capacity, or wait in FIFO order for one.

        Workers are handed directly to the longest waiting caller on release, so a busy caller
        that releases and re-acquires in a loop cannot starve the others.
        """
        with self._lock:
            if self._closed:
                raise PoolClosedError("the worker pool is closed")
            if self._idle:
                return self._idle.pop()
            start = self._started < self.workers
            if start:
                self._started += 1
            else:
                waiter = _Waiter()
                self._waiters.append(waiter)
        if start:
            worker = _Worker(self._fn_pickle, self._memory)
            with self._lock:
                self._all.append(worker)
            return worker
        waiter.event.wait()  # set by `_release`/`resize` (with a worker) or by `close` (without)
        if waiter.worker is None:
            raise PoolClosedError("the worker pool is closed")
        return waiter.worker

    def resize(self, workers: int) -> None:
        """Allow up to `workers` processes (never shrinks; extra processes start on demand)."""
        with self._lock:
            self.workers = max(self.workers, workers)
            while self._waiters and self._started < self.workers:  # let waiters start new workers
                self._started += 1
                self._hand_over(self._waiters.popleft(), None)

    def _hand_over(self, waiter: _Waiter, worker: _Worker | None) -> None:
        """Give `worker` (or, if None, a freshly started one) to `waiter`. Called with the lock held."""
        if worker is None:
            worker = _Worker(self._fn_pickle, self._memory)
            self._all.append(worker)
        waiter.worker = worker
        waiter.event.set()

    def _release(self, worker: _Worker) -> None:
        if not worker.alive and not self._closed:
            replacement = _Worker(self._fn_pickle, self._memory)  # start outside the lock: spawning is slow
            with self._lock:
                if worker in self._all:
                    self._all.remove(worker)
                self._all.append(replacement)
            worker = replacement
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                if self._waiters:
                    self._hand_over(self._waiters.popleft(), worker)
                else:
                    self._idle.append(worker)
        if closed:
            worker.kill()

    @property
    def closed(self) -> bool:
        """True once `close` was called."""
        return self._closed

    def call(self, *payload: Any, timeout_s: float | None = None, wait_for_replacement: bool = True) -> Outcome:
        """Run `fn(*payload)` in a worker; never raises for failures of `fn` itself.

        Args:
            payload: the arguments of `fn`.
            timeout_s: this call's limit (default: the pool's `timeout_s`).
            wait_for_replacement: False returns at once when the worker had to be replaced (it was killed
                or died): the fresh worker starts in the background.

        Raises:
            PoolClosedError: the pool was closed before or while this call's worker started.
            VerifierError: a worker process cannot start.
        """
        worker = self._acquire()
        try:
            return worker.call(payload, self.timeout_s if timeout_s is None else timeout_s)
        except VerifierError as exc:
            if self._closed:  # close() killed the worker while it started: the pool's doing, not the worker's
                raise PoolClosedError("the worker pool was closed while this call's worker started") from exc
            raise
        finally:
            if wait_for_replacement:
                self._release(worker)
            else:
                threading.Thread(target=self._release, args=(worker,), daemon=True, name="rlvr-pool-release").start()

    def map(
        self, payloads: Iterable[tuple[Any, ...]], concurrency: int | None = None, chunk_size: int | None = None
    ) -> Iterator[Outcome]:
        """Run every payload, up to `concurrency` (default `workers`) chunks at a time; yield in input order.

        Args:
            payloads: argument tuples of `fn`.
            concurrency: chunks in flight at once (each on its own worker).
            chunk_size: items sent to a worker at once; default: a quarter of each worker's share of a
                sized input (at most 64), so the workers stay balanced, or 8 for an iterator.
        """
        n = max(1, concurrency or self.workers)
        if chunk_size is None:
            chunk_size = min(_MAX_CHUNK, max(1, len(payloads) // (4 * n))) if isinstance(payloads, Sized) else 8
        with ThreadPoolExecutor(n, thread_name_prefix="rlvr-verify") as ex:
            window: collections.deque[Any] = collections.deque()
            chunk: list[tuple[Any, ...]] = []
            for payload in payloads:
                chunk.append(payload)
                if len(chunk) >= chunk_size:
                    window.append(ex.submit(self._run_chunk, chunk))
                    chunk = []
                if len(window) >= 2 * n:
                    yield from window.popleft().result()
            if chunk:
                window.append(ex.submit(self._run_chunk, chunk))
            for fut in window:
                yield from fut.result()

    def _run_chunk(self, payloads: list[tuple[Any, ...]]) -> list[Outcome]:
        """Outcomes of every payload: the items after a timeout or crash go to the next worker."""
        done: list[Outcome] = []
        while len(done) < len(payloads):
            try:
                worker = self._acquire()
            except PoolClosedError as exc:
                left = len(payloads) - len(done)
                return done + [Outcome("exc", f"{exc} (closed while this item waited)", 0.0)] * left
            try:
                done += worker.call_chunk(payloads[len(done) :], self.timeout_s)
            except VerifierError as exc:
                if not self._closed:
                    raise
                left = len(payloads) - len(done)  # close() killed the worker while it started
                return done + [Outcome("exc", f"{exc} (the pool was closed while it started)", 0.0)] * left
            finally:
                self._release(worker)
        return done

    def warm(self) -> None:
        """Start every worker now and wait until they are ready (otherwise they start lazily)."""
        taken = [self._acquire() for _ in range(self.workers)]
        try:
            for w in taken:
                w.wait_ready()
        finally:
            for w in taken:
                self._release(w)

    def close(self) -> None:
        """Stop every worker process; waiting callers get `PoolClosedError`, running calls an error outcome."""
        with self._lock:
            self._closed = True
            workers, self._all = self._all, []
            self._idle.clear()
            waiters, self._waiters = list(self._waiters), collections.deque()
        for waiter in waiters:
            waiter.event.set()
        for w in workers:
            w.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:  # noqa: SIM105 - at interpreter shutdown `contextlib` itself may already be None
            self.close()
        except Exception:  # best effort only
            pass
