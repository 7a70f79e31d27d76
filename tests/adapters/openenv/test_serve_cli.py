"""`rlvr serve` as a process: serves until SIGTERM, then closes every session and sandbox and exits 0."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from openenv.core.generic_client import GenericEnvClient

from openenv_serving import rlvr_serve

pytestmark = pytest.mark.extras


def _descendants(pid: int) -> set[int]:
    """Every process below `pid` (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_sigterm_closes_every_session_and_sandbox_and_exits_0() -> None:
    proc, url = rlvr_serve("terminal/tbench-v1", "-a", 'task_ids=["dedupe-emails"]')
    try:
        client = GenericEnvClient(base_url=url).sync()
        client.reset(task_id="dedupe-emails")
        sandboxes = _descendants(proc.pid)
        assert sandboxes, "the episode's sandbox should run below the server"
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out
        deadline = time.monotonic() + 10
        while any(_running(pid) for pid in sandboxes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in sandboxes if _running(pid)]
        client.close()
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
