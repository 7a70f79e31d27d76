"""`compare_command`: the whole `rlvr compare` run (stages and output folder: `rlvr.runners.compare`)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from rlvr.core.errors import ConfigError, MissingExtraError, RlvrError
from rlvr.core.files import atomic_write
from rlvr.runners.compare.steps import ParityRecords, build_records, probe_all, run_one, tokenizer_name
from rlvr.runners.compare.summary import (
    BackendResult,
    CompareSummary,
    mark_interrupted,
    prepare_output,
    write_outputs,
)
from rlvr.runners.train.config import BACKENDS, TrainConfig
from rlvr.runners.train.interpreter import Probe
from rlvr.runners.train.process import interrupt_on_terminate

__all__ = ["compare_command", "parse_backends"]


def parse_backends(text: str) -> list[str]:
    """`"trl,verl"` -> ['trl', 'verl'] (order kept, duplicates dropped).

    Raises:
        ConfigError: empty, or a name not in `BACKENDS`.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BACKENDS]
    if not names or unknown:
        raise ConfigError(f"--backends must list some of {', '.join(BACKENDS)} (comma-separated), got "
                          f"{text!r}" + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    return list(dict.fromkeys(names))


def require_matplotlib() -> None:
    """Raise `MissingExtraError` (naming `pip install 'rlvr[trl]'`) unless matplotlib imports."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("matplotlib", "trl") from exc


def compare_command(
    env: str,
    env_args: dict[str, Any] | None,
    backends: Sequence[str],
    output: Path,
    *,
    steps: int = 2,
    model: str = "smollm2",
    pythons: dict[str, str | None] | None = None,
    trainer_args: dict[str, dict[str, str]] | None = None,
    n_tasks: int = 2,
    train: bool = True,
    train_timeout_s: float | None = None,
    echo: IO[str] | None = None,
) -> CompareSummary:
    """Compare `backends` on environment `env`; write `summary.json` and `report.html` into `output`.

    Args:
        env: environment id.
        env_args: its factory arguments.
        backends: names from `BACKENDS`.
        output: the output folder: new, empty, or an earlier comparison's (whose results are removed
            first; other files are kept).
        steps: training steps per backend.
        model: model folder or Hub id, or 'smollm2' (the embedded SmolLM2-135M-Instruct); its tokenizer
            builds the parity records.
        pythons: backend -> interpreter (None: `$RLVR_<BACKEND>_PYTHON`, else this Python).
        trainer_args: backend -> options passed to its `rlvr train --trainer-arg` (TRL defaults:
            `TRL_COMPARE_ARGS`).
        n_tasks: tasks the parity records are built from.
        train: False skips training (parity and dry-run commands only).
        train_timeout_s: time limit of each backend's training run, seconds (None: none); a run
            stopped at it is reported as failed, with its curve so far.
        echo: where training output is copied live (default stderr).

    Returns:
        The summary (also written to `output/summary.json`).

    Raises:
        ConfigError: unknown backend or env, bad steps, an output folder that is a file or holds
            other files but no earlier comparison.
        KeyboardInterrupt: Ctrl-C or SIGTERM, after stopping the running trainer's process group and
            writing the partial summary and report.
        MissingExtraError: matplotlib is missing (the report's plots). Parity records that cannot be
            built (no interpreter with transformers) are reported per backend, not raised.
    """
    names = parse_backends(",".join(backends))
    summary = _start(env, dict(env_args or {}), model, steps, Path(output).resolve())
    args, output = summary.env_args, Path(summary.output)
    stream = echo if echo is not None else sys.stderr
    probed: list[tuple[BackendResult, Probe | None]] = []
    with interrupt_on_terminate():  # SIGTERM stops the running backend's process group, like Ctrl-C
        try:
            probed = probe_all(names, pythons or {})
            parity = _parity_records(summary, [found.python for _, found in probed if found is not None], n_tasks)
            for result, found in probed:
                summary.backends.append(result)
                if found is None:
                    result.status = "unavailable"
                    continue
                options = dict(backend=result.backend, env=env, env_args=args, model=model, steps=steps,
                               output=output / result.backend,
                               trainer_args=(trainer_args or {}).get(result.backend, {}))
                _run_backend(result, found, options, parity, train, train_timeout_s, stream)
        except KeyboardInterrupt:  # keep what ran: a partial report, then stop as interrupted
            mark_interrupted(summary, names, probed)
            write_outputs(summary, output)
            print(f"rlvr compare: interrupted; partial report in {output / 'report.html'}", file=stream)
            raise
    write_outputs(summary, output)
    return summary


def _start(env: str, env_args: dict[str, Any], model: str, steps: int, output: Path) -> CompareSummary:
    """Check what can be checked before anything is written, prepare `output`; the summary to fill.

    Raises:
        ConfigError: bad steps, an unknown env or a bad argument, an output folder that cannot be used.
        MissingExtraError: matplotlib is missing.
    """
    if steps < 1:
        raise ConfigError(f"steps must be >= 1, got {steps}")
    require_matplotlib()
    from rlvr.environments.registry import make

    make(env, **env_args).close()  # an unknown env or bad argument fails before anything is written
    prepare_output(output)
    return CompareSummary(env_id=env, env_args=env_args, model=model, steps=steps, output=str(output),
                          created=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))


def _parity_records(summary: CompareSummary, pythons: list[str], n_tasks: int) -> ParityRecords:
    """Build the parity records (here, or in the first of `pythons` that can), write them, list them in `summary`.

    None are built when no backend can run; records that cannot be built are reported per backend.
    """
    tokenizer = tokenizer_name(summary.model)
    records: list[dict[str, Any]] = []
    error = None
    if pythons:
        try:
            records = build_records(summary.env_id, summary.env_args, tokenizer, n_tasks, pythons)
        except RlvrError as exc:  # reported per backend; training and dry runs still go ahead
            error = f"parity records could not be built: {exc}"
    path = Path(summary.output) / "parity" / "records.json"
    atomic_write(path, json.dumps({"tokenizer": tokenizer, "records": records}))
    summary.records = [{"id": r["id"], "kind": r["kind"], "multi_turn": r["multi_turn"],
                        "status": r["expected"]["status"], "reward": r["expected"]["reward"]} for r in records]
    return ParityRecords(path=path, records=records, tokenizer=tokenizer, error=error)


def _run_backend(result: BackendResult, found: Probe, options: dict[str, Any], parity: ParityRecords, train: bool,
                 timeout_s: float | None, stream: IO[str]) -> None:
    """`run_one` with the `TrainConfig` of `options`; an error fails this backend only.

    Until `run_one` finishes, the backend stands 'interrupted', which is what an interrupt leaves.
    """
    result.status, result.reason = "interrupted", "stopped by Ctrl-C/SIGTERM before it finished"
    try:
        run_one(result, found, TrainConfig.build(**options), parity, train=train, timeout_s=timeout_s, stream=stream)
    except RlvrError as exc:  # e.g. a --verl-arg veRL rejects: this backend fails, the others still run
        result.status, result.reason = "failed", str(exc)
