"""A pool of threads with a per-call watchdog, for verifiers whose work happens in a sandbox or over HTTP.

The threaded counterpart of `rlvr.verifiers.pool.WorkerPool`, with the same rule and the same
`Outcome`s: every call (or group call) gets its own hard time limit from the moment it starts; a call
past it is `timeout` at once (its thread is abandoned and ends with its own work's limits), an
exception is `exc`. Used by `rlvr.verifiers.base.ThreadedVerifier` (code, terminal, the LLM judges).
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from rlvr.core.errors import VerifierError
from rlvr.verifiers.pool import Outcome, PoolClosedError

__all__: list[str] = []


Grouping = tuple[Callable[[Any], str], Callable[[Sequence[str], Any], "list[Any]"]]
"""How a group judge scores a batch: (key of a reference, `(responses, reference) -> one result per response`).

Pairs whose references have equal keys are judged together in one call (RULER: the responses to one prompt)."""


class ThreadPool:
    """Calls of `fn(*payload)` in threads of this process, each under a watchdog of `timeout_s`.

    For verifiers whose work happens outside this process (in a sandbox with its own limits, or over
    HTTP with its own timeouts): they wait, they do not compute, so threads suffice. A call past
    `timeout_s` is a `timeout` outcome at once; its thread is abandoned and ends with the limits of its
    own work (it cannot be killed, as a worker process can). An exception is an `exc` outcome.

    Args:
        fn: the scoring function, `(response, reference) -> result`.
        timeout_s: wall-clock limit of one call (or one group call), seconds, from the moment it starts.
        capacity: most calls running at once across every caller (they wait for a slot before their
            limit starts; an abandoned call gives its slot back); None: no cap.
        group: a `Grouping` for group judges: `map` then scores pairs with equal reference keys in one call.

    Thread-safe.
    """

    def __init__(self, fn: Callable[..., Any], *, timeout_s: float, capacity: int | None = None,
                 group: Grouping | None = None) -> None:
        self._fn = fn
        self.timeout_s = timeout_s
        self._slots = threading.BoundedSemaphore(capacity) if capacity else None
        self._group = group
        self._closed = False

    @property
    def closed(self) -> bool:
        """True once `close` was called."""
        return self._closed

    def resize(self, workers: int) -> None:
        """Nothing to resize: every call has its own thread (`map` takes its concurrency per call)."""

    def warm(self) -> None:
        """Nothing to start: threads start per call."""

    def close(self) -> None:
        """Refuse further `call`s (`PoolClosedError`); running calls finish."""
        self._closed = True

    def call(self, *payload: Any) -> Outcome:
        """Run `fn(*payload)` under the watchdog; never raises for failures of `fn` itself.

        Raises:
            PoolClosedError: the pool was closed.
        """
        if self._closed:
            raise PoolClosedError("the thread pool is closed")
        return self._watched(self._fn, payload)

    def map(self, payloads: Iterable[tuple[Any, ...]], concurrency: int | None = None) -> Iterator[Outcome]:
        """Run every `(response, reference)` payload, `concurrency` calls at a time; outcomes in input order.

        With a `group`, pairs with equal reference keys are scored in one group call (`map_groups`).
        """
        items = list(payloads)
        n = max(1, concurrency or 1)
        if self._group is None:
            with ThreadPoolExecutor(n, thread_name_prefix="rlvr-verify") as ex:
                yield from ex.map(lambda p: self._watched(self._fn, p), items)
            return
        key = self._group[0]
        members: dict[str, list[int]] = {}
        for i, (_, reference) in enumerate(items):
            members.setdefault(key(reference), []).append(i)
        groups = [([items[i][0] for i in idx], items[idx[0]][1]) for idx in members.values()]
        out: list[Outcome | None] = [None] * len(items)
        for idx, outcomes in zip(members.values(), self.map_groups(groups, n), strict=True):
            for i, outcome in zip(idx, outcomes, strict=True):
                out[i] = outcome
        yield from (o for o in out if o is not None)

    def map_groups(self, groups: Sequence[tuple[Sequence[str], Any]], concurrency: int | None = None
                   ) -> list[list[Outcome]]:
        """Score each `(responses, reference)` group in one call of the group function.

        Returns one outcome per response, per group; a late or failed call gives every member its outcome.

        Raises:
            VerifierError: the pool has no `group`.
        """
        if self._group is None:
            raise VerifierError("this pool scores pairs one by one: it was built without a group function")
        group_fn = self._group[1]

        def one(group: tuple[Sequence[str], Any]) -> list[Outcome]:
            responses, reference = group
            outcome = self._watched(group_fn, (list(responses), reference))
            if outcome.kind == "ok" and len(outcome.value) != len(responses):
                outcome = Outcome("exc", f"the group call gave {len(outcome.value)} results for {len(responses)} "
                                  "responses", outcome.elapsed_s)
            if outcome.kind != "ok":
                return [outcome] * len(responses)
            return [Outcome("ok", value, outcome.elapsed_s) for value in outcome.value]

        if not groups:
            return []
        with ThreadPoolExecutor(max(1, min(concurrency or 1, len(groups))), thread_name_prefix="rlvr-judge") as ex:
            return list(ex.map(one, groups))

    def _watched(self, fn: Callable[..., Any], payload: tuple[Any, ...]) -> Outcome:
        """`fn(*payload)` in a thread of its own; `timeout` when it has not answered within `timeout_s`."""
        with self._slots if self._slots is not None else contextlib.nullcontext():
            answer: list[tuple[Literal["ok", "exc"], Any]] = []
            done = threading.Event()

            def run() -> None:
                try:
                    answer.append(("ok", fn(*payload)))
                except BaseException:  # report every failure of the scoring code to the caller
                    answer.append(("exc", traceback.format_exc(limit=-8)))
                finally:
                    done.set()

            start = time.monotonic()
            threading.Thread(target=run, daemon=True, name="rlvr-verify-call").start()
            if not done.wait(self.timeout_s):
                return Outcome("timeout", f"no result within {self.timeout_s:g} s; the call was abandoned (its "
                               "sandbox or HTTP limits end it)", time.monotonic() - start)
            kind, value = answer[0]
            return Outcome(kind, value, time.monotonic() - start)
