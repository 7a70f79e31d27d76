"""Process plumbing of the in-sandbox session supervisor (`rlvr_session.py`): reaping, limits, output.

Standard library only, like the supervisor: it runs inside the sandbox, where rlvr is not importable.
"""

import contextlib
import fcntl
import os
import select
import signal
import time
from typing import Any

try:  # the host (type checking, tests) imports the package; the sandbox runs the files side by side
    from rlvr.sandbox.guest.rlvr_supervisor import set_rlimits
except ImportError:  # pragma: no cover - inside the sandbox
    from rlvr_supervisor import set_rlimits  # type: ignore[import-not-found,no-redef]

CMD_DIR = "/run/rlvr/cmd"
BACKLOG_CAP = 1 << 16
"""Bytes of background output kept between commands (more is counted, not kept)."""

_EXITED: dict[int, int] = {}


def reap_children() -> None:
    """Reap every exited child (as init we adopt all orphans); remember the statuses."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _EXITED[pid] = status


def _status(pid: int) -> int | None:
    reap_children()
    return _EXITED.pop(pid, None)


def _wait(pid: int, timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while True:
        status = _status(pid)
        if status is not None or time.monotonic() > deadline:
            return status
        time.sleep(0.002)


def set_process_limits(limits: dict[str, Any], nice: int) -> None:
    """The code sandbox's rlimits (`rlvr_supervisor.set_rlimits`, the same names), then `nice`."""
    set_rlimits(limits)
    if nice:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, nice)


def sandbox_pids() -> list[int]:
    """Pids of the namespace's live processes (zombies, which only wait to be reaped, left out)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
        except (OSError, IndexError):
            continue
        out.append(int(name))
    return out


_PAGE = os.sysconf("SC_PAGE_SIZE")


def memory_guard(limit_bytes: int, keep: tuple[int, ...] = ()) -> list[str]:
    """Keep the sandbox's resident memory (all processes together) under `limit_bytes`.

    Without a cgroup there is no kernel limit on the sum, only RLIMIT_AS per process; past the
    limit the largest processes (but those in `keep`) are killed until the rest fits. Returns a
    note per kill.
    """
    if limit_bytes <= 0:
        return []
    me = os.getpid()
    sizes = []
    for pid in sandbox_pids():
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                sizes.append((int(f.read().split()[1]) * _PAGE, pid))
        except (OSError, IndexError, ValueError):
            continue
    total = sum(size for size, _pid in sizes)
    notes = []
    for size, pid in sorted(sizes, reverse=True):
        if total <= limit_bytes:
            break
        if pid in keep:
            continue
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        total -= size
        notes.append(f"pid {pid} ({size >> 20} MiB) killed: the sandbox's memory exceeded {limit_bytes >> 20} MiB")
    return notes


def orphans(keep: tuple[int, ...] = ()) -> list[int]:
    """Live processes whose parent is this init (their own parent exited), except `keep`."""
    out = []
    me = os.getpid()
    for pid in sandbox_pids():
        if pid == me or pid in keep:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me:
            out.append(pid)
    return out


def kill_others(keep: tuple[int, ...] = ()) -> int:
    """SIGKILL every process of the namespace but this one and `keep`; return how many were signalled.

    `kill(-1, SIGSTOP)` first freezes all of them at once, so a fork bomb cannot refill the
    process table while they are killed one by one; the processes in `keep` are continued after.
    """
    killed = {p for p in sandbox_pids() if p != os.getpid() and p not in keep}  # counted before any of them dies
    deadline = time.monotonic() + 5.0
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGSTOP if keep else signal.SIGKILL)
    while time.monotonic() < deadline:
        victims = [p for p in sandbox_pids() if p != os.getpid() and p not in keep]
        if not victims:
            break
        if not keep:
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed.update(victims)
        reap_children()
        time.sleep(0.002)
    for pid in keep:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)
    reap_children()
    return len(killed)


class _Capped:
    """A stream's bytes, capped: the first half of `cap` and the last half are kept, the middle counted."""

    def __init__(self, cap: int) -> None:
        self.cap = max(cap, 64)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        extra = len(self.tail) - self.cap // 2
        if extra > 0:
            del self.tail[:extra]
            self.dropped += extra

    def text(self) -> str:
        body = bytes(self.head)
        if self.dropped:
            body += f"\n[... {self.dropped} bytes omitted ...]\n".encode()
        return (body + bytes(self.tail)).decode("utf-8", errors="replace")


def _read_ready(fd: int) -> bytes | None:
    """Bytes available on `fd`; None at end of file (or a pty whose slave side closed: EIO)."""
    try:
        data = os.read(fd, 65536)
    except BlockingIOError:
        return b""
    except OSError:
        return None
    return data if data else None


def _status_peek(pid: int) -> bool:
    """True when `pid` has exited (its status stays available to `_status`)."""
    reap_children()
    return pid in _EXITED


def child_stdio(out_fd: int, err_fd: int) -> None:
    """In a forked child: a new session, stdin /dev/null, stdout and stderr to `out_fd` and `err_fd`."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.close(devnull)


def spawn_process(command: str, cwd: str, env: dict[str, str], limits: dict[str, Any], nice: int,
           fds: tuple[int, int], keep: dict[int, int] | None = None) -> int:
    """Fork and exec `bash -c command`; `keep` maps fd numbers the child gets to fds of this process."""
    pid = os.fork()
    if pid == 0:
        try:
            child_stdio(*fds)
            wanted = keep or {}
            high = {t: fcntl.fcntl(s, fcntl.F_DUPFD, 1000) for t, s in wanted.items()}  # out of the targets' way
            for target, source in high.items():
                os.dup2(source, target)  # dup2 clears close-on-exec on the target
            start = 3
            for target in sorted(wanted):
                os.closerange(start, target)
                start = target + 1
            os.closerange(start, 1 << 16)
            os.chdir(cwd)
            set_process_limits(limits, nice)
            os.execve("/bin/bash", ["bash", "--noprofile", "--norc", "-c", command], env)
        finally:
            os._exit(127)
    return pid


def collect_output(pid: int, fds: list[int], deadline: float, cap: int, extra: dict[int, Any] | None = None,
             tick: Any = None) -> tuple[list[_Capped], bool, int | None]:
    """Read `fds` until `pid` exited and they closed (or the deadline); `extra` fd -> callback when readable.

    The callbacks (a listening socket and its clients) run in this loop and may take their time;
    the deadline still holds for the process. `tick()`, when given, runs every ~10 ms.
    """
    handlers = extra if extra is not None else {}
    bufs = {fd: _Capped(cap) for fd in fds}
    open_fds = set(fds)
    status = None
    exited_at = 0.0
    timed_out = False
    while open_fds or status is None:
        now = time.monotonic()
        if now >= deadline:
            timed_out = True
            break
        if status is None:
            status = _status(pid)
            if status is not None:
                exited_at = now
        elif now - exited_at > 0.2:
            break  # exited; a leftover descendant holds a pipe open: stop waiting for it
        if tick is not None:
            tick()
        if not open_fds and not handlers:  # output closed: the process is exiting, wait for its status
            time.sleep(0.002)
            continue
        readable, _, _ = select.select([*open_fds, *handlers], [], [], min(deadline - now, 0.01 if tick else 0.05))
        for fd in readable:
            if fd in handlers:
                handlers[fd](fd)
                continue
            data = _read_ready(fd)
            if data is None:
                open_fds.discard(fd)
            elif data:
                bufs[fd].add(data)
    return [bufs[fd] for fd in fds], timed_out, status


def finish_process(pid: int, status: int | None) -> tuple[int | None, int | None]:
    """Kill what is left of `pid`'s process group and reap `pid`; (exit code, signal), both None if it never ended."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    if status is None:
        status = _wait(pid, 2.0)
    if status is None:
        return None, None
    return (os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
