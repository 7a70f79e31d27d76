r"""`ContainerSession`: a terminal session inside a podman or docker container, same supervisor protocol.

Terminal-Bench and Harbor tasks whose Dockerfile needs a real image (a base image other than a
stock distribution, packages the host lacks, files outside the working directory, `USER`,
multi-stage builds) cannot be reproduced by `SandboxSession`'s host-`/usr` bubblewrap sandbox.
For them, `build_image` builds the task's Dockerfile with a container runtime (the `podman` or
`docker` CLI) and `ContainerSession` runs the image with the same stdlib-only supervisor
(`rlvr/sandbox/guest/rlvr_session.py`) as the container's pid 1, spoken to over the container runtime client's
stdin/stdout. Everything above the protocol (the shell on a pty, `exec`, the `pytest` op, `finish`'s
export) is inherited from `SandboxSession` unchanged.

Differences from the bubblewrap session:

- the image's own files are the machine: the working directory, HOME and /tmp keep what the
  image put there (no tmpfs over them); writes go to the container's writable layer, whose size
  the container runtime does not cap unless its storage driver supports `--storage-opt size=` (pass it in
  `ContainerConfig.extra_args`); `SessionConfig.workdir_mb` and `tmp_mb` do not apply;
- the image's ENV is the base of the shell's environment (below `env`), its `USER` is kept
  unless `ContainerConfig.user` says otherwise, its ENTRYPOINT is replaced by the supervisor;
- the supervisor needs `python3` (3.10 or newer: `rlvr_session.py` evaluates `X | None`
  annotations) in the image; `SessionConfig.python` names another interpreter in the image;
- limits: the supervisor's rlimits and nice value as in `SandboxSession`, plus the container runtime's
  cgroup limits (`--memory`, `--pids-limit`, `--cpus`) where the container runtime can apply them here;
- isolation: `--network none`, `--cap-drop ALL`, `no-new-privileges`, private pid namespace; with
  podman also a user namespace (`--uidmap`: container root is host uid 100000, not host root).
  The user namespace is also what makes RLIMIT_NPROC (`SessionConfig.processes`) bite: the
  kernel counts it per user namespace and uid, and exempts host uid 0 from it altogether
  (`copy_process` in kernel/fork.c skips the check for INIT_USER). Without one (docker, which has
  no per-container uid map, its daemon's `userns-remap` decides; podman with `uidmap=None`) the
  processes are bounded by the supervisor's kill at 90 % of `processes` and by `pids_limit` only.

The container never outlives the session: it is named (`rlvr-<random>`), `close()` (also run by
`__del__` and at interpreter exit) removes it with `<runtime> rm -f`, and if this process dies
without closing, the container runtime client sees end-of-file on its stdin, the supervisor exits, and
`run --rm` removes the container.

Finding the container runtime and building images: `rlvr.sandbox.runtimes`.

Example:
    >>> runtime = container_runtime()                                  # doctest: +SKIP
    >>> tag = build_image("task/Dockerfile", "task", runtime=runtime)  # doctest: +SKIP
    >>> with ContainerSession(tag) as s:                             # doctest: +SKIP
    ...     s.start_shell()
    ...     s.run("cd /tmp && echo hi > f; pwd; cat f").stdout
    '/tmp\\nhi\\n'
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import secrets
import subprocess
import tarfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import IO

from rlvr.core.errors import SandboxError
from rlvr.sandbox.host_process import closed_at_exit, kill_group
from rlvr.sandbox.isolation import remove_tree
from rlvr.sandbox.runtimes import (
    ContainerConfig,
    RuntimeInfo,
    auto_ulimits,
    build_image,
    container_runtime,
    image_config,
    image_env,
    image_exists,
    image_tag,
    run_cli,
    runtime_info,
    ulimit_args,
)
from rlvr.sandbox.session import Mount, SandboxSession, SessionConfig, stage_supervisor

__all__ = [
    "ContainerConfig",
    "ContainerSession",
    "build_image",
    "container_runtime",
    "image_exists",
    "image_tag",
    "runtime_info",
]


_RM_TIMEOUT_S = 60.0
_SUP_DIR = "/run/rlvr/sup"
_SUPERVISOR_MIN_PYTHON = "3.10"
_LIVE: weakref.WeakSet[ContainerSession] = closed_at_exit()  # containers removed at exit


# -- the session ---------------------------------------------------------------------------------
def _check_path(path: str) -> str:
    if ":" in path or "," in path:
        raise SandboxError(f"a container mount path may not contain ':' or ',': {path!r}")
    return path


def _mount_args(mount: Mount) -> list[str]:
    """Container runtime options for one `Mount` (tmpfs mounts are executable and world-writable like /tmp)."""
    dest = _check_path(mount.dest)
    if mount.kind == "tmpfs":
        return ["--tmpfs", f"{dest}:rw,exec,nosuid,nodev,size={mount.size_mb}m,mode=1777"]
    assert mount.source is not None
    return ["-v", f"{_check_path(mount.source)}:{dest}:{'ro' if mount.kind == 'ro' else 'rw'}"]


class ContainerSession(SandboxSession):
    """One persistent container of `image` with the session supervisor as pid 1 (module docstring).

    Args:
        image: a local image (e.g. from `build_image`); it is never pulled.
        config: session limits (rlimits, output caps, export cap, `workdir` = the container's
            working directory, created at start when the image lacks it, `python` = the
            supervisor's interpreter in the image, default `python3`); `workdir_mb`, `tmp_mb`,
            `uid`/`gid`, `host_uid`/`host_gid`, `bwrap_path` do not apply.
        mounts: extra mounts: host paths bound read-only or read-write (readable by the
            container's host uid, i.e. by others when a uid map is used), or tmpfs mounts.
        env: environment of the shell and of `exec` processes, over the image's ENV.
        container: container runtime options.

    Raises:
        SandboxError: no working container runtime, or `image` is not in its local store.
    """

    def __init__(self, image: str, config: SessionConfig | None = None, mounts: Sequence[Mount] = (),
                 env: Mapping[str, str] | None = None, *, container: ContainerConfig | None = None) -> None:
        cfg = config or SessionConfig()
        if cfg.python is None:  # the image's interpreter, not the host's
            cfg = cfg.model_copy(update={"python": "python3"})
        self._launched = False
        self._workdir_tmpfs = False
        self._stderr: collections.deque[bytes] = collections.deque(maxlen=64)
        self._stderr_thread: threading.Thread | None = None
        super().__init__(cfg, mounts, env)
        self.image = image
        self.container = container or ContainerConfig()
        self.name = f"rlvr-{secrets.token_hex(6)}"
        self.info = runtime_info(self.container.container_runtime)
        settings = image_config(image, self.info.path)
        self.image_workdir = os.path.normpath(str(settings.get("WorkingDir") or "/"))
        self.image_user = str(settings.get("User") or "")
        if self.container.image_env:
            self.env = {**self.env, **image_env(image, runtime=self.info.path), "PS1": "", "PS2": "", **(env or {})}
        user = (self.container.user if self.container.user is not None else self.image_user).split(":")[0]
        if user and not user.isdigit() and "USER" not in (env or {}):
            self.env["USER"] = user

    # -- launch ------------------------------------------------------------------------------
    def _argv(self, sup_dir: str, info_fd: int = -1) -> list[str]:
        """The container runtime command line that starts the container (`info_fd` is unused)."""
        cfg, ccfg, info = self.config, self.container, self.info
        argv = [info.path, *info.global_args(ccfg.oci_runtime), "run", "--rm", "-i", "--name", self.name,
                "--pull", "never", "--log-driver", "none", "--network", ccfg.network, "--hostname", "sandbox",
                "--security-opt", "no-new-privileges"]
        if ccfg.cap_drop_all:
            argv += ["--cap-drop", "ALL"]
        for cap in ccfg.cap_add:
            argv += ["--cap-add", cap]
        ulimits = ccfg.ulimits if ccfg.ulimits is not None else auto_ulimits(cfg.open_files, info.kind)
        argv += ulimit_args(ulimits)
        if info.cgroup_limits:
            if ccfg.memory_mb is not None:
                argv += ["--memory", f"{ccfg.memory_mb}m"]
            if ccfg.pids_limit is not None:
                argv += ["--pids-limit", str(ccfg.pids_limit)]
            if ccfg.cpus is not None:
                argv += ["--cpus", f"{ccfg.cpus:g}"]
        if info.kind == "podman" and info.userns and ccfg.uidmap:
            argv += ["--uidmap", ccfg.uidmap, "--gidmap", ccfg.uidmap]
        if ccfg.user is not None:
            argv += ["--user", ccfg.user]
        argv += ["--tmpfs", "/run/rlvr:rw,nosuid,nodev,size=16m,mode=1777",
                 "-v", f"{_check_path(sup_dir)}:{_SUP_DIR}:ro"]
        for mount in self.mounts:
            argv += _mount_args(mount)
        if self._workdir_tmpfs:
            user = ccfg.user if ccfg.user is not None else self.image_user
            mode = "755" if user.split(":")[0] in ("", "0", "root") else "1777"
            argv += ["--tmpfs", f"{_check_path(cfg.workdir)}:rw,exec,nosuid,nodev,size={cfg.workdir_mb}m,mode={mode}"]
        if os.path.normpath(cfg.workdir) == self.image_workdir or self._workdir_tmpfs:
            argv += ["-w", cfg.workdir]  # podman refuses a `-w` the image lacks (unless it is the image's own)
        argv += ["--entrypoint", self.python, *ccfg.extra_args, self.image,
                 "-I", "-S", f"{_SUP_DIR}/rlvr_session.py"]
        return argv

    def start(self) -> ContainerSession:
        """Start the container and wait for its supervisor (idempotent).

        A working directory the image lacks is created; where its parent is not writable
        without capabilities (podman's rootfs `/` is mode 0555), the container is started again
        with a tmpfs of `SessionConfig.workdir_mb` there (the image had nothing in it to keep).

        Raises:
            SandboxError: the container runtime could not start the container, the image has no usable
                `python3` (the message names the fix), or the supervisor did not report ready
                within `ContainerConfig.start_timeout_s`.
        """
        if self._proc is not None:
            return self
        if self.closed:
            raise SandboxError("this session was closed; start a new ContainerSession")
        sup_dir = stage_supervisor("rlvr-container-")
        self._dirs.append(sup_dir)
        with tarfile.open(os.path.join(sup_dir, "empty.tar"), "w"):
            pass
        for name in ("rlvr_session.py", "empty.tar"):
            os.chmod(os.path.join(sup_dir, name), 0o644)
        try:
            self._launch(sup_dir)
            if os.path.normpath(self.config.workdir) != self.image_workdir:
                try:  # `extract` creates its destination
                    self.extract(f"{_SUP_DIR}/empty.tar", self.config.workdir, timeout_s=60.0)
                except SandboxError:
                    if not self.alive:  # the container died: nothing to retry
                        raise
                    self._stop_container()
                    self._workdir_tmpfs = True
                    self._launch(sup_dir)
        except BaseException:
            self.close()
            raise
        return self

    def _launch(self, sup_dir: str) -> None:
        """Start the container runtime client and wait for the supervisor's ready line."""
        self.name = f"rlvr-{secrets.token_hex(6)}"
        argv = self._argv(sup_dir)
        self._stderr.clear()
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise SandboxError(f"could not start {self.info.path}: {exc}") from exc
        self._launched = True
        self._stream = None
        _LIVE.add(self)
        assert self._proc.stderr is not None
        self._stderr_thread = threading.Thread(target=_drain, args=(self._proc.stderr, self._stderr), daemon=True,
                                               name=f"rlvr-{self.name}-stderr")
        self._stderr_thread.start()
        ready = self._readline(time.monotonic() + self.container.start_timeout_s)
        try:
            ok = ready is not None and bool(json.loads(ready).get("ready"))
        except ValueError:
            ok = False
        if not ok:
            raise SandboxError(self._start_failure())

    def _start_failure(self) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=10.0)
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=5.0)
        err = self._stderr_tail()
        low = err.lower()
        python = self.python
        if (python in err and ("not found" in low or "no such file" in low)) or code == 127:
            return (f"the image {self.image} has no `{python}`: the session supervisor runs on the image's "
                    f"Python ({_SUPERVISOR_MIN_PYTHON} or newer, standard library only). Add it to the Dockerfile, "
                    "e.g. `RUN apt-get update && apt-get install -y --no-install-recommends python3` (Debian, "
                    "Ubuntu) or `RUN apk add --no-cache python3` (Alpine), or base the image on `python:3.x`; or "
                    "set SessionConfig(python=...) to its interpreter's path in the image. The container runtime "
                    f"said: {err}")
        if "syntaxerror" in low or "unsupported operand type(s) for |" in low:
            return (f"the `{python}` of the image {self.image} is too old for the session supervisor (it needs "
                    f"Python {_SUPERVISOR_MIN_PYTHON} or newer): install a newer python3 in the Dockerfile. "
                    f"Supervisor said: {err}")
        return f"the container of {self.image} did not start (exit {code}): {err}"

    def _stderr_tail(self) -> str:
        return b"".join(self._stderr).decode(errors="replace").strip()[-1500:]

    def host_pid(self) -> int | None:
        """The host pid of the container's pid 1 (the supervisor), None when it is not running."""
        if not self.alive:
            return None
        done = run_cli([self.info.path, "inspect", "--format", "{{.State.Pid}}", self.name], 30.0)
        with contextlib.suppress(ValueError):
            pid = int(done.stdout.strip() or b"0")
            return pid or None
        return None

    # -- teardown ----------------------------------------------------------------------------
    def close(self) -> None:
        """Remove the container (killing every process in it) and the host staging directories.

        Safe to call more than once; also run by `__del__` and at interpreter exit.
        """
        self.closed = True
        _LIVE.discard(self)
        self._stop_container()
        for path in self._dirs:
            remove_tree(path)
        self._dirs = []

    def _stop_container(self) -> None:
        """`rm -f` the container, then reap the container runtime client (killed if it hangs)."""
        proc, self._proc = self._proc, None
        if self._launched:
            self._launched = False
            _remove_container(self.info, self.name, self.container.oci_runtime)
        if proc is None:
            return
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=_RM_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __enter__(self) -> ContainerSession:
        return self.start()


def _drain(stream: IO[bytes], into: collections.deque[bytes]) -> None:
    """Keep the container runtime client's stderr read (so it never blocks on a full pipe), the last chunks kept."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := os.read(stream.fileno(), 4096):
            into.append(chunk)


def _remove_container(info: RuntimeInfo, name: str, oci_runtime: str | None = None) -> None:
    """`rm -f` the container (podman: without the 10 s SIGTERM grace, which pid 1 ignores anyway)."""
    argv = [info.path, *info.global_args(oci_runtime), "rm", "-f"]
    done = run_cli([*argv, "-t", "0", name] if info.kind == "podman" else [*argv, name], _RM_TIMEOUT_S)
    if done.returncode != 0 and info.kind == "podman" and b"unknown shorthand flag" in done.stderr:
        run_cli([info.path, *info.global_args(oci_runtime), "kill", name], _RM_TIMEOUT_S)
        run_cli([*argv, name], _RM_TIMEOUT_S)
