"""Running one test job in the sandbox, for every test format: the sandbox, the retry, the raw evidence.

Shared by the formats of `rlvr.verifiers.code.verifier` (assert, call, stdio) and
`rlvr.verifiers.code.pytest_format`: the process-wide sandbox of a configuration (its pre-started
workers are shared), one retry in a fresh worker when the sandbox itself failed (`SandboxFailure` after
the second), the result channel's records, a one-line why of a failed run, and the verification's clock.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.sandbox.config import ExecResult, SandboxConfig
from rlvr.sandbox.guest import rlvr_code_child
from rlvr.sandbox.pool import SUPERVISOR_DIED
from rlvr.verifiers.code.config import CodeConfig

__all__: list[str] = []

CHILD_SOURCE = Path(rlvr_code_child.__file__).read_text(encoding="utf-8")
"""The child harness (`rlvr.sandbox.guest.rlvr_code_child`), sent as a pre-started worker's prelude."""


@dataclass(frozen=True)
class TestResult:
    """Outcome of one test: `status` is 'pass', 'fail' or 'timeout'."""

    name: str
    status: str
    detail: str = ""


class SandboxFailure(Exception):
    """The sandbox could not run the test: an error verdict (reward None)."""


class Clock:
    """The deadline of one whole verification (`CodeConfig.timeout_s`)."""

    def __init__(self, total: float) -> None:
        self.deadline = time.monotonic() + total

    def budget(self, per_test: float) -> float:
        """Seconds the next test may take: its own limit, cut to what is left of the whole."""
        return min(per_test, self.deadline - time.monotonic())


_SANDBOXES: dict[tuple[Any, ...], Any] = {}
_SANDBOX_LOCK = threading.Lock()


def code_sandbox(config: CodeConfig, python_path: tuple[str, ...] = ()) -> Any:
    """The process-wide sandbox for this configuration (its pre-started workers are shared)."""
    key = (config.sandbox, config.require_full_isolation, python_path, config.provider,
           json.dumps(config.e2b, sort_keys=True, default=str))
    with _SANDBOX_LOCK:
        box = _SANDBOXES.get(key)
        if box is None:
            sandbox_cfg = config.sandbox.model_copy(update={
                "require_full_isolation": config.sandbox.require_full_isolation or config.require_full_isolation,
                "python_path": (*config.sandbox.python_path, *python_path),
            })
            if config.provider == "e2b":
                from rlvr.sandbox.e2b import E2BSandbox

                box = E2BSandbox(sandbox_cfg, **config.e2b)
            else:
                from rlvr.sandbox.local import LocalSandbox

                box = LocalSandbox(sandbox_cfg)
            _SANDBOXES[key] = box
        return box


def close_sandboxes(sandbox: SandboxConfig) -> None:
    """Stop the pre-started workers of every process-wide sandbox built with `sandbox`."""
    with _SANDBOX_LOCK:
        for key in [k for k in _SANDBOXES if k[0] == sandbox]:
            _SANDBOXES.pop(key).close()


def program(job: dict[str, Any]) -> str:
    """The program a pre-started worker runs for `job`: the child harness's `main(job)`."""
    return f"main(__import__('json').loads({json.dumps(job)!r}))\n"


def execute(box: Any, source: str, **kwargs: Any) -> ExecResult:
    """Run a job; one retry in a fresh worker if the sandbox itself failed.

    Raises:
        SandboxFailure: the sandbox failed twice.
    """
    result: ExecResult = box.run_python(source, **kwargs)
    if result.error is not None:
        first, result = result.error, box.run_python(source, **kwargs)
        if first == result.error == SUPERVISOR_DIED:  # twice, in two fresh workers: the program kills its sandbox
            return ExecResult(signal=9, stderr=b"the program killed its sandbox supervisor (twice)",
                              elapsed_s=result.elapsed_s, isolation=result.isolation)
    if result.error is not None:
        raise SandboxFailure(result.error)
    return result


def records(result: ExecResult) -> list[dict[str, Any]]:
    """Parse the result channel; malformed lines are the candidate's doing and are skipped."""
    out = []
    for line in result.result.decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def why(result: ExecResult) -> str:
    """One line saying how a run ended badly: timed out, output limit, signal or exit status (with stderr's tail)."""
    if result.timed_out:
        return "timed out"
    if result.output_limited:
        return "output limit exceeded"
    if result.signal:
        last = result.stderr.decode("utf-8", errors="replace").strip()[-200:]
        return f"killed by signal {result.signal}" + (f": {last}" if last else "")
    tail = result.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
    return f"exit {result.exit_code}" + (f": {tail[0][:200]}" if tail else "")
