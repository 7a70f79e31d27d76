"""In-sandbox session supervisor: the init (pid 1) of one persistent terminal sandbox.

Standalone (standard library only): bubblewrap starts it with `--as-pid-1` inside the sandbox,
where it cannot import rlvr. As the pid namespace's init it cannot be killed from inside the
namespace (the kernel drops SIGKILL/SIGSTOP sent to an init by its own namespace), it reaps every
orphan, and it is made non-dumpable, so the sandbox's other processes can neither ptrace it nor
open its file descriptors. The parent (`rlvr.sandbox.session`) talks to it over stdin/stdout,
one JSON object per line (replies to `finish` with `export` are followed by framed raw bytes):

- supervisor -> parent, once: `{"ready": true}`.
- parent -> supervisor: `{"op": ..., ...}`; every request gets exactly one reply line.
  - `extract` `{tar, dest}`: unpack a tar file (read-only mount) into `dest`.
  - `exec` `{command, cwd, env, timeout_s, max_output, limits, background}`: run
    `bash --noprofile --norc -c command` in a fresh process (stdin /dev/null, exactly `env`).
  - `shell` `{cwd, env, limits}`: start the persistent interactive bash on a pseudo-terminal.
  - `run` `{command, timeout_s, max_output}`: run `command` in the persistent shell (see below).
  - `pytest` `{args, cwd, env, site, timeout_s, max_output}`: run pytest in a forked child of
    this process (non-dumpable like it), JUnit report over a close-on-exec pipe to this process.
  - `read` `{path, max_bytes}`: a small file's bytes (e.g. a reward file); `list` `{path}`: names in a directory.
  - `finish` `{export, path, max_bytes}`: kill every other process of the sandbox, then send
    `path` as a tar stream (frames `{"chunk": n}` + n bytes, then `{"done": true, ...}`).

The persistent shell is `bash --noprofile --norc --noediting -i` on a pty (stdout and stdin the
terminal, stderr a pipe). Each command is written to a file under /run/rlvr/cmd and sourced, so
its text never passes through the terminal (no line-length limit, a syntax error stays inside
the file) and its effects on the shell (cd, export, functions) persist. The typed line then
prints a random per-command marker carrying `$?` to both streams; output before the marker is
the command's. At the deadline the supervisor types Ctrl-C (SIGINT to the terminal's foreground
process group, as a user would), then kills that process group, then, if the shell itself does
not come back, restarts the shell.
"""

import base64
import contextlib
import ctypes
import fcntl
import json
import os
import re
import resource
import secrets
import select
import signal
import sys
import tarfile
import termios
import time
from typing import Any

_LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "address_space": resource.RLIMIT_AS,
    "file_size": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
    "processes": resource.RLIMIT_NPROC,
}
CMD_DIR = "/run/rlvr/cmd"
BACKLOG_CAP = 1 << 16
"""Bytes of background output kept between commands (more is counted, not kept)."""

_EXITED: dict[int, int] = {}


def _prctl(option: int, arg: int) -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def _reap() -> None:
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
    _reap()
    return _EXITED.pop(pid, None)


def _wait(pid: int, timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while True:
        status = _status(pid)
        if status is not None or time.monotonic() > deadline:
            return status
        time.sleep(0.002)


def _set_limits(limits: dict[str, Any], nice: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in limits.items():
        if value is None or name not in _LIMITS:
            continue
        kind = _LIMITS[name]
        _soft, hard = resource.getrlimit(kind)
        new = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (new, new))
    if nice:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, nice)


def _pids() -> list[int]:
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


def kill_others(keep: tuple[int, ...] = ()) -> int:
    """SIGKILL every process of the namespace but this one and `keep`; return how many were signalled.

    `kill(-1, SIGSTOP)` first freezes all of them at once, so a fork bomb cannot refill the
    process table while they are killed one by one; the processes in `keep` are continued after.
    """
    killed: set[int] = set()
    deadline = time.monotonic() + 5.0
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGSTOP if keep else signal.SIGKILL)
    while time.monotonic() < deadline:
        victims = [p for p in _pids() if p != os.getpid() and p not in keep]
        if not victims:
            break
        if not keep:
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed.update(victims)
        _reap()
        time.sleep(0.002)
    for pid in keep:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)
    _reap()
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


class Shell:
    """The persistent interactive bash on a pseudo-terminal."""

    def __init__(self, cwd: str, env: dict[str, str], limits: dict[str, Any], nice: int) -> None:
        self.cwd, self.env, self.limits, self.nice = cwd, env, limits, nice
        self.pid = -1
        self.master = self.err_r = -1
        self.backlog = _Capped(BACKLOG_CAP)
        self.backlog_err = _Capped(BACKLOG_CAP)
        self.count = 0
        self.restarts = 0
        self.limit_kills = 0
        self.start()

    def start(self) -> None:
        master, slave = os.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR  # no \n -> \r\n on output
        attrs[3] &= ~(termios.ECHO | termios.ECHONL)  # typed marker lines are not echoed
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
                os.dup2(slave, 0)
                os.dup2(slave, 1)
                os.dup2(err_w, 2)
                os.closerange(3, 1 << 16)
                os.chdir(self.cwd)
                _set_limits(self.limits, self.nice)
                os.execve("/bin/bash", ["bash", "--noprofile", "--norc", "--noediting", "-i"], self.env)
            finally:
                os._exit(127)
        os.close(slave)
        os.close(err_w)
        for fd in (master, err_r):
            os.set_blocking(fd, False)
        self.pid, self.master, self.err_r = pid, master, err_r

    def stop(self, status: int | None = None) -> None:
        """Kill the shell (and its process group) unless it already exited with `status`."""
        if status is None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            _wait(self.pid, 2.0)
        for fd in (self.master, self.err_r):
            with contextlib.suppress(OSError):
                os.close(fd)

    def drain_background(self) -> None:
        """Read output that background jobs wrote between commands (so they never block on a full pty)."""
        for fd, buf in ((self.master, self.backlog), (self.err_r, self.backlog_err)):
            while True:
                data = _read_ready(fd)
                if not data:
                    break
                buf.add(data)

    def run(self, command: str, timeout_s: float, max_output: int) -> dict[str, Any]:
        """Run one command; the reply carries stdout, stderr, exit code, timed_out and restart notes."""
        self.count += 1
        os.makedirs(CMD_DIR, exist_ok=True)
        path = f"{CMD_DIR}/{self.count}"
        with open(path, "w", encoding="utf-8") as f:
            f.write(command if command.endswith("\n") else command + "\n")
        nonce = secrets.token_hex(8)
        out, err = _Capped(max_output), _Capped(max_output)
        notes = self._process_limit_check()
        kills_before = self.limit_kills
        self.drain_background()
        pre_out, pre_err = self.backlog.text(), self.backlog_err.text()
        self.backlog, self.backlog_err = _Capped(BACKLOG_CAP), _Capped(BACKLOG_CAP)
        start = time.monotonic()
        os.write(self.master, _marker_line(f". {path} 3>&-", nonce))
        result = self._until_markers([nonce], out, err, start + timeout_s)
        timed_out = result is None
        if timed_out:
            notes.append(f"timed out after {timeout_s:g} s: Ctrl-C sent")
            result = self._interrupt(nonce, out, err)
        if result is None or result == "eof":
            if result == "eof":  # what it wrote before exiting
                for fd, buf in ((self.master, out), (self.err_r, err)):
                    while data := _read_ready(fd):
                        buf.add(data)
            status = _wait(self.pid, 0.5) if result == "eof" else None
            code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
            why = "the shell exited" if result == "eof" else "the shell did not come back after Ctrl-C"
            notes.append(f"{why}; a new shell was started in {self.cwd} (shell state was reset)")
            self.stop(status)
            self.restarts += 1
            self.start()
            result = code if code is not None else -1
        with contextlib.suppress(OSError):
            os.unlink(path)
        notes += self._process_limit_check()
        if self.limit_kills > kills_before and not any("process limit" in n for n in notes):
            notes.append(f"the sandbox reached its process limit ({self.limits.get('processes')}) during the "
                         f"command: {self.limit_kills - kills_before} processes were killed")
        return {"stdout": _clean_markers(pre_out + out.text()), "stderr": _clean_markers(pre_err + err.text()),
                "exit_code": result, "timed_out": timed_out, "notes": notes,
                "elapsed_s": time.monotonic() - start, "dropped": out.dropped + err.dropped}

    def _process_limit_check(self) -> list[str]:
        """At 90 % of the process limit (a fork bomb), kill every process but the shell and its foreground job."""
        limit = self.limits.get("processes")
        pids = _pids()
        if not limit or len(pids) < 0.9 * limit:
            return []
        try:
            fg = os.tcgetpgrp(self.master)
        except OSError:
            fg = -1
        keep = [self.pid]
        if fg > 0 and fg != self.pid:
            for pid in pids:
                with contextlib.suppress(OSError):
                    if os.getpgid(pid) == fg:
                        keep.append(pid)
        killed = kill_others(keep=tuple(keep))
        self.limit_kills += killed
        return [f"the sandbox reached its process limit ({limit}): {killed} processes were killed"]

    def _until_markers(self, nonces: list[str], out: _Capped, err: _Capped, deadline: float) -> Any:
        """Read both streams until the markers of one of `nonces`: its exit code, None at the deadline, 'eof'."""
        pending = {self.master: bytearray(), self.err_r: bytearray()}
        code: int | None = None
        err_done = False

        def flush(result: Any) -> Any:  # held-back bytes are output too when no marker comes
            out.add(bytes(pending[self.master]))
            err.add(bytes(pending[self.err_r]))
            return result

        next_check = time.monotonic() + 0.25
        while True:
            now = time.monotonic()
            if now >= deadline:
                return flush(None)
            if now >= next_check:
                next_check = now + 0.25
                self._process_limit_check()
            watch = [fd for fd, done in ((self.master, code is not None), (self.err_r, err_done)) if not done]
            readable, _, _ = select.select(watch, [], [], min(deadline - now, 0.5))
            if not readable and _status_peek(self.pid):
                return flush("eof")
            for fd in readable:
                data = _read_ready(fd)
                if data is None:
                    return flush("eof")
                buf = pending[fd]
                buf += data
                found = _find_marker(buf, nonces, fd == self.master)
                if found is not None:
                    at, end, value = found
                    (out if fd == self.master else err).add(bytes(buf[:at]))
                    (self.backlog if fd == self.master else self.backlog_err).add(bytes(buf[end:]))
                    buf.clear()
                    if fd == self.master:
                        code = value
                    else:
                        err_done = True
                    continue
                keep = 64  # a marker may be split across reads: hold back its possible start
                if len(buf) > keep:
                    (out if fd == self.master else err).add(bytes(buf[:-keep]))
                    del buf[:-keep]
            if code is not None and err_done:
                return code

    def _interrupt(self, nonce: str, out: _Capped, err: _Capped) -> Any:
        """After a timeout: Ctrl-C, then kill the foreground job; the exit code, or None if the shell is stuck."""
        with contextlib.suppress(OSError):
            os.write(self.master, b"\x03")
        time.sleep(0.2)
        try:
            fg = os.tcgetpgrp(self.master)
        except OSError:
            fg = -1
        if fg > 0 and fg != self.pid:
            with contextlib.suppress(OSError):
                os.killpg(fg, signal.SIGKILL)
        recovery = secrets.token_hex(8)
        with contextlib.suppress(OSError):
            os.write(self.master, _marker_line("(exit 124)", recovery))
        return self._until_markers([nonce, recovery], out, err, time.monotonic() + 3.0)


_MARKER = re.compile(rb"\x1e([0-9a-f]{16})(?::(-?\d+))?\x1e")
_STRAY = re.compile("\x1e[0-9a-f]{16}(?::-?\\d+)?\x1e")


def _marker_line(command: str, nonce: str) -> bytes:
    """The line typed into the shell: `command`, then the marker with `$?` on stdout and on stderr."""
    return (f" {command}; printf '\\036{nonce}:%d\\036' $?; printf '\\036{nonce}\\036' >&2\n").encode()


def _find_marker(buf: bytearray, nonces: list[str], with_code: bool) -> tuple[int, int, int] | None:
    """(start, end, exit code) of the first marker in `buf` carrying one of `nonces`."""
    for match in _MARKER.finditer(buf):
        if match.group(1).decode() in nonces and (match.group(2) is not None) == with_code:
            return match.start(), match.end(), int(match.group(2)) if with_code else 0
    return None


def _clean_markers(text: str) -> str:
    """Drop markers of earlier, interrupted commands that arrived late."""
    return _STRAY.sub("", text)


def _status_peek(pid: int) -> bool:
    """True when `pid` has exited (its status stays available to `_status`)."""
    _reap()
    return pid in _EXITED


def _spawn(command: str, cwd: str, env: dict[str, str], limits: dict[str, Any], nice: int,
           fds: tuple[int, int]) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            os.closerange(3, 1 << 16)
            os.chdir(cwd)
            _set_limits(limits, nice)
            os.execve("/bin/bash", ["bash", "--noprofile", "--norc", "-c", command], env)
        finally:
            os._exit(127)
    return pid


def _collect(pid: int, fds: list[int], deadline: float, cap: int) -> tuple[list[_Capped], bool, int | None]:
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
        if not open_fds:  # output closed: the process is exiting, wait for its status
            time.sleep(0.002)
            continue
        readable, _, _ = select.select(list(open_fds), [], [], min(deadline - now, 0.05))
        for fd in readable:
            data = _read_ready(fd)
            if data is None:
                open_fds.discard(fd)
            elif data:
                bufs[fd].add(data)
    return [bufs[fd] for fd in fds], timed_out, status


def _finish_process(pid: int, status: int | None) -> tuple[int | None, int | None]:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    if status is None:
        status = _wait(pid, 2.0)
    if status is None:
        return None, None
    return (os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)


def op_exec(req: dict[str, Any], nice: int) -> dict[str, Any]:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    pid = _spawn(req["command"], req.get("cwd") or "/", req.get("env") or {}, req.get("limits") or {}, nice,
                 (out_w, err_w))
    os.close(out_w)
    os.close(err_w)
    if req.get("background"):
        os.close(out_r)
        os.close(err_r)
        return {"pid": pid}
    (out, err), timed_out, status = _collect(pid, [out_r, err_r], start + float(req.get("timeout_s", 60)),
                                             int(req.get("max_output", 1 << 16)))
    code, sig = _finish_process(pid, None if timed_out else status)
    os.close(out_r)
    os.close(err_r)
    return {"stdout": out.text(), "stderr": err.text(), "exit_code": code, "signal": sig, "timed_out": timed_out,
            "elapsed_s": time.monotonic() - start}


_PYTEST_CHILD = """
import os, sys
sys.path[:0] = SITE
try:
    import pytest
except BaseException as exc:
    os.write(RES, ("\\x00import-error " + type(exc).__name__ + ": " + str(exc)).encode())
    os._exit(3)
os.write(RES, b"\\x00started\\n")
code = pytest.main(ARGS + ["--junitxml=/dev/fd/%d" % RES], plugins=[])
os._exit(int(code) & 0xFF)
"""


def op_pytest(req: dict[str, Any]) -> dict[str, Any]:
    """Pytest in a forked child (non-dumpable, like this process); the report over a close-on-exec pipe."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()  # os.pipe() fds are close-on-exec: programs the tests start never get it
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (out_r, err_r, res_r, devnull):
                os.close(fd)
            os.chdir(req.get("cwd") or "/")
            os.environ.clear()
            os.environ.update(req.get("env") or {})
            _set_limits(req.get("limits") or {}, int(req.get("nice", 0)))
            sys.stdout = os.fdopen(1, "w", encoding="utf-8", closefd=False)
            sys.stderr = os.fdopen(2, "w", encoding="utf-8", closefd=False)
            sys.argv = ["pytest"]
            source = _PYTEST_CHILD.replace("SITE", repr(list(req.get("site") or []))).replace(
                "ARGS", repr(list(req["args"]))).replace("RES", str(res_w))
            exec(compile(source, "<rlvr-grader>", "exec"), {"__name__": "__rlvr_grader__"})
        finally:
            os._exit(125)
    for fd in (out_w, err_w, res_w):
        os.close(fd)
    for fd in (out_r, err_r, res_r):
        os.set_blocking(fd, False)
    cap = int(req.get("max_output", 1 << 16))
    (out, err, res), timed_out, status = _collect(pid, [out_r, err_r, res_r],
                                                  start + float(req.get("timeout_s", 60)), max(cap, 1 << 22))
    code, sig = _finish_process(pid, None if timed_out else status)
    for fd in (out_r, err_r, res_r):
        os.close(fd)
    report = bytes(res.head) + bytes(res.tail)
    return {"stdout": out.text()[-cap:], "stderr": err.text()[-cap:], "exit_code": code, "signal": sig,
            "timed_out": timed_out, "report": base64.b64encode(report).decode(), "report_dropped": res.dropped,
            "elapsed_s": time.monotonic() - start}


def op_extract(req: dict[str, Any]) -> dict[str, Any]:
    dest = req["dest"]
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(req["tar"], "r:*") as tar:
        kwargs: dict[str, Any] = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
        tar.extractall(dest, **kwargs)
    return {"ok": True}


def op_read(req: dict[str, Any]) -> dict[str, Any]:
    path = req["path"]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return {"missing": True, "why": f"{type(exc).__name__}: {exc}"}
    try:
        data = os.read(fd, int(req.get("max_bytes", 1 << 16)))
    finally:
        os.close(fd)
    return {"data": base64.b64encode(data).decode()}


class _Framer:
    """File-like sink for tarfile's stream mode: every write becomes a `{"chunk": n}` frame on `out`."""

    def __init__(self, out: Any, limit: int) -> None:
        self.out, self.limit, self.sent = out, limit, 0

    def write(self, data: bytes) -> int:
        self.sent += len(data)
        if self.sent > self.limit:
            raise OSError(f"the workspace is larger than {self.limit} bytes")
        self.out.write(json.dumps({"chunk": len(data)}).encode() + b"\n")
        self.out.write(data)
        return len(data)

    def flush(self) -> None:
        self.out.flush()


def _add_tree(tar: tarfile.TarFile, root: str) -> None:
    """Add `root` to `tar` (as '.'), recording each entry's real mode even where it denies us reading.

    The agent may leave files or directories without read or search permission (mode 000); the
    owner (this process's uid) may change the mode, so such an entry is opened for a moment with
    the owner's read/search bit set and archived with the mode it had.
    """
    for dirpath, dirnames, filenames in os.walk(root, onerror=None):
        links = [name for name in dirnames if os.path.islink(os.path.join(dirpath, name))]
        for name in dirnames:  # make subdirectories listable before os.walk descends into them
            sub = os.path.join(dirpath, name)
            st = os.lstat(sub)
            if name not in links and st.st_mode & 0o500 != 0o500:
                os.chmod(sub, st.st_mode | 0o700)
                _ORIGINAL_MODES[sub] = st.st_mode
        filenames = links + filenames  # os.walk lists symlinks to directories as directories
        rel_dir = os.path.relpath(dirpath, root)
        info = tar.gettarinfo(dirpath, arcname="." if rel_dir == "." else f"./{rel_dir}")
        if dirpath in _ORIGINAL_MODES:
            info.mode = _ORIGINAL_MODES[dirpath] & 0o7777
        tar.addfile(info)
        for name in filenames:
            path = os.path.join(dirpath, name)
            found: tarfile.TarInfo | None = tar.gettarinfo(path, arcname=f"./{os.path.relpath(path, root)}")
            if found is None:  # a socket: not archivable
                continue
            info = found
            if not info.isreg():
                tar.addfile(info)
                continue
            mode = os.lstat(path).st_mode
            if not mode & 0o400:
                os.chmod(path, mode | 0o400)
            with open(path, "rb") as f:
                tar.addfile(info, f)


_ORIGINAL_MODES: dict[str, int] = {}


def op_finish(req: dict[str, Any], out: Any) -> None:
    killed = kill_others()
    if not req.get("export"):
        _reply(out, {"killed": killed})
        return
    framer = _Framer(out, int(req.get("max_bytes", 1 << 30)))
    error = ""
    try:
        with tarfile.open(fileobj=framer, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
            _add_tree(tar, req["path"])
    except (OSError, tarfile.TarError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    _reply(out, {"done": True, "killed": killed, "error": error})


def _reply(out: Any, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def serve(inp: Any, out: Any) -> None:  # noqa: C901 - one dispatch loop
    """Answer requests until stdin closes; keep the shell's background output drained meanwhile."""
    shell: Shell | None = None
    nice = 0
    buf = b""
    fd = inp.fileno()
    while True:
        watch = [fd] + ([shell.master, shell.err_r] if shell is not None else [])
        readable, _, _ = select.select(watch, [], [], 1.0)
        _reap()
        if shell is not None and readable and fd not in readable:
            shell.drain_background()
            continue
        if fd not in readable:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            req = json.loads(line)
            op = req.get("op")
            try:
                if op == "shell":
                    nice = int(req.get("nice", 0))
                    if shell is not None:
                        shell.stop()
                    shell = Shell(req.get("cwd") or "/", req.get("env") or {}, req.get("limits") or {}, nice)
                    reply: dict[str, Any] = {"ok": True}
                elif op == "run":
                    if shell is None:
                        reply = {"error": "no shell started"}
                    else:
                        reply = shell.run(req["command"], float(req.get("timeout_s", 60)),
                                          int(req.get("max_output", 1 << 16)))
                elif op == "exec":
                    reply = op_exec(req, int(req.get("nice", nice)))
                elif op == "pytest":
                    reply = op_pytest(req)
                elif op == "extract":
                    reply = op_extract(req)
                elif op == "read":
                    reply = op_read(req)
                elif op == "list":
                    path = req["path"]
                    reply = {"names": sorted(os.listdir(path)) if os.path.isdir(path) else []}
                elif op == "processes":
                    reply = {"count": len([p for p in _pids() if p != os.getpid()])}
                elif op == "reap_excess":
                    keep = (shell.pid,) if shell is not None else ()
                    reply = {"killed": kill_others(keep)}
                elif op == "finish":
                    if shell is not None:
                        shell.stop()
                        shell = None
                    op_finish(req, out)
                    continue
                else:
                    reply = {"error": f"unknown op {op!r}"}
            except Exception as exc:  # a failing request is reported, never fatal to the session
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            _reply(out, reply)


def main() -> None:
    """Become the sandbox's supervisor: non-dumpable, orphans reaped, requests served."""
    _prctl(4, 0)  # PR_SET_DUMPABLE = 0: no ptrace, no /proc/1/fd for the sandbox's other processes
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    out = os.fdopen(os.dup(1), "wb")
    inp = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    _reply(out, {"ready": True, "pid": os.getpid()})
    serve(inp, out)


if __name__ == "__main__":
    main()
