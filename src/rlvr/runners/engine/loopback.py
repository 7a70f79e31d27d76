"""A real multi-node Ray cluster on this machine's loopback, for tests and benchmarks.

`loopback_cluster(nodes=2)` runs `ray start --head` and `nodes - 1` more `ray start --address`
node processes (each a full Ray node: raylet, object store, workers), not Ray's in-process
local mode, so actors live in separate processes that can be killed like on a real cluster.
Temporary files go under `RAY_TMPDIR` (default `/tmp/rlvr-ray`), never `$HOME`; the cluster
uses token authentication with a fresh token; on exit every process of every node is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rlvr.core.errors import BackendError

__all__ = ["LoopbackCluster", "loopback_cluster"]

_START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class LoopbackCluster:
    """A running loopback cluster.

    Attributes:
        address: `127.0.0.1:PORT`, for `--ray-address`.
        env: the environment variables a driver needs (RAY_TMPDIR, the auth token, PYTHONPATH).
        temp_dir: the cluster's temporary folder (logs under `session_latest/logs`).
    """

    address: str
    env: dict[str, str]
    temp_dir: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(args: list[str], log: Path, env: dict[str, str], cpus: int) -> subprocess.Popen[bytes]:
    ray = str(Path(sys.executable).with_name("ray"))
    with log.open("wb") as f:
        proc = subprocess.Popen(
            [ray, "start", "--block", "--disable-usage-stats", "--node-ip-address", "127.0.0.1", "--num-cpus",
             str(cpus), "--object-store-memory", str(300 * 2**20), *args],
            stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    deadline = time.monotonic() + _START_TIMEOUT_S
    while b"Ray runtime started" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(proc)
            raise BackendError(f"`ray start` failed:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill a `ray start --block` and every process of its session (raylet, object store, workers, actors)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@contextlib.contextmanager
def loopback_cluster(nodes: int = 2, cpus_per_node: int = 1,
                     python_path: list[Path] | None = None) -> Iterator[LoopbackCluster]:
    """Start a `nodes`-node Ray cluster on 127.0.0.1; stop it (every process) on exit.

    Args:
        nodes: Ray nodes (one head plus `nodes - 1` worker nodes), all on this machine.
        cpus_per_node: CPUs each node offers (one `--engine ray` worker actor each).
        python_path: folders put on the nodes' PYTHONPATH (e.g. where a custom verifier module lives).

    Raises:
        BackendError: a node did not start within 3 minutes (the message holds its log).
    """
    root = Path(os.environ.get("RAY_TMPDIR", "/tmp/rlvr-ray"))
    root.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix="c", dir=root))  # short: Ray's socket paths must fit in 107 bytes
    paths = [str(p) for p in python_path or []] + [os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "RAY_TMPDIR": str(temp), "RAY_USAGE_STATS_ENABLED": "0",
           "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    port = _free_port()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        head = ["--head", "--port", str(port), "--include-dashboard", "false", "--temp-dir", str(temp),
                "--ray-client-server-port", str(_free_port()), "--dashboard-port", str(_free_port())]
        procs.append(_start(head, temp / "head.log", env, cpus_per_node))
        for i in range(1, nodes):
            procs.append(_start(["--address", f"127.0.0.1:{port}", "--dashboard-agent-listen-port", "0",
                                 "--dashboard-agent-grpc-port", "0", "--metrics-export-port", "0",
                                 "--runtime-env-agent-port", "0"], temp / f"node{i}.log", env, cpus_per_node))
        yield LoopbackCluster(f"127.0.0.1:{port}", env, temp)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        shutil.rmtree(temp, ignore_errors=True)
