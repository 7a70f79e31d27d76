"""`rlvr verify`: score a JSONL of responses, writing verdicts incrementally and resumably.

Each input line is a JSON object with a response and a reference; each output line is that
object plus `_line` (its 1-based input line number) and `verdict` (`Verdict.model_dump()`).

Guarantees:

- Incremental: rows are written (and flushed) batch by batch, in input order; the file is
  fsynced every few seconds and at the end.
- Resumable: rerunning the same command skips input lines whose `_line` is already in the
  output; a torn last line (left by `kill -9` mid-write) is cut off first. Nothing is lost or
  duplicated.
- Nothing is dropped silently: a bad row (not JSON, not an object, missing or mistyped key) is
  written with `_bad_row: true` and an error verdict whose `detail` names the line and key,
  and is counted in the summary. Blank lines are skipped (and counted).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Verdict
from rlvr.verifiers.base import Verifier

__all__ = ["VerifyStats", "count_rows", "extract_response", "sample_rows", "scan_output", "verify_file"]

_FSYNC_EVERY_S = 5.0
_RAW_CHARS = 2000


@dataclass
class VerifyStats:
    """Counts over the whole output file (resumed rows included).

    Attributes:
        statuses: verdict status → rows (bad rows count under 'error').
        bad_rows: rows that could not be verified (bad JSON or keys).
        resumed: rows found already done in the output at start.
        written: rows written by this run.
        blank_lines: blank input lines skipped.
        expected_total: rows with an `expected` status field.
        expected_match: of those, rows whose verdict status equals `expected`.
    """

    statuses: Counter[str] = field(default_factory=Counter)
    bad_rows: int = 0
    resumed: int = 0
    written: int = 0
    blank_lines: int = 0
    expected_total: int = 0
    expected_match: int = 0

    @property
    def scored(self) -> int:
        """Rows that reached the verifier (every row but the bad ones)."""
        return sum(self.statuses.values()) - self.bad_rows

    @property
    def accuracy(self) -> float | None:
        """Correct / scored, or None when nothing was scored."""
        return self.statuses["correct"] / self.scored if self.scored else None

    def add(self, row: dict[str, Any], expected_key: str) -> None:
        """Count one output row."""
        verdict = row.get("verdict") or {}
        status = str(verdict.get("status", "error"))
        self.statuses[status] += 1
        self.bad_rows += bool(row.get("_bad_row"))
        expected = row.get(expected_key)
        if isinstance(expected, str) and not row.get("_bad_row"):
            self.expected_total += 1
            self.expected_match += expected == status


def count_rows(path: Path) -> int:
    """Number of non-blank lines in `path` (the progress-bar total)."""
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


def scan_output(path: Path, expected_key: str = "expected") -> tuple[set[int], VerifyStats]:
    """Read an existing output file: the input lines already done, and their stats.

    A torn last line (no trailing newline, as left by `kill -9`) is truncated away.

    Raises:
        DataError: a complete line that is not JSON, or a row without an integer `_line`
            (the file was not written by `rlvr verify`); the message says to pass --overwrite.
    """
    done: set[int] = set()
    stats = VerifyStats()
    if not path.exists():
        return done, stats
    good_end = 0
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):
                break  # torn last line: cut below
            good_end += len(raw)
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
                line = row["_line"]
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(f"{path}:{lineno}: not a row written by `rlvr verify` ({exc}); "
                                "fix the file or pass --overwrite to start over") from exc
            if not isinstance(line, int) or line in done:
                raise DataError(f"{path}:{lineno}: bad or duplicate _line {line!r}; pass --overwrite to start over")
            done.add(line)
            stats.add(row, expected_key)
    if good_end < path.stat().st_size:
        with path.open("r+b") as f:
            f.truncate(good_end)
    stats.resumed = len(done)
    return done, stats


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


def _parse(lineno: int, text: str, response_key: str, reference_key: str) -> tuple[dict[str, Any], Any, str | None]:
    """Return (row, (response, reference) or None, problem or None) for one input line."""
    try:
        row = json.loads(text)
    except ValueError as exc:
        return {"_raw": text[:_RAW_CHARS]}, None, f"line {lineno}: not valid JSON ({exc})"
    if not isinstance(row, dict):
        return {"_raw": text[:_RAW_CHARS]}, None, f"line {lineno}: expected a JSON object, got {type(row).__name__}"
    for key in (response_key, reference_key):
        if key not in row or row[key] is None:
            keys = ", ".join(sorted(row)) or "none"
            return row, None, f"line {lineno}: missing key {key!r} (row has keys: {keys})"
    response = extract_response(row[response_key])
    if response is None:
        kind = type(row[response_key]).__name__
        return row, None, f"line {lineno}: key {response_key!r} is a {kind}, expected a string or chat messages"
    reference = row[reference_key]
    if isinstance(reference, (int, float)) and not isinstance(reference, bool):
        reference = str(reference)
    return row, (response, reference), None


def _iter_input(path: Path, stats: VerifyStats) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8", errors="replace") as f:
        for lineno, text in enumerate(f, start=1):
            if text.strip():
                yield lineno, text
            else:
                stats.blank_lines += 1


def _batches(items: Iterator[tuple[int, str]], size: int) -> Iterator[list[tuple[int, str]]]:
    batch: list[tuple[int, str]] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _score_batch(
    batch: list[tuple[int, str]], verifier: Verifier, keys: tuple[str, str], workers: int,
    on_bad: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Parse and verify one batch; return the output rows in input order."""
    parsed = [(lineno, *_parse(lineno, text, *keys)) for lineno, text in batch]
    pairs = [pair for _, _, pair, _ in parsed if pair is not None]
    verdicts = iter(verifier.verify_batch(pairs, workers=workers) if pairs else [])
    out: list[dict[str, Any]] = []
    for lineno, row, _pair, problem in parsed:
        if problem is not None:
            on_bad(problem)
            verdict = Verdict.error(problem)
            row = {**row, "_bad_row": True}
        else:
            verdict = next(verdicts)
        out.append({**row, "_line": lineno, "verdict": verdict.model_dump(mode="json")})
    return out


def verify_file(
    input_path: Path,
    output_path: Path,
    verifier: Verifier,
    *,
    response_key: str = "response",
    reference_key: str = "reference",
    expected_key: str = "expected",
    workers: int = 1,
    batch_size: int | None = None,
    overwrite: bool = False,
    on_progress: Callable[[int], None] | None = None,
    on_bad: Callable[[str], None] | None = None,
) -> VerifyStats:
    """Verify every row of `input_path` into `output_path`, resuming from what is already there.

    Args:
        input_path: JSONL, one object per line with `response_key` and `reference_key`.
        output_path: JSONL written incrementally (appended to when resuming).
        verifier: scores `(response, reference)`; numeric references are passed as strings.
        response_key: key of the response (a string, or chat messages: the last assistant one counts).
        reference_key: key of the reference.
        expected_key: optional key of an expected status, compared in the stats.
        workers: verifier worker processes.
        batch_size: rows verified and written per batch (default `max(8, 4 * workers)`).
        overwrite: start over, discarding an existing output.
        on_progress: called with the number of rows just finished (resumed rows first).
        on_bad: called with the message of each bad row.

    Returns:
        `VerifyStats` over the whole output file.

    Raises:
        ConfigError: input and output are the same file, or the input is missing.
        DataError: the existing output is not resumable (see `scan_output`), or holds rows for
            lines the input does not have.
    """
    done, stats = _prepare_output(input_path, output_path, overwrite, expected_key)
    if on_progress and done:
        on_progress(len(done))
    keys = (response_key, reference_key)
    size = batch_size or max(8, 4 * workers)
    todo = (item for item in _iter_input(input_path, stats) if item[0] not in done)
    with output_path.open("a", encoding="utf-8") as out:
        try:
            _write_batches(out, _batches(todo, size), verifier, keys, workers, stats, expected_key,
                           on_progress, on_bad or (lambda _msg: None))
        finally:
            out.flush()
            os.fsync(out.fileno())
    return stats


def _prepare_output(input_path: Path, output_path: Path, overwrite: bool, expected_key: str) -> tuple[
    set[int], VerifyStats
]:
    """Validate the paths, then return the input lines already done in the output and their stats."""
    if not input_path.is_file():
        raise ConfigError(f"input file {str(input_path)!r} does not exist")
    if output_path.exists() and input_path.resolve() == output_path.resolve():
        raise ConfigError("the output file must differ from the input file")
    if overwrite and output_path.exists():
        output_path.unlink()
    output_path.parent.mkdir(parents=True, exist_ok=True)
    done, stats = scan_output(output_path, expected_key)
    if done and max(done) > _last_line(input_path):
        raise DataError(f"{output_path} has a row for input line {max(done)}, but {input_path} is shorter: "
                        "is this output from another input? Pass --overwrite to start over")
    return done, stats


def _write_batches(
    out: IO[str], batches: Iterator[list[tuple[int, str]]], verifier: Verifier, keys: tuple[str, str],
    workers: int, stats: VerifyStats, expected_key: str,
    on_progress: Callable[[int], None] | None, on_bad: Callable[[str], None],
) -> None:
    last_sync = time.monotonic()
    for batch in batches:
        rows = _score_batch(batch, verifier, keys, workers, on_bad)
        out.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        out.flush()
        for row in rows:
            stats.add(row, expected_key)
        stats.written += len(rows)
        if on_progress:
            on_progress(len(rows))
        if time.monotonic() - last_sync > _FSYNC_EVERY_S:
            os.fsync(out.fileno())
            last_sync = time.monotonic()


def _last_line(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def _perturb(reference: str) -> str | None:
    """A wrong numeric answer (reference + 1), or None when the reference is not a plain number."""
    text = reference.strip().replace(",", "")
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return None
        return repr(number + 1.0)
    return str(value + 1)


def sample_rows(env: Any, n: int) -> Iterator[dict[str, Any]]:
    """Rows for `rlvr verify` built from `n` tasks of `env`, each with the status it should get.

    Per task: the reference response (`expected: correct`), the reference answer + 1 when it is
    a number (`incorrect`), an empty response (`no_answer`) and a response without an answer
    (`no_answer`; `incorrect` under the reasoning-gym grader, which reads the last line as the answer).
    Fields: `task_id`, `prompt` (chat messages), `response`, `reference`, `expected`, `kind`.
    """
    count = min(n, len(env.tasks))
    # reasoning-gym's grader takes the last line as the answer when there is no tag: a wrong answer
    hedge = "incorrect" if env.verifier.name.startswith("reasoning_gym") else "no_answer"
    for i in range(count):
        task = env.tasks[i]
        reference = task.reference
        prompt = [m.to_openai() for m in task.prompt]
        base = {"task_id": task.id, "prompt": prompt, "reference": reference}
        yield {**base, "kind": "reference", "response": env.verifier.reference_response(reference),
               "expected": "correct"}
        wrong = _perturb(reference) if isinstance(reference, str) else None
        if wrong is not None:
            yield {**base, "kind": "off_by_one", "response": f"The final answer is \\boxed{{{wrong}}}.",
                   "expected": "incorrect"}
        yield {**base, "kind": "empty", "response": "", "expected": "no_answer"}
        yield {**base, "kind": "no_answer", "response": "I am not sure how to solve this.", "expected": hedge}
