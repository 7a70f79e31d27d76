"""Host processes of the sandboxes: their start, watchdog, output and cleanup.

Running one host process with a wall-clock watchdog, capped concurrent output and reaping; cleanup at
exit; starting sandboxes from one long-lived thread (`Spawner`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["closed_at_exit"]

T = TypeVar("T")


class Spawner:
    """Runs callables on one long-lived thread.

    bubblewrap's `--die-with-parent` (PR_SET_PDEATHSIG) fires when the *thread* that started it
    exits; sandboxes started from short-lived threads (asyncio's `to_thread` workers, a verifier's
    watchdog threads) would die with them.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, fn: Callable[[], T]) -> T:
        """`fn()` run on the spawner's thread; its exception is raised here."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True, name=self._name)
                self._thread.start()
        answer: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._jobs.put((fn, answer))
        ok, value = answer.get()
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _loop(self) -> None:
        while True:
            fn, answer = self._jobs.get()
            try:
                answer.put((True, fn()))
            except BaseException as exc:  # handed back to the caller's thread
                answer.put((False, exc))


def closed_at_exit() -> weakref.WeakSet[Any]:
    """A new weak set whose members still in it at interpreter exit are `close()`d (errors ignored).

    For sandboxes, sessions and pools whose processes and host directories must not outlive the
    program; a member discards itself on close. Sets made later are closed first (atexit order).
    """
    live: weakref.WeakSet[Any] = weakref.WeakSet()

    def close_all() -> None:
        for member in list(live):
            with contextlib.suppress(Exception):
                member.close()

    atexit.register(close_all)
    return live


@dataclass
class Captured:
    """Raw outcome of `run_captured`."""

    returncode: int | None = None
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    result: bytearray = field(default_factory=bytearray)
    timed_out: bool = False
    output_limited: bool = False
    elapsed_s: float = 0.0


class StreamReader:
    """Lines and exact byte counts from a pipe, each read waiting at most until a deadline (select)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def _fill(self, deadline: float) -> bool:
        wait = deadline - time.monotonic()
        if wait <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], wait)
        chunk = os.read(self.fd, 1 << 20) if ready else b""
        self.buf += chunk
        return bool(chunk)

    def readline(self, deadline: float) -> bytes | None:
        """The next line without its newline; None at the deadline or end of file."""
        while b"\n" not in self.buf:
            if not self._fill(deadline):
                return None
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def read(self, n: int, deadline: float) -> bytes | None:
        """Exactly `n` bytes; None at the deadline or end of file."""
        while len(self.buf) < n:
            if not self._fill(deadline):
                return None
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def read_child_pid(fd: int) -> int | None:
    """The sandbox init's host pid from bubblewrap's `--info-fd` JSON (None if absent)."""
    import json

    data = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 4096):
            data += chunk
    try:
        pid = json.loads(data or b"{}").get("child-pid")
    except ValueError:
        return None
    return pid if isinstance(pid, int) else None


def wait_gone(pid: int | None, timeout_s: float = 10.0) -> None:
    """Wait until process `pid` has exited (gone or a zombie).

    A pid namespace's init finishes exiting only after every process in the namespace has been
    reaped, so once bubblewrap's sandbox init is gone, nothing of the sandbox is left.
    """
    if pid is None:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in (b"Z", b"X"):
            return
        time.sleep(0.005)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group led by `proc` (it was started with `start_new_session=True`)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _pump(  # noqa: C901 - one select loop over stdin, three outputs, a deadline and a cap
    proc: subprocess.Popen[bytes], streams: dict[int, bytearray], stdin: bytes, deadline: float, cap: int
) -> tuple[bool, bool]:
    """Write stdin and read every stream until EOF on all; return (timed_out, output_limited)."""
    assert proc.stdin is not None
    stdin_fd = proc.stdin.fileno()
    pending = memoryview(stdin)
    writers = [stdin_fd] if pending else []
    if not pending:
        proc.stdin.close()
    open_fds = set(streams)
    exited_at: float | None = None
    while open_fds:
        now = time.monotonic()
        if now >= deadline:
            return True, False
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > 0.5:
            break  # the command exited; a leftover descendant keeps a pipe open: stop waiting for it
        readable, writable, _ = select.select(list(open_fds), writers, [], min(deadline - now, 0.1))
        if writable:
            try:
                n = os.write(stdin_fd, pending[:65536])
                pending = pending[n:]
            except OSError:
                pending = pending[:0]
            if not pending:
                proc.stdin.close()
                writers = []
        for fd in readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            buf = streams[fd]
            room = cap - len(buf)
            buf += chunk[:room]
            if len(chunk) > room:
                return False, True
    if writers:
        proc.stdin.close()
    return False, False


CHILD_FD_MIN = 10
"""Lowest fd number of a pipe a sandbox child inherits (`child_pipe`).

bubblewrap's launch shell opens the seccomp program on fd 9 (`rlvr.sandbox.local`) right before it
execs bubblewrap; an inherited pipe numbered 9 would be replaced by it, and bubblewrap's
`--info-fd` write then fails (`Bad file descriptor`). A long-running process (a server with
sockets open) gets fd 9 from `os.pipe()`, so inherited pipes are numbered from 10.
"""


def child_pipe() -> tuple[int, int]:
    """`os.pipe()` with both ends numbered >= `CHILD_FD_MIN` (non-inheritable, as `os.pipe`'s)."""
    import fcntl

    pair = os.pipe()
    try:
        return tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, CHILD_FD_MIN) for fd in pair)  # type: ignore[return-value]
    finally:
        for fd in pair:
            os.close(fd)


def run_captured(
    argv: Sequence[str],
    *,
    stdin: bytes,
    timeout_s: float,
    max_output: int,
    env: Mapping[str, str],
    cwd: str | None = None,
    user: int | None = None,
    group: int | None = None,
    result_channel: bool = True,
) -> Captured:
    """Run `argv` in a new session; kill its process group at `timeout_s`; reap it.

    Output of stdout, stderr and the result channel (an inherited pipe whose fd number is in
    `$RLVR_RESULT_FD`) is read concurrently, each capped at `max_output` bytes; a command that
    writes more is killed (`output_limited`). `{result_fd}` in `argv` becomes that fd's number;
    `{info_fd}` becomes a pipe for bubblewrap's `--info-fd`, and the run then only returns once the
    sandbox's pid namespace is gone.

    Raises:
        OSError: the command could not be started (missing binary, permission).
    """
    res_r, res_w = child_pipe() if result_channel else (-1, -1)
    info_r, info_w = child_pipe() if "{info_fd}" in argv else (-1, -1)
    if info_w >= 0:
        argv = [a.replace("{info_fd}", str(info_w)) for a in argv]
    env = dict(env)
    if result_channel:
        if user is not None:  # so the command may reopen it as /dev/fd/N (pytest's --junitxml does)
            os.fchown(res_w, user, group if group is not None else -1)
        env["RLVR_RESULT_FD"] = str(res_w)
        argv = [a.replace("{result_fd}", str(res_w)) for a in argv]
    start = time.monotonic()
    kwargs: dict[str, object] = {}
    if user is not None:
        kwargs.update(user=user, group=group, extra_groups=[])
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=tuple(fd for fd in (res_w, info_w) if fd >= 0), start_new_session=True, env=env, cwd=cwd,
            **kwargs,  # type: ignore[call-overload]
        )
    finally:
        for fd in (res_w, info_w):
            if fd >= 0:
                os.close(fd)
    assert proc.stdout is not None and proc.stderr is not None
    out = Captured()
    streams = {proc.stdout.fileno(): out.stdout, proc.stderr.fileno(): out.stderr}
    if result_channel:
        streams[res_r] = out.result
    try:
        out.timed_out, out.output_limited = _pump(proc, streams, stdin, start + timeout_s, max_output)
    finally:
        kill_group(proc)  # the command and anything it left behind in its session
        out.returncode = proc.wait()
        if info_r >= 0:  # and, under bubblewrap, wait for its pid namespace to be torn down
            wait_gone(read_child_pid(info_r))
            os.close(info_r)
        out.elapsed_s = time.monotonic() - start
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if result_channel:
            os.close(res_r)
    return out
