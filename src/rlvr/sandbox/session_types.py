"""The values of `rlvr.sandbox.session`: `SessionConfig`, `Mount`, `CommandResult`, `PytestRun`, errors."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import SandboxError
from rlvr.sandbox.config import FileSizeMB, MemoryMB, OpenFiles, Processes, ProcessLimits

__all__: list[str] = []


class SessionConfig(ProcessLimits):
    """Isolation and limits of one `SandboxSession`. Frozen; every field has a safe default.

    The rlimits (`ProcessLimits`) bind the shell and every process it starts; `processes` is counted per
    user namespace, and at 90 % of it every process but the shell is killed.
    """

    workdir: str = Field(default="/app", pattern=r"^/[A-Za-z0-9_./-]+$", description="Working directory (a tmpfs) "
                         "the shell starts in, as Terminal-Bench images' WORKDIR.")
    home: str = Field(default="/root", pattern=r"^/[A-Za-z0-9_./-]+$", description="HOME (a tmpfs).")
    uid: int = Field(default=0, ge=0, description="uid inside the sandbox (0: root of an unprivileged user "
                     "namespace, without capabilities).")
    gid: int = Field(default=0, ge=0, description="gid inside the sandbox.")
    host_uid: int = Field(default=65534, ge=1, description="Unprivileged host uid bubblewrap runs as when the "
                          "caller is root (nobody).")
    host_gid: int = Field(default=65534, ge=1, description="Its host gid (nogroup).")
    workdir_mb: int = Field(default=512, ge=8, description="Size of the work directory tmpfs, MiB.")
    tmp_mb: int = Field(default=128, ge=8, description="Size of /tmp and of HOME (each a tmpfs), MiB.")
    memory_mb: Annotated[MemoryMB, Field(ge=64)] = 2048
    file_size_mb: FileSizeMB = 256
    open_files: OpenFiles = 1024
    processes: Annotated[Processes, Field(ge=8)] = 256  # the shell and the supervisor's own need a few
    memory_total_mb: int = Field(default=4096, ge=64, description="Resident memory of all the sandbox's processes "
                                 "together, MiB; past it the largest are killed (checked every 0.25-0.5 s: no "
                                 "cgroup is needed).")
    nice: int = Field(default=10, ge=0, le=19, description="Nice value of the sandbox's processes.")
    max_output_bytes: int = Field(default=1 << 14, ge=256, description="Kept per stream per command, bytes: the "
                                  "first and last halves; the middle is counted and dropped.")
    export_max_mb: int | None = Field(default=None, ge=1, description="Largest tar `finish` exports, MiB; None: "
                                      "`workdir_mb` + 64 (sparse files count at their full size in a tar).")
    bwrap_path: str | None = Field(default=None, description="bubblewrap binary; None: `bwrap` on PATH.")
    python: str | None = Field(default=None, description="Python running the in-sandbox supervisor; None: as "
                               "`LocalSandbox` chooses (this interpreter, or the system python3 when root).")

    def limits(self) -> dict[str, int]:
        """The limits of the sandbox's processes: `rlimits()` plus `memory_total` (bytes, all processes together)."""
        return {**self.rlimits(), "memory_total": self.memory_total_mb << 20}


@dataclass(frozen=True)
class Mount:
    """One extra mount of a session: a host path bound read-only or read-write, or a tmpfs.

    Attributes:
        dest: path inside the sandbox.
        source: host path (for 'ro' and 'rw'); it must be readable by the sandbox's host uid.
        kind: 'ro', 'rw' or 'tmpfs'.
        size_mb: size of a tmpfs, MiB.
    """

    dest: str
    source: str | None = None
    kind: Literal["ro", "rw", "tmpfs"] = "ro"
    size_mb: int = 64

    def argv(self) -> list[str]:
        """Bubblewrap arguments for this mount."""
        if self.kind == "tmpfs":
            return ["--size", str(self.size_mb << 20), "--tmpfs", self.dest]
        assert self.source is not None
        return ["--ro-bind" if self.kind == "ro" else "--bind", self.source, self.dest]


class CommandResult(BaseModel):
    """What one command printed and how it ended."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stdout: str = Field(default="", description="Standard output (UTF-8, undecodable bytes replaced), capped.")
    stderr: str = Field(default="", description="Standard error, capped the same way.")
    exit_code: int | None = Field(default=None, description="Exit status; None when killed or timed out.")
    timed_out: bool = Field(default=False, description="Stopped at its deadline (Ctrl-C, then killed).")
    notes: tuple[str, ...] = Field(default=(), description="What the session did beyond running the command "
                                   "(timeout handling, shell restart, process-limit cleanup).")
    dropped_bytes: int = Field(default=0, ge=0, description="Output bytes not kept (over the per-stream cap).")
    elapsed_s: float = Field(default=0.0, ge=0, description="Wall-clock time, seconds.")
    error: str | None = Field(default=None, description="Why the sandbox could not run it (then nothing else counts).")


class PytestRun(BaseModel):
    """One grading pytest run: its output and the JUnit report it sent over the private channel."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    report: bytes = Field(default=b"", description="JUnit XML written by pytest (channel prefix lines removed).")
    started: bool = Field(default=False, description="pytest was imported and started in the sandbox.")
    import_error: str = Field(default="", description="Why pytest could not be imported (a grader failure).")
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    elapsed_s: float = 0.0
    args: tuple[str, ...] = Field(default=(), description="The arguments it was asked for (script mode).")
    cwd: str = Field(default="", description="Its working directory (script mode).")

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> PytestRun:
        """A supervisor's pytest reply (report channel: status lines, then the JUnit XML) as a `PytestRun`."""
        channel = base64.b64decode(reply["report"])
        started = b"\x00started\n" in channel
        import_error = ""
        if channel.startswith(b"\x00import-error "):
            import_error = channel[len(b"\x00import-error "):].decode(errors="replace")
            channel = b""
        report = channel.split(b"\x00started\n", 1)[1] if started else channel
        return cls(report=report, started=started, import_error=import_error, exit_code=reply.get("exit_code"),
                   signal=reply.get("signal"), timed_out=bool(reply.get("timed_out")),
                   stdout=reply.get("stdout", ""), stderr=reply.get("stderr", ""),
                   elapsed_s=float(reply.get("elapsed_s", 0.0)), args=tuple(str(a) for a in reply.get("args") or ()),
                   cwd=str(reply.get("cwd") or ""))


class UnpackError(SandboxError):
    """A tar did not unpack in the sandbox (no space, a name too long): what it holds, not the sandbox, failed."""


class ExportError(SandboxError):
    """`finish` could not export the work directory because of what it holds (too large, names too long)."""
