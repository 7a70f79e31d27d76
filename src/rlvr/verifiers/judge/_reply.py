"""Strict reading of a judge's reply: the whole message must be the JSON object asked for.

No "first number in the reply" (OpenEnv LLMJudge), no search for a JSON object inside prose, no clamp
of an out-of-range score: anything but exactly the schema is a `ReplyError`, which the judge turns into
a retry and then an `error` verdict (reward None). Accepted leniency: surrounding whitespace and one
outer Markdown code fence (```json ... ```), which judges without structured output often add.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__: list[str] = []

_OUTER_FENCE = re.compile(r"\A```[a-zA-Z]*\n(?P<body>.*)\n```\Z", re.DOTALL)


class ReplyError(ValueError):
    """The judge's reply is not the JSON object asked for (the message says what is wrong)."""


@dataclass(frozen=True)
class Score:
    """One validated score: `value` in [0, 1] and the judge's explanation."""

    value: float
    reasoning: str


def _reject_constant(name: str) -> Any:
    raise ReplyError(f"the reply holds {name}, not a number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ReplyError(f"the reply repeats a key ({', '.join(sorted({k for k in keys if keys.count(k) > 1}))})")
    return dict(pairs)


def _load(content: str | None) -> dict[str, Any]:
    if content is None or not content.strip():
        raise ReplyError("the reply is empty")
    text = content.strip()
    match = _OUTER_FENCE.match(text)
    if match:
        text = match.group("body").strip()
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except ReplyError:
        raise
    except ValueError as exc:
        raise ReplyError(f"the reply is not one JSON object ({exc}): {content[:200]!r}") from exc
    if not isinstance(value, dict):
        raise ReplyError(f"the reply is a JSON {type(value).__name__}, not an object")
    return value


def _score(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReplyError(f"{where}: score must be a JSON number, got {value!r}")
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ReplyError(f"{where}: score {value!r} is outside [0, 1] (not clamped)")
    return score


def _keys(obj: dict[str, Any], required: set[str], where: str) -> None:
    missing = required - set(obj)
    extra = set(obj) - required
    if missing or extra:
        parts = ([f"missing {', '.join(sorted(missing))}"] if missing else []) + (
            [f"unexpected {', '.join(sorted(extra))}"] if extra else [])
        raise ReplyError(f"{where}: {'; '.join(parts)} (expected keys: {', '.join(sorted(required))})")


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ReplyError(f"{where} must be a string, got {type(value).__name__}")
    return value


def parse_pointwise(content: str | None) -> Score:
    """Validate a pointwise reply `{"score": number in [0, 1], "reasoning": str}`.

    Raises:
        ReplyError: empty, not exactly one JSON object, missing/extra/repeated keys, a score that is
            not a finite number in [0, 1], or reasoning that is not a string.
    """
    obj = _load(content)
    _keys(obj, {"score", "reasoning"}, "reply")
    return Score(_score(obj["score"], "reply"), _text(obj["reasoning"], "reply.reasoning"))


def parse_ruler(content: str | None, ids: Sequence[str]) -> dict[str, Score]:
    """Validate a RULER reply: one `{"trajectory_id", "explanation", "score"}` entry for each of `ids`.

    Returns:
        id → Score, for exactly the ids given.

    Raises:
        ReplyError: as `parse_pointwise`, or an id missing, repeated or not among `ids`.
    """
    obj = _load(content)
    _keys(obj, {"scores"}, "reply")
    entries = obj["scores"]
    if not isinstance(entries, list):
        raise ReplyError(f"reply.scores must be a list, got {type(entries).__name__}")
    wanted = set(ids)
    out: dict[str, Score] = {}
    for i, entry in enumerate(entries):
        where = f"reply.scores[{i}]"
        if not isinstance(entry, dict):
            raise ReplyError(f"{where} must be an object")
        _keys(entry, {"trajectory_id", "explanation", "score"}, where)
        raw_id = entry["trajectory_id"]
        tid = str(raw_id) if isinstance(raw_id, int) and not isinstance(raw_id, bool) else raw_id
        if not isinstance(tid, str) or tid not in wanted:
            raise ReplyError(f"{where}: unknown trajectory_id {raw_id!r} (ids sent: {', '.join(ids)})")
        if tid in out:
            raise ReplyError(f"{where}: trajectory_id {tid!r} scored twice")
        out[tid] = Score(_score(entry["score"], where), _text(entry["explanation"], f"{where}.explanation"))
    missing = [tid for tid in ids if tid not in out]
    if missing:
        raise ReplyError(f"reply has no score for trajectory id(s) {', '.join(missing)}")
    return out
