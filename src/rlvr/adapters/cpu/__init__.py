"""rlvr's CPU mode for veRL and OpenRLHF: plugins and shims, inert unless `rlvr train` asks for them.

veRL 0.9 and OpenRLHF 0.11 assume CUDA GPUs. rlvr trains them on CPU (vLLM-CPU rollouts, gloo
collectives) without editing their sources, through the extension points they and vLLM offer:

```
verl_platform   a veRL platform ("rlvr_cpu", entry point group `verl.plugins`, chosen by VERL_PLATFORM)
vllm_plugin     a vLLM general plugin (group `vllm.general_plugins`): plain F.linear weights (no oneDNN
                repacking), so weight sync finds `weight_loader` on every parameter
openrlhf_shims  OpenRLHF start-up shims (torch.cuda as the CPU device, gloo weight broadcast, CPU buffers)
launch          the launcher's side: environment of the child, loopback-only Ray, clean-up of Ray and
                /dev/shm, the watchdog
```

Every plugin checks `RLVR_CPU_MODE` (`CPU_MODE_ENV`) first and returns at once when it is unset,
so installing rlvr changes nothing for a GPU run. `rlvr.runners.train.external` sets it (with the other
variables of `launch.cpu_environment`) for `rlvr train --backend verl|openrlhf --device cpu`.

A shim that no longer fits the installed upstream code raises `ShimError` naming the shim, the
upstream object it expected and the version it was written for.
"""

from __future__ import annotations

import os

from rlvr.core.errors import BackendError

__all__ = ["CPU_MODES", "CPU_MODE_ENV", "ShimError", "cpu_mode"]

CPU_MODE_ENV = "RLVR_CPU_MODE"
"""Environment variable naming the backend rlvr's CPU mode is on for ('verl' or 'openrlhf'); unset: off."""

CPU_MODES: tuple[str, ...] = ("verl", "openrlhf")


class ShimError(BackendError):
    """A CPU shim does not fit the installed upstream code (an upgrade moved what it patches)."""

    def __init__(self, shim: str, expected: str, written_for: str) -> None:
        super().__init__(f"rlvr CPU shim {shim!r} no longer fits: expected {expected} (written for {written_for}); "
                         "the installed version changed it. Pin the version rlvr was written for "
                         "(scripts/requirements/) or update rlvr.adapters.cpu")
        self.shim = shim


def cpu_mode() -> str | None:
    """The backend rlvr's CPU mode is on for in this process (`$RLVR_CPU_MODE`), or None."""
    mode = os.environ.get(CPU_MODE_ENV, "").strip().lower()
    return mode if mode in CPU_MODES else None
