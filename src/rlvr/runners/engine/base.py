"""The engine interface: score batches of input rows with a verifier, somewhere.

An engine takes batches of `(row_id, row_json_text)` and yields one `BatchResult` per batch,
in completion order (not input order), with at most a bounded number of batches in flight,
so memory stays bounded whatever the input size. Every engine scores a batch with the same
function, `rlvr.runners.rows.score_rows`, so the local and the Ray engines give identical
verdicts for the same rows.
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from rlvr.core.types import Verdict
from rlvr.runners.rows import Batch, BatchResult, RowKeys, batched, score_rows
from rlvr.verifiers.base import PooledVerifier, Verifier, VerifierConfig

__all__ = ["Engine", "drive"]


class _Failed(PooledVerifier):
    """Gives every well-formed row the same error verdict (for rows whose verification kept failing)."""

    name: ClassVar[str] = "failed"

    def __init__(self, reason: str) -> None:
        super().__init__(VerifierConfig(scoring="inline"))
        self.reason = reason

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """One error verdict per pair, whatever the pair."""
        return functools.partial(_failed, self.reason)


def _failed(reason: str, response: str, reference: Any) -> Verdict:
    return Verdict.error(reason)


def failed_rows(batch: Batch, keys: RowKeys, reason: str, attempts: int) -> BatchResult:
    """Output rows for a batch that could not be verified: `status="error"` with `reason`, never dropped.

    Bad rows (not JSON, missing key) keep their own bad-row verdict, exactly as `score_rows` gives them.
    """
    result = score_rows(_Failed(reason), batch, keys)
    result.attempts = attempts
    return result


class Engine(ABC):
    """Where verification runs: this machine (`local`) or a Ray cluster (`ray`).

    Attributes:
        name: the engine's `--engine` name.
        in_order: True when `run` yields results in input order (then `rlvr verify` appends them to
            a JSONL output directly; else they go to order-independent shards, `rlvr.runners.shards`).
        workers: verifier workers (processes, or Ray actors) the engine uses.
        default_batch_size: rows per batch when the caller does not choose.
    """

    name: ClassVar[str] = "engine"
    in_order: ClassVar[bool] = False
    workers: int
    default_batch_size: int

    @abstractmethod
    def run(self, batches: Iterable[Batch], keys: RowKeys) -> Iterator[BatchResult]:
        """Score every batch; yield each result as it completes (completion order, not input order).

        `batches` is consumed lazily: only a bounded number of batches is held at any time.
        Every row of every batch is yielded exactly once; a batch whose verification keeps
        failing comes back as `failed_rows` (status `error`, with the reason).
        """

    def verify_pairs(self, pairs: Iterable[tuple[str, Any]], batch_size: int | None = None) -> Iterator[Verdict]:
        """Verify `(response, reference)` pairs; yield their verdicts in input order.

        For callers that hold responses rather than JSONL rows (e.g. `rlvr eval`). References
        must be JSON-serialisable (strings for math). Memory: the batches in flight plus the
        finished batches waiting for an earlier one.
        """
        size = batch_size or self.default_batch_size
        keys = ("response", "reference")
        rows = (json.dumps({"response": r, "reference": ref}, ensure_ascii=False) for r, ref in pairs)
        waiting: dict[int, BatchResult] = {}
        next_id = 1
        for result in self.run(batched(enumerate(rows, start=1), size), keys):
            waiting[result.ids[0]] = result
            while next_id in waiting:
                done = waiting.pop(next_id)
                next_id += len(done.ids)
                for line in done.lines:
                    yield Verdict.model_validate(json.loads(line)["verdict"])

    @abstractmethod
    def as_verifier(self) -> Verifier:
        """A `Verifier` that scores where this engine runs (a drop-in `env.verifier`, e.g. for `rlvr eval`)."""

    def close(self) -> None:  # noqa: B027 - optional hook: engines without resources keep it
        """Release the engine's workers."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drive(
    engine: Engine, batches: Iterable[Batch], keys: RowKeys, write: Callable[[BatchResult], None], *,
    on_progress: Callable[[int], None] | None = None, on_bad: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> int:
    """Run `batches` on `engine`, handing each finished batch to `write` (`rlvr verify`, any engine).

    Reports through the callbacks: each bad row's message (`on_bad`), the rows just finished
    (`on_progress`), once the reserved keys found in input rows and, at the end, the rows sent to
    a worker again after a failure (`on_warning`).

    Returns:
        Rows written.
    """
    written, retried, warned = 0, 0, False
    for result in engine.run(batches, keys):
        write(result)
        written += len(result.ids)
        retried += len(result.ids) if result.attempts > 1 else 0
        for message in result.bad:
            if on_bad:
                on_bad(message)
        if result.replaced and not warned:
            warned = True
            found = ", ".join(repr(k) for k in result.replaced)
            if on_warning:
                on_warning(f"input rows already have {found} (is the input an `rlvr verify` output?); "
                           "the output replaces them with this run's values")
        if on_progress:
            on_progress(len(result.ids))
    if retried and on_warning:
        on_warning(f"{retried} rows were sent to a worker again after a worker failure (each is written once)")
    return written
