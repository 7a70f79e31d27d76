"""`StateVerifier` ("state"): expected facts about an environment's end state against the observed ones.

For environments scored on the state their tools left (an MCP server's repository, database or
files): a trusted state check reads the state after the episode and writes it as a JSON object of
named facts (`{"branch": "main", "head_subject": "Add notes", ...}`); the reference is the JSON
object of the facts the task expects. The episode is `correct` when every expected fact is
observed with exactly that JSON value (strings compared exactly, lists in order, `1` and `1.0`
alike as JSON numbers); facts observed but not expected are ignored. Components: `facts`, the
fraction of expected facts observed (for analysis; the reward is 1.0 or 0.0).

A response that is not a JSON object is an `error` (reward None): the state check, not the model,
writes it, so a malformed one is a broken grader. A reference that is not a non-empty JSON object
is an `error` too.

Example:
    >>> StateVerifier().verify('{"branch": "main", "n": 2}', {"branch": "main"}).status
    'correct'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from rlvr.core.types import Verdict
from rlvr.verifiers.base import PooledVerifier, VerifierConfig

__all__ = ["StateVerifier"]


def _facts(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def score_state(response: str, reference: Any) -> Verdict:
    """Compare the observed facts (`response`, JSON) with the expected ones (`reference`, a dict or its JSON)."""
    expected = _facts(reference)
    if not expected:
        return Verdict.error(f"the reference must be a non-empty JSON object of expected facts, got {reference!r:.200}")
    observed = _facts(response)
    if observed is None:
        return Verdict.error(f"the state check wrote {response!r:.200}, not a JSON object of facts")
    wrong = [name for name, value in expected.items()
             if name not in observed or json.dumps(observed[name], sort_keys=True) != json.dumps(value, sort_keys=True)]
    share = 1.0 - len(wrong) / len(expected)
    extracted = json.dumps({k: observed.get(k) for k in expected}, sort_keys=True, ensure_ascii=False)
    if not wrong:
        return Verdict(status="correct", reward=1.0, components={"facts": 1.0}, extracted=extracted,
                       detail=f"all {len(expected)} expected facts observed")
    shown = "; ".join(f"{k}: expected {json.dumps(expected[k], ensure_ascii=False)[:80]}, observed "
                      f"{json.dumps(observed.get(k), ensure_ascii=False)[:80]}" for k in wrong[:4])
    return Verdict(status="incorrect", reward=0.0, components={"facts": share}, extracted=extracted,
                   detail=f"{len(wrong)} of {len(expected)} facts differ: {shown}")


class StateVerifier(PooledVerifier):
    """Score observed end-state facts against expected ones (module docstring). Inline by default: a JSON compare.

    Args:
        config: execution settings (default inline scoring).
    """

    name: ClassVar[str] = "state"

    def __init__(self, config: VerifierConfig | None = None) -> None:
        super().__init__(config or VerifierConfig(scoring="inline"))

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """The pure scorer (`score_state`)."""
        return score_state

    def reference_response(self, reference: Any) -> str:
        """The expected facts as JSON: what a state check writes for a solved task."""
        return json.dumps(_facts(reference), sort_keys=True)
