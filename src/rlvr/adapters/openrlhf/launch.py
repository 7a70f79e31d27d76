"""OpenRLHF launch: the `train_ppo_ray` arguments and command line for an export folder.

Arguments (OpenRLHF 0.11.2, `openrlhf/cli/train_ppo_ray.py`): dotted flag names
(`--actor.model_name_or_path`, `--data.prompt_dataset`, `--reward.remote_url`, `--train.agent_func_path`, ...),
turned into a nested namespace by `openrlhf.utils.config.hierarchize`.

`openrlhf_args` always enables dynamic filtering, the one mechanism that drops an error verdict's group
(`rlvr.adapters.openrlhf.reward`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlvr.adapters.export import cached_env, read_manifest
from rlvr.adapters.openrlhf.data import INPUT_KEY, LABEL_KEY
from rlvr.core.errors import ConfigError

__all__: list[str] = []


def _flag_args(values: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for name, value in values.items():
        if value is None or value is False:
            continue
        out.append(f"--{name}")
        if value is True:
            continue
        if isinstance(value, list | tuple):
            out += [str(v) for v in value]
        else:
            out.append(str(value))
    return out


OPENRLHF_CPU_ARGS: dict[str, Any] = {
    "rollout.batch_size": 2,  # x 4 samples = 8 responses per step, as `rlvr train --backend trl`
    "rollout.max_new_tokens": 64,  # TRL's max_completion_length in `rlvr train`
    "data.max_len": 512,
    "rollout.micro_batch_size": 4,
    "train.micro_batch_size": 4,
    "vllm.enable_sleep": False,  # "Sleep mode is not supported on current platform" (vLLM-CPU)
    "vllm.sync_backend": "gloo",  # nccl with colocated models picks CUDA IPC
    "vllm.enforce_eager": True,
    "actor.gradient_checkpointing_enable": False,
}
"""`openrlhf_args` values of rlvr's CPU mode (`device="cpu"`), before `trainer_args` (which win); the
launcher adds the shims and variables (`rlvr.adapters.cpu.openrlhf_shims`, `...launch.cpu_environment`)."""


def openrlhf_args(
    directory: Path,
    *,
    model: str,
    steps: int,
    trainer_args: Mapping[str, Any] | None = None,
    n_gpus: int = 1,
    device: str = "cuda",
) -> list[str]:
    """`openrlhf.cli.train_ppo_ray` arguments for the export in `directory` (dotted 0.11 flag names).

    Defaults: GRPO-style (`group_norm` advantages, 4 samples per prompt, no KL and so no reference
    model), actor and one vLLM engine colocated on `n_gpus` GPUs, 8 prompts per rollout and one
    optimiser step per rollout, `--data.max_samples = steps * rollout batch size` so the run has
    exactly `steps` steps (`prepare_datasets`: steps = prompts * n_samples // train batch). Dynamic
    filtering is always on, with a range just wider than the env's reward range, so only prompt
    groups holding an `error` verdict (NaN score) are dropped (`rlvr.adapters.openrlhf.reward`). With a `val.jsonl`,
    `--eval.dataset` is set and `--eval.steps = steps` (evaluated after the last step). Checkpoints and
    TensorBoard logs go to `directory/openrlhf/`.

    Args:
        directory: a folder written by `export_openrlhf`.
        model: the actor model folder or Hub id (`--actor.model_name_or_path`).
        steps: number of PPO steps (rollout + update), >= 1.
        trainer_args: dotted flag name (with or without `--`) -> value, overriding the defaults;
            True is a bare flag, False/None drops a flag, a list gives several values.
        n_gpus: GPUs on the node (actor and vLLM engines share them).
        device: 'cuda', or 'cpu' for rlvr's CPU mode (`OPENRLHF_CPU_ARGS`: gloo weight sync, no sleep
            mode, 2 prompts x 4 samples, 64 new tokens).

    Raises:
        ConfigError: `steps`/`n_gpus` < 1, the folder is not an OpenRLHF export, or trainer args
            disable dynamic filtering or set one sample per prompt (error verdicts would be trained on).
    """
    if steps < 1 or n_gpus < 1:
        raise ConfigError(f"steps and n_gpus must be >= 1, got steps={steps}, n_gpus={n_gpus}")
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest.backend != "openrlhf":
        raise ConfigError(f"{directory} holds a {manifest.backend!r} export; write it with --backend openrlhf")
    if device not in ("cuda", "cpu"):
        raise ConfigError(f"device must be cuda or cpu, got {device!r}")
    overrides = {k.removeprefix("--"): _cli_value(v) for k, v in (trainer_args or {}).items()}
    if device == "cpu":
        overrides = {**OPENRLHF_CPU_ARGS, **overrides}
    env = cached_env(manifest.env_id, manifest.env_args)
    low, high = env.spec.reward_range
    rollout_batch = int(overrides.get("rollout.batch_size", 8))
    n_samples = int(overrides.get("rollout.n_samples_per_prompt", 4))
    if n_samples < 2 or overrides.get("algo.dynamic_filtering_enable", True) is False:
        raise ConfigError("rlvr needs dynamic filtering with n_samples_per_prompt >= 2 on OpenRLHF: it is how an "
                          "error verdict (NaN score) is dropped instead of trained on; keep "
                          "rollout.n_samples_per_prompt >= 2 and algo.dynamic_filtering_enable")
    out_dir = directory / "openrlhf"
    values: dict[str, Any] = {
        "actor.model_name_or_path": model,
        "data.prompt_dataset": str(manifest.path(directory, "train")),
        "data.input_key": INPUT_KEY,
        "data.label_key": LABEL_KEY,
        "data.apply_chat_template": True,
        "data.max_samples": steps * rollout_batch,
        "data.max_len": 2048,
        "rollout.max_new_tokens": 1024,
        "rollout.batch_size": rollout_batch,
        "rollout.n_samples_per_prompt": n_samples,
        "rollout.micro_batch_size": 4,
        "train.batch_size": rollout_batch * n_samples,
        "train.micro_batch_size": 4,
        "train.num_episodes": 1,
        "algo.advantage.estimator": "group_norm",
        "algo.kl.init_coef": 0,
        "algo.dynamic_filtering_enable": True,
        "algo.dynamic_filtering_range": [_below(low), _above(high)],
        "actor.num_nodes": 1,
        "actor.num_gpus_per_node": n_gpus,
        "vllm.num_engines": n_gpus,
        "vllm.tensor_parallel_size": 1,
        "vllm.gpu_memory_utilization": 0.5,
        "vllm.enable_sleep": True,
        "train.colocate_all": True,
        "ds.zero_stage": 2,
        "ds.attn_implementation": "sdpa",
        "actor.adam.lr": 1e-6,
        "actor.gradient_checkpointing_enable": True,
        "ckpt.output_dir": str(out_dir / "model"),
        "ckpt.path": str(out_dir / "checkpoints"),
        "logger.tensorboard_dir": str(out_dir / "tensorboard"),
    }
    if "val" in manifest.files:  # OpenRLHF's default eval.steps (-1) never evaluates: evaluate after the last step
        values["eval.dataset"] = str(manifest.path(directory, "val"))
        values["eval.steps"] = steps
    if manifest.multi_turn:
        values["train.agent_func_path"] = str(manifest.path(directory, "agent"))
    else:
        values["reward.remote_url"] = str(manifest.path(directory, "reward"))
    values.update(overrides)
    return _flag_args(values)


def _cli_value(value: Any) -> Any:
    """A trainer arg value as `_flag_args` needs it: "true"/"false" strings (`--trainer-arg KEY=true`) as bools."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def _below(value: float) -> float:
    return -1e9 if not math.isfinite(value) else float(value) - 1.0


def _above(value: float) -> float:
    return 1e9 if not math.isfinite(value) else float(value) + 1.0


def openrlhf_command(
    directory: Path,
    *,
    python: str,
    model: str,
    steps: int,
    trainer_args: Mapping[str, Any] | None = None,
    n_gpus: int = 1,
    device: str = "cuda",
) -> list[str]:
    """`[python, "-m", "openrlhf.cli.train_ppo_ray", *openrlhf_args(...)]` (see `openrlhf_args`).

    With `device="cpu"` the module runs under rlvr's driver (`rlvr.adapters.cpu.driver`: watchdog, the
    private Ray node with the OpenRLHF shims).
    """
    args = openrlhf_args(directory, model=model, steps=steps, trainer_args=trainer_args, n_gpus=n_gpus, device=device)
    head = [python, "-m", "rlvr.adapters.cpu.driver"] if device == "cpu" else [python, "-m"]
    return [*head, "openrlhf.cli.train_ppo_ray", *args]
