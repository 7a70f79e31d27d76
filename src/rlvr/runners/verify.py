"""`rlvr verify`: score a JSONL of responses, writing verdicts incrementally and resumably.

Each input line is a JSON object with a response and a reference; each output line is that
object plus `_line` (its 1-based input line number) and `verdict` (`Verdict.model_dump()`).

Guarantees:

- Incremental: rows are scored by the local engine (`rlvr.runners.engine.LocalEngine`, this
  machine's verifier processes) and written (and flushed) batch by batch, in input order; the
  file is fsynced every few seconds and at the end (`rlvr.runners.resumable`, as every
  resumable output). Out-of-order engines (Ray) go through `rlvr.runners.sharded`.
- Resumable: rerunning the same command skips input lines whose `_line` is already in the
  output; a torn last line (left by `kill -9` mid-write) is cut off first. Nothing is lost or
  duplicated.
- Nothing is dropped silently: a bad row (not JSON, not an object, missing, null or mistyped
  key) is written with `_bad_row: true` and an error verdict whose `detail` names the line and
  key, and is counted in the summary. A line that is not a JSON object is kept as text under
  `_raw`. Blank lines are skipped (and counted).
- Resuming is safe: the run configuration (input file, verifier name and options, response and
  reference keys) is recorded next to the output in `OUTPUT.meta.json`; a rerun with a
  different configuration is refused (`--overwrite` starts over), so verdicts of two
  configurations never mix in one file.
- An input row's own `verdict`, `_line` or `_bad_row` keys are replaced in the output (with one
  warning), e.g. when an `rlvr verify` output is verified again.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.runners.engine.base import drive
from rlvr.runners.engine.local import LocalEngine
from rlvr.runners.resumable import ResumableOutput
from rlvr.runners.rowio import JsonlSource
from rlvr.runners.rows import BatchResult, RowKeys, VerifyStats, batched, group_value
from rlvr.verifiers.base import Verifier

__all__: list[str] = []

_EXECUTION_ONLY = {"scoring", "workers", "max_concurrency", "backoff_s", "cache", "cache_path"}
"""Verifier options that do not change verdicts: left out of the recorded configuration."""


def scan_output(
    path: Path, expected_key: str = "expected", keys: tuple[str, ...] = ()
) -> tuple[set[int], VerifyStats]:
    """Read an existing output file: the input lines already done, and their stats.

    A torn last line (no trailing newline, as left by `kill -9`) is truncated away
    (`rlvr.runners.resumable.complete_lines`). `keys` (response and reference key) let the stats
    report rows lacking them (`VerifyStats.key_hint`).

    Raises:
        DataError: a complete line that is not JSON, a row without an integer `_line` (the file was
            not written by `rlvr verify`) or a repeated `_line`; the message says to pass --overwrite.
    """
    stats = VerifyStats()
    done = ResumableOutput[int](path, {}).resume(_row_reader(path, stats, expected_key, keys))
    stats.resumed = len(done)
    return done, stats


def _row_reader(path: Path, stats: VerifyStats, expected_key: str,
                keys: tuple[str, ...]) -> Callable[[int, bytes], int]:
    """`ResumableOutput.resume`'s reader of `rlvr verify` rows: the row's `_line`, counted in `stats`."""

    def read(lineno: int, raw: bytes) -> int:
        try:
            row = json.loads(raw)
            line = row["_line"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{path}:{lineno}: not a row written by `rlvr verify` ({exc}); "
                            "fix the file or pass --overwrite to start over") from exc
        if not isinstance(line, int):
            raise DataError(f"{path}:{lineno}: bad _line {line!r}; pass --overwrite to start over")
        stats.add(row, expected_key, keys)
        return line

    return read


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
    on_warning: Callable[[str], None] | None = None,
    prompt_key: str | None = None,
    group_key: str | None = None,
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
        on_warning: called once when input rows carry the output's own keys (`verdict`,
            `_line`, `_bad_row`), which are replaced; default `warnings.warn`.
        prompt_key: key of the question or chat prompt, for judge verifiers (`wants_prompt`): each
            reference becomes `{"prompt": row[prompt_key], "reference": row.get(reference_key)}`, and
            the reference column is optional.
        group_key: rows sharing this key's value are scored together in one call by a group verifier
            (`verify_groups`, e.g. `ruler`); the first row's prompt and reference stand for the group,
            batches hold whole groups and are written ordered by line. A group cut by a kill mid-batch
            is re-judged from its missing rows only.

    Returns:
        `VerifyStats` over the whole output file.

    Raises:
        ConfigError: input and output are the same file, the input is missing, or the output
            was written with another configuration (see `run_config`; pass `overwrite=True`).
        DataError: the existing output is not resumable (see `scan_output`), or holds rows for
            lines the input does not have.
    """
    _check_judge_keys(verifier, prompt_key, group_key)
    config = run_config(input_path, verifier, response_key, reference_key)
    config.update({k: v for k, v in (("prompt_key", prompt_key), ("group_key", group_key)) if v is not None})
    done, stats, output = _prepare_output(input_path, output_path, overwrite, expected_key, config)
    if on_progress and done:
        on_progress(len(done))
    size = batch_size or max(8, 4 * workers)
    todo = (item for item in JsonlSource(input_path).rows(stats) if item[0] not in done)
    pending = _group_batches(todo, group_key, size) if group_key else batched(todo, size)
    parse_keys: RowKeys = (response_key, reference_key, prompt_key, group_key)
    with output.append() as out:

        def write(result: BatchResult) -> None:
            out.write("".join(line + "\n" for line in result.lines))
            for line in result.lines:
                stats.add(json.loads(line), expected_key, (response_key, reference_key))
            stats.replaced_keys.update(result.replaced)
            stats.written += len(result.ids)

        drive(LocalEngine(verifier, workers), pending, parse_keys, write, on_progress=on_progress, on_bad=on_bad,
              on_warning=on_warning or _warn)
    return stats


def _check_judge_keys(verifier: Verifier, prompt_key: str | None, group_key: str | None) -> None:
    if prompt_key and not getattr(verifier, "wants_prompt", False):
        raise ConfigError(f"--prompt-key is for judge verifiers (judge, ruler); {verifier.name!r} scores against "
                          "the reference alone: drop --prompt-key")
    if group_key and not callable(getattr(verifier, "verify_groups", None)):
        raise ConfigError(f"--group-key needs a group verifier (ruler); {verifier.name!r} scores rows one by one")


def _group_batches(items: Iterator[tuple[int, str]], group_key: str, size: int) -> Iterator[list[tuple[int, str]]]:
    """Batches of whole groups (rows sharing `group_key`), each ordered by line; reads the pending input once."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for lineno, text in items:
        try:
            row = json.loads(text)
            key = group_value(row, group_key) if isinstance(row, dict) and group_key in row else f"bad:{lineno}"
        except ValueError:
            key = f"bad:{lineno}"
        groups.setdefault(key, []).append((lineno, text))
    batch: list[tuple[int, str]] = []
    for members in groups.values():
        batch += members
        if len(batch) >= size:
            yield sorted(batch)
            batch = []
    if batch:
        yield sorted(batch)


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)


def run_config(input_path: Path, verifier: Verifier, response_key: str, reference_key: str) -> dict[str, Any]:
    """The configuration an output's verdicts depend on (recorded in `meta_path`, compared on resume).

    Verifier options that only change how scoring runs (`scoring`, `workers`; for judges also
    `max_concurrency`, `backoff_s`, `cache`, `cache_path`) are left out.
    """
    try:
        options = verifier.config.model_dump(mode="json", exclude=_EXECUTION_ONLY)
    except AttributeError:  # a custom verifier without a pydantic config
        options = {}
    return {"input": str(input_path.resolve()), "verifier": verifier.name, "verifier_config": options,
            "response_key": response_key, "reference_key": reference_key}


VERIFIER_LABELS = {"verifier_config": "verifier option"}
"""How the run record names the verifier's options in a refusal (`RunRecord` labels)."""


def _prepare_output(
    input_path: Path, output_path: Path, overwrite: bool, expected_key: str, config: dict[str, Any]
) -> tuple[set[int], VerifyStats, ResumableOutput[int]]:
    """Validate the paths and the configuration, record it; return the lines already done, their stats, the output."""
    if not input_path.is_file():
        raise ConfigError(f"input file {str(input_path)!r} does not exist")
    if output_path.exists() and input_path.resolve() == output_path.resolve():
        raise ConfigError("the output file must differ from the input file")
    output = ResumableOutput[int](output_path, config, labels=VERIFIER_LABELS)
    output.prepare(overwrite)
    stats = VerifyStats()
    done = output.resume(_row_reader(output_path, stats, expected_key, (config["response_key"],
                                                                          config["reference_key"])))
    stats.resumed = len(done)
    if output.found:
        output.record.check()
    if done and max(done) > JsonlSource(input_path).max_id():
        raise DataError(f"{output_path} has a row for input line {max(done)}, but {input_path} is shorter: "
                        "is this output from another input? Pass --overwrite to start over")
    output.record.write()
    return done, stats, output


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
