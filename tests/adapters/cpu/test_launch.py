"""rlvr's CPU-mode launcher: the child's environment (loopback Ray, private token) and the clean-up after a run."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from rlvr.adapters.cpu import CPU_MODE_ENV, ShimError, cpu_mode
from rlvr.adapters.cpu.launch import RunSession, cpu_environment, new_ray_dir, session_processes, shm_segments

pytestmark = pytest.mark.skipif(not Path("/dev/shm").is_dir() or sys.platform != "linux",
                                reason="Linux /proc and /dev/shm")


def test_cpu_environment_keeps_ray_on_loopback_with_a_private_token(tmp_path: Path) -> None:
    env = cpu_environment("verl", tmp_path / "ray", slots=2)
    assert env[CPU_MODE_ENV] == "verl"
    assert env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"  # Ray then takes 127.0.0.1 as the node address
    assert env["RAY_AUTH_MODE"] == "token"
    assert env["RAY_worker_niceness"] == "0"  # Ray's default 15 starves the run's own workers
    token = Path(env["RAY_AUTH_TOKEN_PATH"])
    assert token.parent == tmp_path / "ray" and len(token.read_text()) == 64
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert json.loads(env["RAY_OVERRIDE_RESOURCES"])["GPU"] == 2
    assert env["VERL_PLATFORM"] == "rlvr_cpu" and env["VERL_ENGINE_DEVICE"] == "cuda"
    other = cpu_environment("openrlhf", tmp_path / "ray2", extension_dir=tmp_path / "ext",
                            weight_sync_log=tmp_path / "sync.jsonl")
    assert other["DS_ACCELERATOR"] == "cpu" and other["TORCH_EXTENSIONS_DIR"] == str(tmp_path / "ext")
    assert other["RLVR_WEIGHT_SYNC_LOG"] == str(tmp_path / "sync.jsonl")
    assert "VERL_PLATFORM" not in other and "RLVR_WEIGHT_SYNC_LOG" not in env


def test_cpu_mode_is_off_unless_the_variable_names_a_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CPU_MODE_ENV, raising=False)
    assert cpu_mode() is None
    monkeypatch.setenv(CPU_MODE_ENV, "verl")
    assert cpu_mode() == "verl"
    monkeypatch.setenv(CPU_MODE_ENV, "cuda")
    assert cpu_mode() is None


def test_shim_error_names_the_shim_and_what_it_expected() -> None:
    error = ShimError("verl_platform.gloo_process_group", "initialize_global_process_group_ray(...)", "verl 0.9.1")
    assert "verl_platform.gloo_process_group" in str(error) and "verl 0.9.1" in str(error)


HOLDER = """
import mmap, os, subprocess, sys, time
name = sys.argv[1]
fd = os.open("/dev/shm/" + name, os.O_CREAT | os.O_RDWR, 0o600)
os.ftruncate(fd, 4096)
m = mmap.mmap(fd, 4096)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])  # a grandchild, like Ray's workers
print("ready", flush=True)
time.sleep(300)
"""


def test_run_session_stops_the_whole_session_and_removes_its_shm_segments() -> None:
    ours = f"psm_rlvrtest_{uuid.uuid4().hex[:8]}"
    theirs = Path("/dev/shm") / f"psm_rlvrtest_{uuid.uuid4().hex[:8]}"
    theirs.write_bytes(b"x")  # existed before the run: never touched
    session = RunSession(new_ray_dir(), interval_s=0.2)
    session.start()
    child = subprocess.Popen([sys.executable, "-c", HOLDER, ours], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        session.watch(child.pid)
        deadline = time.monotonic() + 10
        while len(session_processes(child.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        assert len(session_processes(child.pid)) == 2 and ours in shm_segments()
        cleaned = session.close(grace_s=5)
        assert session_processes(child.pid) == []
        assert ours in cleaned["shm"] and ours not in shm_segments()
        assert theirs.exists()
        assert not session.ray_dir.exists()
        assert session.peak_mb > 0
    finally:
        theirs.unlink(missing_ok=True)
        (Path("/dev/shm") / ours).unlink(missing_ok=True)
        for pid in session_processes(child.pid):
            os.kill(pid, 9)
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
