"""The launcher's side of rlvr's CPU mode: the child's environment, loopback-only Ray, clean-up, memory.

`cpu_environment` gives the variables a veRL or OpenRLHF run needs on CPU; `RunSession` watches the
run's processes (everything in the session `rlvr.runners.train.process.run_streaming` starts, which Ray's
daemons and workers stay in: they call `setpgrp`, not `setsid`), samples their memory, and at the end
stops what is left, removes the run's Ray folder and the shared-memory segments it left in
`/dev/shm` (vLLM's `psm_*` message queues, veRL's `verl_weights_*` buckets).

Network: Ray listens on 127.0.0.1 only. `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` makes Ray take the
loopback address as the node address (`ray._private.services.get_node_ip_address`; without it
Ray binds the host's address even with `--node-ip-address=127.0.0.1`), `RAY_AUTH_MODE=token` with a
private token file (`RAY_AUTH_TOKEN_PATH`, 0600, in the run's Ray folder) keeps a stray
`~/.ray/auth_token` out, and the dashboard is off. Ray's workers (the actor, vLLM) run at nice 0, not
Ray's default 15 (`RAY_worker_niceness`): at 15 they got ~3 % of a core next to other processes on a
shared machine (an OpenRLHF update step took 5 min instead of ~20 s).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rlvr.adapters.cpu import CPU_MODE_ENV

__all__ = ["RunSession", "cpu_environment"]

SHM_PATTERNS: tuple[str, ...] = ("psm_", "verl_weights_", "deepspeed_allreduce_buffer_")
"""Name prefixes of the `/dev/shm` segments veRL/vLLM/DeepSpeed runs create (and leave behind): vLLM's
message queues, veRL's weight buckets, and the all-reduce workspace of DeepSpeed's CPU accelerator
(`deepspeed/ops/csrc/cpu/comm/shm.cpp`, never unlinked)."""

SHM_DIR = Path("/dev/shm")


def cpu_environment(backend: str, ray_dir: Path, *, slots: int = 1, cpus: int | None = None,
                    extension_dir: Path | None = None, weight_sync_log: Path | None = None) -> dict[str, str]:
    """Environment variables (added to the parent's) for a `backend` run in rlvr's CPU mode.

    Args:
        backend: 'verl' or 'openrlhf'.
        ray_dir: the run's private Ray folder (Ray's temp dir and the auth token); created.
        slots: accelerator slots the private Ray node offers (veRL and OpenRLHF place one worker per
            'GPU'); 1 for a single actor colocated with its vLLM engine.
        cpus: CPUs the Ray node offers (default: os.cpu_count(), at least 16: Ray schedules its
            helper actors by CPU count, not by load).
        extension_dir: DeepSpeed's JIT extension cache (`TORCH_EXTENSIONS_DIR`, OpenRLHF), kept between runs.
        weight_sync_log: OpenRLHF: the file vLLM's workers append one line to per weight sync
            (`$RLVR_WEIGHT_SYNC_LOG`, `rlvr.adapters.cpu.openrlhf_shims.SyncRecord`).

    Returns:
        The variables; `ray_dir/auth_token` is written (mode 0600).
    """
    ray_dir.mkdir(parents=True, exist_ok=True)
    token = ray_dir / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    n_cpus = cpus or max(16, os.cpu_count() or 1)
    env = {
        CPU_MODE_ENV: backend,
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(token),
        "RAY_TMPDIR": str(ray_dir),
        "RAY_OVERRIDE_RESOURCES": json.dumps({"GPU": slots, "CPU": n_cpus}),
        "RAY_DEDUP_LOGS": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_DISABLE_IMPORT_WARNING": "1",
        "RAY_worker_niceness": "0",  # Ray starts workers at nice 15: starved by any other load, yet they are the run
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
        "VLLM_TARGET_DEVICE": "cpu",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONUNBUFFERED": "1",
    }
    if backend == "verl":
        env.update({"VERL_PLATFORM": "rlvr_cpu", "VERL_ENGINE_DEVICE": "cuda"})
    else:
        env.update({"DS_ACCELERATOR": "cpu", "DS_BUILD_OPS": "0"})
        if extension_dir is not None:
            extension_dir.mkdir(parents=True, exist_ok=True)
            env["TORCH_EXTENSIONS_DIR"] = str(extension_dir)
        if weight_sync_log is not None:
            from rlvr.adapters.cpu.openrlhf_shims import SYNC_LOG_ENV

            env[SYNC_LOG_ENV] = str(weight_sync_log)
    return env


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # after "pid (comm) "


def session_processes(sid: int) -> list[int]:
    """Ids of the live processes whose session id is `sid` (Linux /proc; zombies are left out)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None and len(fields) > 3 and int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _pss_kib(pid: int) -> int:
    """Proportional set size of `pid`, KiB (shared pages split between their users), 0 if unreadable."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def shm_segments() -> set[str]:
    """Names in /dev/shm that look like veRL/vLLM segments (`SHM_PATTERNS`)."""
    try:
        return {p.name for p in SHM_DIR.iterdir() if p.name.startswith(SHM_PATTERNS)}
    except OSError:
        return set()


def _mapped_shm(pids: Iterable[int]) -> set[str]:
    """/dev/shm names mapped or opened by `pids`."""
    names: set[str] = set()
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
                if "/dev/shm/" in line:
                    names.add(line.rsplit("/dev/shm/", 1)[1].split()[0])
        except OSError:
            pass
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("/dev/shm/"):
                    names.add(target[len("/dev/shm/"):].split()[0])
        except OSError:
            pass
    return names


def _all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


@dataclass
class RunSession:
    """One CPU-mode run's processes (a session id), their peak memory, and the clean-up after it.

    Use: `start()` before the child exists (remembers /dev/shm), `watch(sid)` once it runs,
    `close()` at the end (always, also after a failure or an interrupt).

    Attributes:
        ray_dir: the run's Ray folder (removed by `close`).
        interval_s: memory sampling period, seconds.
        peak_mb: peak of the summed proportional set size of the run's processes, MiB.
        cleaned: what `close` stopped and removed: {"processes": [pids], "shm": [names], "ray_dir": [path]}.
    """

    ray_dir: Path
    interval_s: float = 1.0
    peak_mb: float = 0.0
    cleaned: dict[str, list[str]] = field(default_factory=dict)
    _sid: int | None = None
    _seen: set[str] = field(default_factory=set)
    _before: set[str] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        """Remember the /dev/shm segments that exist before the run (never removed)."""
        self._before = shm_segments()

    def watch(self, sid: int) -> None:
        """Sample the memory of session `sid` every `interval_s` seconds, in a daemon thread."""
        self._sid = sid
        self._thread = threading.Thread(target=self._sample, name="rlvr-run-memory", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set() and self._sid is not None:
            pids = session_processes(self._sid)
            total = sum(_pss_kib(pid) for pid in pids) / 1024
            self.peak_mb = max(self.peak_mb, round(total, 1))
            self._seen |= _mapped_shm(pids)
            self._stop.wait(self.interval_s)

    def close(self, grace_s: float = 10.0) -> dict[str, list[str]]:
        """Stop what is left of the run, remove its Ray folder and its /dev/shm segments.

        A segment is the run's when one of its processes had it mapped or open, or when it appeared
        during the run, matches `SHM_PATTERNS` and no live process has it open.
        """
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        stopped: list[str] = []
        if self._sid is not None:
            left = [p for p in session_processes(self._sid) if p != os.getpid()]
            self._seen |= _mapped_shm(left)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                for pid in left:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        continue
                    if sig == signal.SIGTERM:
                        stopped.append(str(pid))
                deadline = time.monotonic() + grace_s
                while time.monotonic() < deadline and session_processes(self._sid):
                    time.sleep(0.2)
                left = session_processes(self._sid)
                if not left:
                    break
        in_use = _mapped_shm(_all_pids())
        removed = []
        for name in sorted(shm_segments() - self._before):
            if name in self._seen or name not in in_use:
                try:
                    (SHM_DIR / name).unlink()
                    removed.append(name)
                except OSError:
                    pass
        shutil.rmtree(self.ray_dir, ignore_errors=True)
        self.cleaned = {"processes": stopped, "shm": removed, "ray_dir": [str(self.ray_dir)]}
        return self.cleaned


def new_ray_dir() -> Path:
    """A fresh private folder for one run's Ray state, short enough for Ray's socket paths (/tmp/rlvr-ray-*)."""
    return Path(tempfile.mkdtemp(prefix="rlvr-ray-", dir="/tmp"))
