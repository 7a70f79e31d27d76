"""`SandboxedServer`: a long-running command in a fresh `LocalSandbox`, spoken to over its pipes.

For servers whose protocol runs over stdin and stdout (an MCP stdio server, `rlvr.environments.mcp`).
The command runs exactly as a one-shot `LocalSandbox.run` would -- the same isolation level, a
fresh work directory (`files` copied in; `/work` under bubblewrap), an unprivileged uid, the
sandbox's rlimits (`cpu_s` is the server's whole `lifetime_s`), no network -- but it is not waited
for: the caller gets its stdin, stdout and stderr pipes and closes it when done.

Reaping: `close` kills the command's process group and, under bubblewrap, waits until the
sandbox's pid namespace is gone (nothing started inside survives it). If the process that started
the server dies first (even by `kill -9`), bubblewrap's `--die-with-parent` (and `unshare
--kill-child` one level down) takes the whole sandbox with it; that signal fires when the *thread*
that started the server exits, so start servers from a long-lived thread (rlvr starts them from
`rlvr.environments.client_loop.ClientLoop`'s). Under plain rlimits there is no such guarantee: the
module docstring of `rlvr.sandbox.config` says what each level protects. Servers still open at
interpreter exit are closed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from rlvr.core.errors import SandboxError
from rlvr.sandbox.host_process import child_pipe, closed_at_exit, kill_group, read_child_pid, wait_gone
from rlvr.sandbox.isolation import is_root, remove_tree
from rlvr.sandbox.local import LocalSandbox

__all__ = ["SandboxedServer"]

_LIVE: weakref.WeakSet[SandboxedServer] = closed_at_exit()


class SandboxedServer:
    """One command running in its own sandbox, with its three pipes open to the caller.

    Args:
        sandbox: the sandbox whose isolation level and limits apply (`LocalSandbox`).
        argv: the command; `{work}` in an argument is the work directory as the command sees it.
        files: written into the work directory before the command starts (path -> content).
        env: extra environment variables (nothing else is inherited from the caller).
        lifetime_s: the most CPU seconds the server may use over its life (its `RLIMIT_CPU`).

    Attributes:
        proc: the host process (bubblewrap, `unshare` or the command itself); None before `start`.

    Raises:
        SandboxError: (from `start`) the sandbox could not be started.
    """

    def __init__(self, sandbox: LocalSandbox, argv: Sequence[str], *, files: Mapping[str, str | bytes] | None = None,
                 env: Mapping[str, str] | None = None, lifetime_s: float = 3600.0) -> None:
        if not argv:
            raise SandboxError("a sandboxed server needs a command (argv is empty)")
        self.sandbox = sandbox
        self.argv = list(argv)
        self.files = dict(files or {})
        self.env = dict(env or {})
        self.lifetime_s = lifetime_s
        self.proc: subprocess.Popen[bytes] | None = None
        self._dirs: list[str] = []
        self._info_r = -1
        self.closed = False

    def start(self) -> SandboxedServer:
        """Start the command (call once, from a long-lived thread: see the module docstring).

        Raises:
            SandboxError: the sandbox directories or the process could not be made.
        """
        if self.proc is not None or self.closed:
            raise SandboxError("a SandboxedServer starts once; make a new one")
        box = self.sandbox
        try:
            work, grader = box.make_dirs(self.files, {})
        except OSError as exc:
            raise SandboxError(f"could not prepare the server's sandbox directories: {exc}") from exc
        self._dirs = [work, grader]
        full, env, cwd = box.host_command(box.isolation, self.argv, work, grader, self.lifetime_s, extra_env=self.env)
        info_w = -1
        if any("{info_fd}" in a for a in full):
            self._info_r, info_w = child_pipe()
        full = [a.replace("{info_fd}", str(info_w)).replace("{result_fd}", "") for a in full]
        kwargs: dict[str, Any] = {}
        if is_root():  # bubblewrap (or the command) runs as the unprivileged uid on the host too
            kwargs.update(user=box.config.uid, group=box.config.gid, extra_groups=[])
        _LIVE.add(self)
        try:
            self.proc = subprocess.Popen(full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True, env=env, cwd=cwd,
                                         pass_fds=(info_w,) if info_w >= 0 else (), **kwargs)
        except OSError as exc:
            self.close()
            raise SandboxError(f"could not start the sandboxed server {self.argv[0]!r}: {exc}") from exc
        finally:
            if info_w >= 0:
                os.close(info_w)
        return self

    @property
    def alive(self) -> bool:
        """True while the host process runs."""
        return self.proc is not None and self.proc.poll() is None

    @property
    def isolation(self) -> str:
        """The isolation level the server runs under (`rlvr.sandbox.config.Isolation`)."""
        return self.sandbox.isolation

    def close(self) -> None:
        """Kill the server and everything it started; remove its directories (idempotent, never raises)."""
        self.closed = True
        proc, self.proc = self.proc, None
        if proc is not None:
            kill_group(proc)
            with contextlib.suppress(Exception):
                proc.wait(timeout=30)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if self._info_r >= 0:  # under bubblewrap: wait until the sandbox's pid namespace is gone
            wait_gone(read_child_pid(self._info_r))
            os.close(self._info_r)
            self._info_r = -1
        for path in self._dirs:
            remove_tree(path)
        self._dirs = []
        _LIVE.discard(self)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if not self.closed:
                self.close()
