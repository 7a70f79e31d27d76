"""`rlvr train --backend trl`: GRPO with TRL in this process, on an rlvr environment.

`train_trl` builds the environment with `rlvr.make`, turns it into a TRL dataset and reward
function (`rlvr.adapters.trl`; multi-turn environments: `rollout_func` or `environment_factory`),
runs `trl.GRPOTrainer` with the `GRPOConfig` of `rlvr.runners.train.grpo`, and writes into the
run folder:

```
reward_curve.csv   one row per logged step: reward mean/std and verdict-status fractions (incremental)
reward_curve.png   the same curve, plotted at the end of training
model/             the trained weights and tokenizer
```

The output folder is created only once the config, environment and model are validated. On
Ctrl-C during training the partial `reward_curve.csv` is kept and plotted before re-raising.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.adapters.trl import require_trl
from rlvr.core.errors import BackendError, ConfigError
from rlvr.runners.train.config import TrainConfig
from rlvr.runners.train.curve import reward_curve_callback, step_progress_callback
from rlvr.runners.train.grpo import build_grpo_config

__all__ = ["train_trl"]


@dataclass(frozen=True)
class TrainResult:
    """What `train_trl` produced.

    Attributes:
        output: the run folder.
        model_dir: `output/model`, the trained weights and tokenizer.
        curve_csv: `output/reward_curve.csv`.
        curve_png: `output/reward_curve.png`.
        steps: optimizer steps taken.
        wall_s: seconds of training (model loading excluded).
        log_history: TRL's log entries, one dict per log.
    """

    output: Path
    model_dir: Path
    curve_csv: Path
    curve_png: Path
    steps: int
    wall_s: float
    log_history: list[dict[str, Any]]


_MODEL_LOAD_HINT = ("a Hugging Face id must already be in the local Hugging Face cache when offline "
                    "(set HF_HOME to that cache), or pass an existing local model folder")


def _dataset_limit(env: Any, config: Any, steps: int) -> int:
    """Rows a run of `steps` steps reads (unique prompts per step x steps), capped by the env size."""
    per_step: int = math.ceil(config.per_device_train_batch_size * config.gradient_accumulation_steps
                         * max(1, config.world_size) / config.num_generations)
    return max(1, min(len(env.tasks), per_step * steps * max(1, int(config.num_iterations))))


def train_trl(config: TrainConfig) -> TrainResult:
    """Train `config.model` on `config.env` with TRL's GRPO for `config.steps` steps; write results to `config.output`.

    Raises:
        ConfigError: a backend other than trl (veRL and OpenRLHF train through `run_backend`), an unknown
            environment, multi-turn path or trainer argument, a missing model folder.
        BackendError: the model could not be loaded (e.g. a Hub id not in the local cache offline).
        MissingExtraError: the trl extra is not installed.
        KeyboardInterrupt: re-raised after keeping (and plotting) the partial reward curve.
    """
    if config.backend != "trl":
        raise ConfigError(f"train_trl trains with trl, not {config.backend!r} (it trains in its own process: use "
                          "rlvr.runners.train.external.run_backend)")
    require_trl()
    from rlvr.adapters.trl import to_dataset
    from rlvr.adapters.trl.rollout import MULTI_TURN_PATHS
    from rlvr.environments.registry import make
    from rlvr.runners.models import resolve_model
    from rlvr.runners.task_filter import select_tasks

    if config.multi_turn not in MULTI_TURN_PATHS:
        raise ConfigError(f"multi-turn path must be one of {', '.join(MULTI_TURN_PATHS)}, got {config.multi_turn!r}")

    output = config.output
    grpo = build_grpo_config(output, config.steps, config.trainer_args)
    if output.exists() and not output.is_dir():
        raise ConfigError(f"output {str(output)!r} exists and is not a folder")
    model_path = resolve_model(config.model)  # before `make`: a missing folder fails fast, no env to close
    environment = make(config.env, **config.env_args)
    try:
        select_tasks(environment, config.tasks, env_id=config.env, env_args=config.env_args)
        dataset = to_dataset(environment, limit=_dataset_limit(environment, grpo, config.steps))
        result = _run_grpo(environment, dataset, model_path, grpo, output, config.multi_turn)
    finally:
        environment.close()
    return result


def _trainer_hooks(environment: Any, model_path: str, grpo: Any, multi_turn: str) -> dict[str, Any]:
    """`GRPOTrainer` reward/rollout keyword arguments: single-turn rewards, or the multi-turn hooks."""
    from rlvr.adapters.export import is_multi_turn
    from rlvr.adapters.trl import reward_funcs

    if is_multi_turn(environment):
        from rlvr.adapters.trl.rollout import multi_turn_hooks

        return multi_turn_hooks(environment, model_path, grpo, multi_turn)
    return {"reward_funcs": reward_funcs(environment)}


def _run_grpo(environment: Any, dataset: Any, model_path: str, grpo: Any, output: Path,
              multi_turn: str) -> TrainResult:
    """Build the trainer (output folder only once it loads), train, save the model; keep the curve on Ctrl-C."""
    from transformers.trainer_callback import ProgressCallback
    from trl import GRPOTrainer

    created = not output.exists()
    try:
        hooks = _trainer_hooks(environment, model_path, grpo, multi_turn)
        callback = reward_curve_callback(output, f"GRPO on {environment.spec.id} ({Path(model_path).name})",
                                         hooks["reward_funcs"][0].__name__)
        with warnings.catch_warnings():  # TRL 1.16 flags both multi-turn hooks as experimental
            warnings.filterwarnings("ignore", message="You are using '(rollout_func|environment_factory)'",
                                    category=UserWarning)
            trainer = GRPOTrainer(model=model_path, args=grpo, train_dataset=dataset, callbacks=[callback], **hooks)
        if trainer.pop_callback(ProgressCallback) is not None:  # one short line a step, not the raw metric dict
            trainer.add_callback(step_progress_callback(hooks["reward_funcs"][0].__name__))
    except OSError as exc:
        if created and output.is_dir() and not any(output.iterdir()):
            output.rmdir()  # the trainer may have created it; leave no empty folder behind
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendError(f"could not load model {model_path!r}: {first}; hint: {_MODEL_LOAD_HINT}") from exc
    output.mkdir(parents=True, exist_ok=True)  # only now: config, environment and model are valid
    print(f"rlvr train: {environment.spec.id} with {model_path}, {grpo.max_steps} steps -> {output}", file=sys.stderr)
    start = time.monotonic()
    try:
        with warnings.catch_warnings():
            # transformers 5 deprecated this property; TRL 1.16 still reads it on every generation.
            warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated",
                                    category=FutureWarning)
            trainer.train()
    except KeyboardInterrupt:
        kept = (f"reward_curve.csv/png kept in {output}" if callback.plot()
                else f"no step was logged, so no reward curve in {output}")
        print(f"rlvr train: interrupted after {trainer.state.global_step} steps; {kept}", file=sys.stderr)
        raise
    wall = time.monotonic() - start
    model_dir = output / "model"
    trainer.save_model(str(model_dir))
    return TrainResult(output=output, model_dir=model_dir, curve_csv=callback.csv_path, curve_png=callback.png_path,
                       steps=trainer.state.global_step, wall_s=wall, log_history=list(trainer.state.log_history))
