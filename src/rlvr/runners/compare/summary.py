"""What `rlvr compare` records: `summary.json` (`CompareSummary`, one `BackendResult` per backend) and its folder.

`prepare_output` makes the output folder safe to write (new, empty, or an earlier comparison's,
whose results are removed first); `write_outputs` writes `summary.json` and `report.html` (both
atomically), also for a comparison cut short (`mark_interrupted`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.files import atomic_write
from rlvr.runners.compare.report import write_report
from rlvr.runners.train.config import BACKENDS
from rlvr.runners.train.interpreter import Probe

__all__: list[str] = []


@dataclass
class BackendResult:
    """One backend's part of the comparison (a `summary.json` entry).

    Attributes:
        backend: 'trl', 'verl' or 'openrlhf'.
        python: the interpreter used (None when it could not be chosen).
        status: 'trained', 'dry-run' (files and command only: no GPU), 'failed' (training exited
            non-zero), 'interrupted' (Ctrl-C/SIGTERM during its steps; partial curve kept), 'skipped'
            (not reached: the comparison was interrupted before it) or 'unavailable' (the interpreter
            lacks rlvr or the backend).
        reason: why it is not 'trained' ('' when it is).
        probe: the interpreter's report (versions, `cuda_devices`).
        parity: {"records", "agree", "wall_s", "mismatches": [{"id", "problems"}], "results": [...]}, or
            None when not run; `error` instead when the replay could not run at all.
        train: {"steps", "wall_s", "train_s", "step_s", "tokens_per_s", "peak_mb", "final_reward", "exit_code",
            "curve": [rows], "output"}
            for a training run, None otherwise. Curve rows have `step`, `reward` and where the backend
            logs them `correct`/`incorrect`/`no_answer`/`timeout`/`error` fractions.
        command: the training command (also for a dry run).
        export_dir: the export folder (veRL/OpenRLHF).
        settings: how the run was aligned with the others (`CPU_ALIGNMENT`; '' on a GPU: the backend's
            command as `rlvr train` builds it).
    """

    backend: str
    python: str | None = None
    status: str = "unavailable"
    reason: str = ""
    probe: dict[str, Any] = field(default_factory=dict)
    parity: dict[str, Any] | None = None
    train: dict[str, Any] | None = None
    command: list[str] | None = None
    export_dir: str | None = None
    settings: str = ""


@dataclass
class CompareSummary:
    """`summary.json`: the configuration, the parity records' expected results, and one entry per backend."""

    env_id: str
    env_args: dict[str, Any]
    model: str
    steps: int
    output: str
    records: list[dict[str, Any]] = field(default_factory=list)
    backends: list[BackendResult] = field(default_factory=list)
    created: str = ""
    report: str = ""

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON-serialisable dict."""
        return asdict(self)


def train_summary(rows: list[dict[str, Any]], wall_s: float, exit_code: int, output: Path) -> dict[str, Any]:
    """`BackendResult.train` from a run's reward-curve rows, its wall time, exit code and folder."""
    last = rows[-1] if rows else {}
    tokens, elapsed = last.get("num_tokens"), last.get("elapsed_s")
    rate = tokens / elapsed if tokens and elapsed else None
    if rate is None and rows and rows[-1].get("tokens_per_s") is not None:
        rate = rows[-1]["tokens_per_s"]
    steps = int(last["step"]) if last.get("step") is not None else 0
    peaks = [r["peak_rss_mb"] for r in rows if r.get("peak_rss_mb") is not None]
    return {"steps": steps, "wall_s": round(wall_s, 2), "train_s": elapsed, "tokens_per_s": rate,
            "step_s": round(elapsed / steps, 2) if elapsed and steps else None,
            "peak_mb": max(peaks) if peaks else None, "final_reward": last.get("reward"), "exit_code": exit_code,
            "curve": rows, "output": str(output)}


def prepare_output(output: Path) -> None:
    """Create `output`, or clear the previous comparison's results in it (never other files).

    A non-empty folder must be an earlier `rlvr compare` output (it has `parity/records.json` or
    `summary.json`); its summary, report, parity records and every backend's folder, log and parity
    results are removed, so the folder never mixes runs (a failed run cannot show an earlier curve).

    Raises:
        ConfigError: `output` is a file, or a non-empty folder that is not a compare output.
    """
    if output.exists() and not output.is_dir():
        raise ConfigError(f"--output {str(output)!r} is a file; give a folder for report.html and summary.json")
    if output.is_dir() and any(output.iterdir()):
        if not ((output / "summary.json").is_file() or (output / "parity" / "records.json").is_file()):
            raise ConfigError(f"--output {str(output)!r} is not empty and holds no earlier `rlvr compare` results; "
                              "choose a new or empty folder (rlvr compare replaces only its own files)")
        stale = [output / "summary.json", output / "report.html", output / "parity" / "records.json"]
        for name in BACKENDS:
            stale += [output / f"{name}.log", output / "parity" / f"{name}.json"]
            if (output / name).is_dir():
                shutil.rmtree(output / name)
        for path in stale:
            path.unlink(missing_ok=True)
    (output / "parity").mkdir(parents=True, exist_ok=True)


def mark_interrupted(summary: CompareSummary, names: Sequence[str],
                     probed: Sequence[tuple[BackendResult, Probe | None]] = ()) -> None:
    """After an interrupt: add the backends not reached, 'skipped' (or 'unavailable' when probed so).

    The backend in progress is already 'interrupted' (set before its steps start).
    """
    reached = {b.backend for b in summary.backends}
    known = {result.backend: (result, found) for result, found in probed}
    for name in names:
        if name in reached:
            continue
        result, found = known.get(name, (BackendResult(backend=name), None))
        if found is None and name in known:
            result.status = "unavailable"
        else:
            result.status, result.reason = "skipped", "not run: the comparison was interrupted before it"
        summary.backends.append(result)


def write_outputs(summary: CompareSummary, output: Path) -> None:
    """Write `report.html` and `summary.json` into `output` (each atomically); the summary records the report's path."""
    summary.report = str(write_report(summary.to_json(), output / "report.html"))
    atomic_write(output / "summary.json", json.dumps(summary.to_json(), indent=2) + "\n")
