"""Rows of `rlvr verify`: their keys, parsing, batching, scoring a batch, and the counts over an output.

One row is one input line (or Parquet/dataset row) as JSON text, with a 1-based id. Every path
that scores rows (the local JSONL path `rlvr.runners.verify`, the sharded path
`rlvr.runners.sharded`, and each engine of `rlvr.runners.engine`, in this process or in a Ray
actor) scores a batch with `score_rows`, so the same rows get the same output wherever they run.

An output row is the input object plus `_line` (its id) and `verdict` (`Verdict.model_dump()`);
a row that cannot be verified (not JSON, not an object, a missing, null or mistyped key) gets
`_bad_row: true` and an error verdict whose `detail` names the line and the key; a line that is
not a JSON object is kept as text under `_raw`. An input row's own `_line`, `verdict` and
`_bad_row` are replaced (`RESERVED`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rlvr.core.metrics import VerdictStats
from rlvr.core.types import Verdict
from rlvr.verifiers.base import Verifier

__all__: list[str] = []

RAW_CHARS = 2000
"""Most characters of a line that is not a JSON object kept under `_raw`."""
RESERVED = ("_line", "verdict", "_bad_row")
"""Output columns an input row may not carry itself: replaced in the output (with a warning)."""

RowKeys = tuple[str, str] | tuple[str, str, str | None, str | None]
"""(response key, reference key[, prompt key, group key]) of input rows, as `parse_row` takes them."""

Batch = list[tuple[int, str]]
"""Rows of one batch: `(row_id, row as JSON text)`, ids ascending; row ids are 1-based input positions."""

_Item = TypeVar("_Item")


@dataclass
class BatchResult:
    """The output of one batch.

    Attributes:
        ids: row ids, in the batch's order.
        lines: output rows as JSON text (no newline), `lines[i]` for `ids[i]`; each is the input
            row plus `_line` and `verdict` (and `_bad_row` for rows that could not be verified).
        bad: messages of the batch's bad rows (not JSON, missing key...).
        replaced: reserved output keys (`verdict`, `_line`, `_bad_row`) found in input rows.
        attempts: how many times the batch was sent to a worker (1 when it worked first time).
    """

    ids: list[int]
    lines: list[str]
    bad: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    attempts: int = 1


@dataclass
class VerifyStats(VerdictStats):
    """Counts over the whole output file (resumed rows included); `statuses` etc. as in `VerdictStats`.

    Attributes:
        bad_rows: rows that could not be verified (bad JSON or keys); counted under `error`.
        resumed: rows found already done in the output at start.
        written: rows written by this run.
        blank_lines: blank input lines skipped.
        expected_total: rows with an `expected` status field.
        expected_match: of those, rows whose verdict status equals `expected`.
        missing_keys: key → bad rows (JSON objects) that lack it (for `key_hint`).
        sample_keys: the input keys of the first such bad row.
        replaced_keys: reserved output keys (`verdict`, `_line`, `_bad_row`) found in input rows.
    """

    bad_rows: int = 0
    resumed: int = 0
    written: int = 0
    blank_lines: int = 0
    expected_total: int = 0
    expected_match: int = 0
    missing_keys: Counter[str] = field(default_factory=Counter)
    sample_keys: list[str] | None = None
    replaced_keys: set[str] = field(default_factory=set)

    @property
    def scored(self) -> int:
        """Rows that reached the verifier (every row but the bad ones; grader errors included)."""
        return self.total - self.bad_rows

    @property
    def accuracy(self) -> float | None:
        """Correct / scored (a grader error counts against it), or None when nothing was scored."""
        return self.statuses["correct"] / self.scored if self.scored else None

    def add(self, row: dict[str, Any], expected_key: str, keys: tuple[str, ...] = ()) -> None:
        """Count one output row; `keys` (response and reference key) feed `key_hint`."""
        verdict = row.get("verdict") or {}
        status = str(verdict.get("status", "error"))
        reward = verdict.get("reward")
        self.count(status, float(reward) if isinstance(reward, (int, float)) else None)
        bad = bool(row.get("_bad_row"))
        self.bad_rows += bad
        if bad and "_raw" not in row:
            for key in keys:
                self.missing_keys[key] += key not in row
            if self.sample_keys is None:
                self.sample_keys = sorted(k for k in row if k not in RESERVED)
        expected = row.get(expected_key)
        if isinstance(expected, str) and not bad:
            self.expected_total += 1
            self.expected_match += expected == status

    def key_hint(self, response_key: str, reference_key: str) -> str | None:
        """When every row is bad because a key is absent from all of them: how to fix it, else None."""
        total = self.total
        if not total or self.bad_rows != total:
            return None
        options = ((response_key, "--response-key"), (reference_key, "--reference-key"))
        lacking = [(key, option) for key, option in options if self.missing_keys[key] == total]
        if not lacking:
            return None
        available = ", ".join(self.sample_keys or []) or "none"
        names = " or ".join(repr(key) for key, _ in lacking)
        fixes = " and ".join(f"{option} KEY" for _, option in lacking)
        return f"all {total} rows lack key {names}; pass {fixes} (available keys: {available})"


def extract_response(value: Any) -> str | None:
    """The response text: a string, or the last assistant message of a chat list; else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for message in reversed(value):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                content = message.get("content")
                return content if isinstance(content, str) else None
    return None


def _a(kind: str) -> str:
    """`kind` with its indefinite article: 'an int', 'a dict'."""
    return f"{'an' if kind[:1] in ('a', 'e', 'i', 'o', 'u') else 'a'} {kind}"


def _response_problem(key: str, value: Any) -> str:
    """Why `extract_response(value)` found no response text."""
    if isinstance(value, list):
        if not any(isinstance(m, dict) and m.get("role", "assistant") == "assistant" for m in value):
            return f"key {key!r} is a chat list with no assistant message"
        return f"key {key!r}: the last assistant message has no string 'content'"
    return f"key {key!r} is {_a(type(value).__name__)}, expected a string or chat messages"


def parse_row(lineno: int, text: str, response_key: str, reference_key: str, prompt_key: str | None = None,
              group_key: str | None = None) -> tuple[dict[str, Any], Any, str | None]:
    """Return (row, (response, reference) or None, problem or None) for one input line.

    Numeric references are passed on as strings. With `prompt_key` (judge verifiers) the
    reference is `{"prompt": row[prompt_key], "reference": row.get(reference_key)}` and the
    reference column is optional; `group_key` must be present.
    """
    try:
        row = json.loads(text)
    except ValueError as exc:
        return {"_raw": text[:RAW_CHARS]}, None, f"line {lineno}: not valid JSON ({exc})"
    if not isinstance(row, dict):
        return {"_raw": text[:RAW_CHARS]}, None, f"line {lineno}: expected a JSON object, got {_a(type(row).__name__)}"
    required = (response_key, prompt_key) if prompt_key else (response_key, reference_key)
    for key in required + ((group_key,) if group_key else ()):
        if key not in row:
            keys = ", ".join(sorted(row)) or "none"
            return row, None, f"line {lineno}: missing key {key!r} (row has keys: {keys})"
        if row[key] is None:
            return row, None, f"line {lineno}: key {key!r} is null"
    response = extract_response(row[response_key])
    if response is None:
        return row, None, f"line {lineno}: {_response_problem(response_key, row[response_key])}"
    reference = row.get(reference_key)
    if isinstance(reference, (int, float)) and not isinstance(reference, bool):
        reference = str(reference)
    if prompt_key:
        reference = {"prompt": row[prompt_key], "reference": reference}
    return row, (response, reference), None


def batched(items: Iterable[_Item], size: int) -> Iterator[list[_Item]]:
    """`items` in lists of `size` (the last may be shorter), read lazily."""
    batch: list[_Item] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def group_value(row: dict[str, Any], group_key: str) -> str:
    """The value of `row[group_key]` as canonical JSON: rows with equal text are judged as one group."""
    return json.dumps(row.get(group_key), sort_keys=True, default=str)


def _strip_reserved(row: dict[str, Any], found: set[str]) -> dict[str, Any]:
    """`row` without the output's own keys (`RESERVED`); adds the ones it had to `found`."""
    clash = [key for key in RESERVED if key in row]
    if not clash:
        return row
    found.update(clash)
    return {k: v for k, v in row.items() if k not in RESERVED}


def _verify_grouped(verifier: Verifier, pairs: list[tuple[str, Any]], groups: list[str]) -> list[Verdict]:
    """Score `pairs` with `verifier.verify_groups`, one group per distinct value in `groups`; input order."""
    members: dict[str, list[int]] = {}
    for i, value in enumerate(groups):
        members.setdefault(value, []).append(i)
    group_verify = verifier.verify_groups  # type: ignore[attr-defined]  # checked by the caller (a group verifier)
    results = group_verify([([pairs[i][0] for i in idx], pairs[idx[0]][1]) for idx in members.values()])
    out: dict[int, Verdict] = {}
    for idx, verdicts in zip(members.values(), results, strict=True):
        out.update(zip(idx, verdicts, strict=True))
    return [out[i] for i in range(len(pairs))]


def score_rows(verifier: Verifier, batch: Batch, keys: RowKeys, workers: int = 1) -> BatchResult:
    """Parse and verify one batch with `verifier` (up to `workers` processes).

    Args:
        verifier: the verifier (its worker pool stays warm between calls).
        batch: `(row_id, JSON text)` pairs.
        keys: (response key, reference key[, prompt key, group key]) (`RowKeys`); with a group key,
            the rows of each group are scored together by `verifier.verify_groups`.
        workers: verifier worker processes for this batch.

    Returns:
        A `BatchResult` with one output line per row, in the batch's order.
    """
    replaced: set[str] = set()
    parsed = [(lineno, _strip_reserved(row, replaced), pair, problem)
              for lineno, text in batch for row, pair, problem in [parse_row(lineno, text, *keys)]]
    pairs = [pair for _, _, pair, _ in parsed if pair is not None]
    group_key = keys[3] if len(keys) > 3 else None
    if group_key and pairs:
        groups = [group_value(row, group_key) for _, row, pair, _ in parsed if pair is not None]
        verdicts = iter(_verify_grouped(verifier, pairs, groups))
    else:
        verdicts = iter(verifier.verify_batch(pairs, workers=workers) if pairs else [])
    bad: list[str] = []
    lines: list[str] = []
    for lineno, row, _pair, problem in parsed:
        if problem is not None:
            bad.append(problem)
            verdict = Verdict.error(problem)
            row = {**row, "_bad_row": True}
        else:
            verdict = next(verdicts)
        lines.append(json.dumps({**row, "_line": lineno, "verdict": verdict.model_dump(mode="json")},
                                ensure_ascii=False))
    return BatchResult(ids=[row_id for row_id, _ in batch], lines=lines, bad=bad, replaced=sorted(replaced))

