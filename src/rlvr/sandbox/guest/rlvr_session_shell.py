"""The persistent interactive shell of the in-sandbox session supervisor (`rlvr_session.py`).

`bash --noprofile --norc --noediting -i` on a pty (stdout and stdin the terminal, stderr a pipe).
Each command is written to a file under /run/rlvr/cmd and sourced, so its text never passes
through the terminal (no line-length limit, a syntax error stays inside the file) and its effects
on the shell (cd, export, functions) persist. The typed line then prints a random per-command
marker carrying `$?` to both streams; output before the marker is the command's. At the deadline
the supervisor types Ctrl-C (SIGINT to the terminal's foreground process group, as a user would),
then kills that process group, then, if the shell itself does not come back, restarts the shell.
Standard library only.
"""

import contextlib
import fcntl
import os
import re
import secrets
import select
import signal
import termios
import time
from typing import Any

try:  # the host (type checking, tests) imports the package; the sandbox runs the files side by side
    from rlvr.sandbox.guest.rlvr_session_proc import (
        BACKLOG_CAP,
        CMD_DIR,
        _Capped,
        _read_ready,
        _status_peek,
        _wait,
        kill_others,
        memory_guard,
        sandbox_pids,
        set_process_limits,
    )
except ImportError:  # pragma: no cover - inside the sandbox
    from rlvr_session_proc import (  # type: ignore[import-not-found,no-redef]
        BACKLOG_CAP,
        CMD_DIR,
        _Capped,
        _read_ready,
        _status_peek,
        _wait,
        kill_others,
        memory_guard,
        sandbox_pids,
        set_process_limits,
    )


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
        self.memory_notes: list[str] = []
        self.start()

    def start(self) -> None:
        """Start bash on a new pty."""
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
                set_process_limits(self.limits, self.nice)
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
        notes += [n for n in self.memory_notes if n not in notes]
        self.memory_notes = []
        if self.limit_kills > kills_before and not any("process limit" in n for n in notes):
            notes.append(f"the sandbox reached its process limit ({self.limits.get('processes')}) during the "
                         f"command: {self.limit_kills - kills_before} processes were killed")
        return {"stdout": _clean_markers(pre_out + out.text()), "stderr": _clean_markers(pre_err + err.text()),
                "exit_code": result, "timed_out": timed_out, "notes": notes,
                "elapsed_s": time.monotonic() - start, "dropped": out.dropped + err.dropped}

    def _process_limit_check(self) -> list[str]:
        """Fork bombs and memory hogs.

        At 90 % of the process limit every process but the shell and its foreground job is killed;
        past the sandbox's memory budget the largest processes are.
        """
        notes = memory_guard(int(self.limits.get("memory_total") or 0), keep=(self.pid,))
        self.memory_notes += notes
        return notes + self._bomb_check()

    def _bomb_check(self) -> list[str]:
        limit = self.limits.get("processes")
        pids = sandbox_pids()
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
