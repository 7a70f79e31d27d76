"""Group rewards for trainers that score samples one at a time: members of a group meet, one call judges them.

veRL 0.9's reward loop (`RewardLoopWorker.compute_score_batch`) and OpenRLHF 0.11's
`SingleTurnAgentExecutor` call the reward once per sample, concurrently for the samples of a prompt
(asyncio tasks in veRL, `asyncio.to_thread` calls in OpenRLHF). `GroupBatcher` holds each call until
its group (same key: the prompt's uid, task id or label) has `size` members, then scores the group
with one `verify_groups` call and hands every member its verdict. A group that does not fill within
`wait_s` seconds of its first member (chunked batches, fewer threads than members) is judged with the
members it has, and each verdict's detail says how many (`group_size`).

`group_verifier` builds the judge from a plain mapping, once per process and configuration
(`VerifierSpec.cached`).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.errors import AdapterError
from rlvr.core.types import Verdict
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.registry import VerifierSpec

__all__: list[str] = []


def group_verifier(options: Mapping[str, Any] | str) -> Verifier:
    """The group verifier described by `options` (`{"verifier": "ruler", **config}` or its JSON), cached.

    Raises:
        AdapterError: the verifier has no `verify_groups` (it cannot judge a group in one call).
        ConfigError: unknown verifier or options (from `VerifierSpec.build`).
    """
    opts = dict(json.loads(options) if isinstance(options, str) else options)
    name = str(opts.pop("verifier", "ruler"))
    verifier = VerifierSpec(name=name, config=opts).cached()
    if not callable(getattr(verifier, "verify_groups", None)):
        raise AdapterError(f"verifier {name!r} cannot judge groups (no verify_groups); use 'ruler'")
    return verifier


@dataclass
class _Group:
    responses: list[str] = field(default_factory=list)
    reference: Any = None
    verdicts: list[Verdict] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    taken: bool = False


class GroupBatcher:
    """Meet the members of each group and judge the group in one `verify_groups` call.

    Args:
        verifier: a group verifier (`RulerVerifier`).
        size: members per group (veRL `rollout.n`, OpenRLHF `n_samples_per_prompt`), >= 1.
        wait_s: most seconds the first member waits for the others before the group is judged as is.
    """

    def __init__(self, verifier: Verifier, size: int, wait_s: float = 30.0) -> None:
        if size < 1:
            raise AdapterError(f"group size must be >= 1, got {size}")
        self.verifier = verifier
        self.size = size
        self.wait_s = wait_s
        self._open: dict[str, _Group] = {}
        self._lock = threading.Lock()

    def _join(self, key: str, response: str, reference: Any) -> tuple[_Group, int, bool]:
        """Add a member; returns (group, member index, whether this member must judge the now-full group)."""
        with self._lock:
            group = self._open.setdefault(key, _Group(reference=reference))
            group.responses.append(response)
            index = len(group.responses) - 1
            full = len(group.responses) >= self.size
            if full:
                del self._open[key]
                group.taken = True
            return group, index, full

    def _take(self, key: str, group: _Group) -> bool:
        """Close a group that timed out (True when this caller must judge it)."""
        with self._lock:
            if group.taken:
                return False
            group.taken = True
            if self._open.get(key) is group:
                del self._open[key]
            return True

    def _judge(self, group: _Group) -> None:
        try:
            verify_groups = self.verifier.verify_groups  # type: ignore[attr-defined]
            group.verdicts = verify_groups([(list(group.responses), group.reference)])[0]
        except Exception as exc:  # the judge code broke: every member gets an error verdict, never a 0
            group.verdicts = [Verdict.error(f"group judge failed: {type(exc).__name__}: {exc}")] * len(group.responses)
        finally:
            group.done.set()

    def submit(self, key: str, response: str, reference: Any) -> Verdict:
        """Blocking: this member's verdict once its group is judged (for threads, e.g. OpenRLHF)."""
        group, index, full = self._join(key, response, reference)
        if full or (not group.done.wait(self.wait_s) and self._take(key, group)):
            self._judge(group)
        group.done.wait()
        assert group.verdicts is not None
        return group.verdicts[index]

    async def asubmit(self, key: str, response: str, reference: Any) -> Verdict:
        """Async: this member's verdict once its group is judged (for an event loop, e.g. veRL's reward loop).

        Waiting happens on the loop, so members never hold threads; the judge call runs in a thread.
        """
        group, index, full = self._join(key, response, reference)
        if full:
            await asyncio.to_thread(self._judge, group)
        else:
            deadline = time.monotonic() + self.wait_s
            while not group.done.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if not group.done.is_set() and self._take(key, group):
                await asyncio.to_thread(self._judge, group)
            while not group.done.is_set():
                await asyncio.sleep(0.01)
        assert group.verdicts is not None
        return group.verdicts[index]
