"""Running a trainer as a child process group: output streamed to the terminal and a log, stopped cleanly.

veRL and OpenRLHF start Ray workers in process groups of their own; `run_streaming` starts the
trainer in its own session so that Ctrl-C, SIGTERM/SIGHUP to rlvr (`interrupt_on_terminate`) or a
time limit stop the whole group (SIGINT, then SIGTERM, then SIGKILL), and the caller's
`except KeyboardInterrupt` keeps partial results.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from rlvr.core.errors import BackendError

__all__ = ["TIMEOUT_EXIT_CODE", "interrupt_on_terminate", "run_streaming"]

TIMEOUT_EXIT_CODE = 124
"""Exit code `run_streaming` returns for a command stopped at its time limit (as coreutils `timeout`)."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM/SIGHUP turned into an interrupt, so the same clean-up runs as for Ctrl-C."""


@contextlib.contextmanager
def interrupt_on_terminate() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `KeyboardInterrupt` (as Ctrl-C does) instead of killing us.

    `run_streaming` starts the trainer in its own session (so Ray workers can be stopped as a group);
    a plain SIGTERM to rlvr would then leave that group running. With this, the `except
    KeyboardInterrupt` paths stop the child group and keep partial results. Only the main thread can
    set signal handlers; elsewhere the block runs unchanged. The previous handlers are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated(f"signal {signal.Signals(signum).name}")

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _terminate(process: subprocess.Popen[str], grace_s: float = 20.0) -> None:
    """Stop the child's whole process group (veRL/OpenRLHF start Ray workers): SIGINT, then SIGTERM, SIGKILL."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _default_sigint() -> None:
    """In the child before exec: SIGINT back to its default action.

    A process started in the background by a non-interactive shell (`cmd &`, CI runners, nohup)
    inherits SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler, so the
    trainer would ignore the SIGINT that asks it to stop cleanly and only die at the SIGTERM.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_streaming(command: Sequence[str], *, log_path: Path, env: dict[str, str] | None = None,
                  cwd: Path | None = None, echo: IO[str] | None = None, timeout_s: float | None = None,
                  on_start: Callable[[int], None] | None = None) -> int:
    """Run `command`, copying its combined stdout/stderr line by line to `echo` and `log_path`; return its exit code.

    The child runs in its own process group; Ctrl-C (KeyboardInterrupt), SIGTERM/SIGHUP to this
    process (`interrupt_on_terminate`) or `timeout_s` seconds stop the whole group (SIGINT, then
    SIGTERM, then SIGKILL, 20 s apart). A timed-out command returns `TIMEOUT_EXIT_CODE` (124); an
    interrupt is re-raised as KeyboardInterrupt. `on_start(pid)` is called once the child runs (its pid
    is also its session id).

    Raises:
        BackendError: the command could not be started (e.g. the interpreter is missing).
        KeyboardInterrupt: after stopping the child.
    """
    out = echo if echo is not None else sys.stdout
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        process = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   bufsize=1, env=env, cwd=cwd, start_new_session=True, errors="replace",
                                   preexec_fn=_default_sigint)
    except OSError as exc:
        raise BackendError(f"could not start {command[0]!r}: {exc}") from exc
    assert process.stdout is not None
    if on_start is not None:
        on_start(process.pid)
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _terminate(process)

    timer = threading.Timer(timeout_s, expire) if timeout_s is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    with log_path.open("w", encoding="utf-8") as log, interrupt_on_terminate():
        try:
            for line in process.stdout:
                log.write(line)  # the log first: an interrupt between the two writes loses no logged line
                log.flush()
                out.write(line)
                out.flush()
            code = process.wait()
            if timed_out.is_set():
                note = f"rlvr: stopped after the time limit of {timeout_s:g} s\n"
                out.write(note)
                log.write(note)
                return TIMEOUT_EXIT_CODE
            return code
        except KeyboardInterrupt:
            _terminate(process)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            if process.poll() is None:
                _terminate(process)
            process.stdout.close()
