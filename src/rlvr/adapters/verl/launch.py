"""veRL launch: the hydra overrides and command line of `verl.trainer.main_ppo` for an export folder.

`verl_overrides` points `data.train_files`/`val_files`, `reward.custom_reward_function.path`/`name`
and `actor_rollout_ref.rollout.agent.agent_loop_config_path` at the files `rlvr.adapters.verl.data.export_verl`
wrote, pins veRL's v1 trainer (which drops failed rollouts, see `rlvr.adapters.verl.reward`) and, in
rlvr's CPU mode, adds `VERL_CPU_OVERRIDES`; `verl_command` is the command `rlvr train` runs and
`verl_config` composes veRL's own config with the overrides (to check them without training).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr.adapters.export import read_manifest
from rlvr.adapters.verl.reward import ON_ERROR_KEY
from rlvr.core.errors import ConfigError, MissingExtraError

__all__: list[str] = []


def require_verl() -> None:
    """Raise `MissingExtraError` (naming `pip install 'rlvr[verl]'`) unless verl and hydra import."""
    for package in ("verl", "hydra", "omegaconf"):
        if importlib.util.find_spec(package) is None:
            raise MissingExtraError(package, "verl")


def _override_key(override: str) -> str:
    """The config key of a hydra override ('+a.b=1' -> 'a.b'; '~a.b' -> 'a.b')."""
    if "=" not in override and not override.startswith("~"):
        raise ConfigError(f"trainer argument {override!r} is not a hydra override; write key=value "
                          "(e.g. data.train_batch_size=32)")
    return override.split("=", 1)[0].lstrip("~+")


def _batch_size(n_train: int, n_gpus: int) -> int:
    """Prompts per step: up to 32, a multiple of `n_gpus` when the data allows it."""
    size = min(32, n_train)
    if size >= n_gpus:
        size -= size % n_gpus
    return max(size, 1)


DEVICES: tuple[str, ...] = ("cuda", "cpu")
"""Where veRL trains: 'cuda' (GPUs, veRL's defaults) or 'cpu' (rlvr's CPU mode, `VERL_CPU_OVERRIDES`)."""

CPU_BATCH_PROMPTS = 2
"""Prompts per step in CPU mode (x 4 rollouts = 8 responses, as `rlvr train --backend trl` by default)."""

VERL_CPU_OVERRIDES: tuple[str, ...] = (
    "trainer.device=cpu",
    "actor_rollout_ref.actor.strategy=fsdp2",  # FSDP1 asks for an accelerator; FSDP2 runs on the CPU device
    "actor_rollout_ref.model.use_remove_padding=False",  # needs flash-attn's varlen kernels
    "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",  # veRL's default: flash_attention_2
    "actor_rollout_ref.actor.use_torch_compile=False",
    "actor_rollout_ref.actor.fsdp_config.use_torch_compile=False",
    "actor_rollout_ref.ref.use_torch_compile=False",
    "actor_rollout_ref.actor.fsdp_config.dtype=float32",  # fp32 end to end: rollout and actor log-probs agree
    "actor_rollout_ref.rollout.dtype=float32",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
    "actor_rollout_ref.rollout.enforce_eager=True",  # no graph capture on CPU
    "actor_rollout_ref.rollout.free_cache_engine=False",  # no sleep mode on vLLM-CPU
    "+actor_rollout_ref.rollout.enable_sleep_mode=False",
    "actor_rollout_ref.rollout.agent.num_workers=1",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4",
    "reward.num_workers=1",
    "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
    "data.dataloader_num_workers=0",
    "data.max_prompt_length=256",
    "data.max_response_length=64",  # as TRL's max_completion_length in `rlvr train`
    "+ray_kwargs.ray_init.include_dashboard=False",
    "trainer.resume_mode=disable",
    "trainer.val_before_train=False",
    "trainer.test_freq=-1",
    "actor_rollout_ref.actor.checkpoint.save_contents=[hf_model]",  # the trained model folder, no optimizer state
)
"""Hydra overrides of rlvr's CPU mode (`device="cpu"`), before `trainer_args` (which win). Beside them the
launcher sets the platform plugin's variables (`rlvr.adapters.cpu.launch.cpu_environment`); the weight
transfer bucket stays at veRL's 2048 MB (below 1024 MB it splits SmolLM2's tied embedding)."""


def verl_overrides(
    directory: str | Path,
    *,
    model: str,
    steps: int,
    trainer_args: Sequence[str] | None = None,
    n_gpus: int = 1,
    device: str = "cuda",
) -> list[str]:
    """Hydra overrides of `verl.trainer.main_ppo` for an export folder.

    Sets the data files, the reward function (`reward.custom_reward_function.path/name`), the agent
    loop config (multi-turn), the model, GRPO (no critic) with 4 rollouts per prompt, vLLM rollout, batch sizes
    that fit the data (up to 32 prompts per step), `trainer.total_training_steps=steps`, a console
    logger, checkpoints under `<directory>/checkpoints` and veRL's v1 trainer (`trainer.use_v1=True`,
    which drops failed rollouts; `rlvr.adapters.verl.reward`). A model path that exists locally is made absolute.
    `trainer_args` (hydra overrides) come last and replace rlvr's value of the same key; when they
    select the legacy trainer (`trainer.use_v1=False`) and set no `on_error`, error verdicts score NaN
    (`+reward.custom_reward_function.reward_kwargs.on_error=nan`) so that one does not stop the run.

    Args:
        directory: folder written by `export_verl`.
        model: model path or hub id (`actor_rollout_ref.model.path`).
        steps: training steps (>= 1).
        trainer_args: extra overrides, e.g. ['data.max_response_length=256'].
        n_gpus: GPUs on the node (`trainer.n_gpus_per_node`); in CPU mode, actor workers.
        device: 'cuda', or 'cpu' for rlvr's CPU mode: `VERL_CPU_OVERRIDES`, `CPU_BATCH_PROMPTS` prompts
            per step, and the model saved at the last step (`<directory>/checkpoints`).

    Raises:
        ConfigError: the folder is not a veRL export; bad steps/n_gpus/device; a trainer argument that is
            not `key=value`.
    """
    if device not in DEVICES:
        raise ConfigError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    directory = Path(directory).resolve()
    manifest = read_manifest(directory)
    if manifest.backend != "verl":
        raise ConfigError(f"{directory} holds a {manifest.backend!r} export; "
                          "write it with `rlvr export --backend verl`")
    for name, value in (("steps", steps), ("n_gpus", n_gpus)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    train = manifest.path(directory, "train")
    val = manifest.path(directory, "val") if "val" in manifest.files else train
    batch = _batch_size(manifest.n_train, n_gpus)
    if device == "cpu":
        batch = min(batch, max(n_gpus, CPU_BATCH_PROMPTS))
    local = Path(model).expanduser()
    if local.exists():  # a local folder: absolute, since `rlvr train` starts veRL in its output folder
        model = str(local.resolve())
    ours = [
        f"data.train_files={train}",
        f"data.val_files={val}",
        f"data.train_batch_size={batch}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={batch}",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1",
        f"actor_rollout_ref.model.path={model}",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.n=4",
        "algorithm.adv_estimator=grpo",
        "critic.enable=False",
        f"reward.custom_reward_function.path={manifest.path(directory, 'reward')}",
        "reward.custom_reward_function.name=compute_score",
        f"trainer.total_training_steps={steps}",
        f"trainer.n_gpus_per_node={n_gpus}",
        "trainer.nnodes=1",
        "trainer.logger=[console]",
        "trainer.project_name=rlvr",
        f"trainer.experiment_name={re.sub(r'[^A-Za-z0-9_.-]+', '_', manifest.env_id)}",
        f"trainer.default_local_dir={directory / 'checkpoints'}",
        "trainer.use_v1=True",  # the trainer that drops failed rollouts (error verdicts; verl.reward)
    ]
    if "val" not in manifest.files:
        ours += ["trainer.val_before_train=False", "trainer.test_freq=-1"]
    if device == "cpu":
        ours = [o for o in ours if not o.startswith(("actor_rollout_ref.actor.ppo_micro", "actor_rollout_ref.rollout."
                                                     "log_prob_micro", "actor_rollout_ref.ref.log_prob_micro"))]
        ours += [o for o in VERL_CPU_OVERRIDES if _override_key(o) not in {_override_key(x) for x in ours}]
        ours += [f"trainer.save_freq={steps}",  # the model folder of `rlvr train`
                 f"trainer.rollout_data_dir={directory / 'rollouts'}"]  # per-step responses: the status columns
    if manifest.multi_turn:
        ours += [f"actor_rollout_ref.rollout.agent.agent_loop_config_path={manifest.path(directory, 'agent_config')}",
                 "actor_rollout_ref.rollout.multi_turn.enable=True"]
    extra = list(trainer_args or [])
    replaced = {_override_key(o) for o in extra}
    if _legacy_trainer(extra) and ON_ERROR_KEY not in replaced:
        # the legacy trainer stops the run on any exception in a rollout: score error verdicts NaN there
        extra.append(f"+{ON_ERROR_KEY}=nan")
    return [o for o in ours if _override_key(o) not in replaced] + extra


def _legacy_trainer(overrides: Sequence[str]) -> bool:
    """True when `overrides` select veRL's legacy trainer (`trainer.use_v1=false`, the last one wins)."""
    values = [o.split("=", 1)[1] for o in overrides if "=" in o and _override_key(o) == "trainer.use_v1"]
    return bool(values) and values[-1].strip().strip("'\"").lower() in ("false", "0", "no", "off")


def verl_command(
    directory: str | Path,
    *,
    python: str,
    model: str,
    steps: int,
    trainer_args: Sequence[str] | None = None,
    n_gpus: int = 1,
    device: str = "cuda",
) -> list[str]:
    """`[python, "-m", "verl.trainer.main_ppo", *verl_overrides(...)]` (see `verl_overrides`).

    With `device="cpu"` the module runs under rlvr's driver watchdog:
    `[python, "-m", "rlvr.adapters.cpu.driver", "verl.trainer.main_ppo", ...]`.
    """
    head = [python, "-m", "rlvr.adapters.cpu.driver"] if device == "cpu" else [python, "-m"]
    return [*head, "verl.trainer.main_ppo",
            *verl_overrides(directory, model=model, steps=steps, trainer_args=trainer_args, n_gpus=n_gpus,
                            device=device)]


def verl_config(overrides: Sequence[str]) -> Any:
    """The `ppo_trainer` config of veRL composed with `overrides` (what `main_ppo`'s `@hydra.main` builds).

    Returns:
        The composed `omegaconf.DictConfig`.

    Raises:
        MissingExtraError: verl/hydra are not installed.
        hydra.errors.ConfigCompositionException: an override names a key veRL's config lacks.
    """
    require_verl()
    from hydra import compose, initialize_config_dir

    spec = importlib.util.find_spec("verl.trainer")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("verl", "verl")
    config_dir = Path(next(iter(spec.submodule_search_locations))) / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(config_name="ppo_trainer", overrides=list(overrides))
