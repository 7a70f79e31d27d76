"""The `local` engine: this machine's warm verifier worker processes (the default)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import ClassVar

from rlvr.runners.engine.base import Engine
from rlvr.runners.rows import Batch, BatchResult, RowKeys, score_rows
from rlvr.verifiers.base import Verifier

__all__ = ["LocalEngine"]


class LocalEngine(Engine):
    """Score batches one after another in this process, with `workers` verifier processes.

    Args:
        verifier: the verifier; its worker pool is shared with the caller (and closed by it).
        workers: verifier worker processes per batch.
    """

    name: ClassVar[str] = "local"
    in_order: ClassVar[bool] = True

    def __init__(self, verifier: Verifier, workers: int = 1) -> None:
        self.verifier = verifier
        self.workers = workers
        self.default_batch_size = max(8, 4 * workers)

    def run(self, batches: Iterable[Batch], keys: RowKeys) -> Iterator[BatchResult]:
        """Score each batch in turn (one batch in flight); results come in input order."""
        for batch in batches:
            yield score_rows(self.verifier, batch, keys, self.workers)

    def as_verifier(self) -> Verifier:
        """The verifier itself: it already runs in this machine's worker processes."""
        return self.verifier
