"""`rlvr train`: train a policy on an rlvr environment with a trainer backend (TRL GRPO, veRL, OpenRLHF).

`train_command` builds the environment with `rlvr.make`, turns it into a TRL dataset and reward
function (`rlvr.adapters.trl`), runs `trl.GRPOTrainer`, and writes into `output/`:

```
reward_curve.csv   one row per logged step: reward mean/std and verdict-status fractions (incremental)
reward_curve.png   the same curve, plotted at the end of training
model/             the trained weights and tokenizer
```

Defaults are small enough for a CPU (`DEFAULT_GRPO_ARGS`); any `GRPOConfig` field except
`max_steps` and `output_dir` (use `steps` / `output`) can be overridden through `trainer_args`
(strings are coerced to the field's type).

The output folder is created only once the config, environment and model are validated. On
Ctrl-C during training the partial `reward_curve.csv` is kept and plotted before re-raising.

`--backend verl|openrlhf` (`train_backend`) trains in the backend's own process and interpreter:
the export, the command and the launch are in `rlvr.runners.backends`.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import json
import math
import os
import sys
import time
import types
import typing
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.adapters.trl import METRIC_PREFIX, STATUSES, require_trl
from rlvr.core.errors import ConfigError

__all__ = [
    "CURVE_COLUMNS",
    "DEFAULT_GRPO_ARGS",
    "SUPPORTED_BACKENDS",
    "TrainResult",
    "build_grpo_config",
    "coerce_trainer_args",
    "curve_row",
    "plot_reward_curve",
    "reward_curve_callback",
    "train_backend",
    "train_command",
]

SUPPORTED_BACKENDS = ("trl", "verl", "openrlhf")
"""`trl` trains in this process (`train_command`); `verl` and `openrlhf` in their own (`train_backend`)."""

DEFAULT_GRPO_ARGS: dict[str, Any] = {
    "num_generations": 4,
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "max_completion_length": 64,
    "learning_rate": 1e-5,
    "lr_scheduler_type": "constant",
    "warmup_steps": 0,
    "beta": 0.0,
    "temperature": 1.0,
    "logging_steps": 1,
    "report_to": "none",
    "save_strategy": "no",
    "seed": 0,
    "activation_checkpointing": False,
}
"""GRPOConfig values used unless `trainer_args` overrides them: 2 prompts x 4 samples per step,
64-token completions, constant lr 1e-5, no KL term (beta 0), a log line every step. Activation
checkpointing is off (TRL turns it on by default; on CPU with short completions it only costs time)
and set under its transformers-5 name, so the deprecated `gradient_checkpointing` alias never warns."""

CURVE_COLUMNS: tuple[str, ...] = (
    "step", "reward", "reward_std", *STATUSES, "completion_length", "elapsed_s", "peak_rss_mb", "num_tokens",
)
"""Columns of `reward_curve.csv`; the status columns are fractions of the step's completions;
`num_tokens` is TRL's running count of tokens seen (prompts + completions, `num_input_tokens_seen`)."""


@dataclass(frozen=True)
class TrainResult:
    """What `train_command` produced."""

    output: Path
    model_dir: Path
    curve_csv: Path
    curve_png: Path
    steps: int
    wall_s: float
    log_history: list[dict[str, Any]]


# -- GRPOConfig construction ----------------------------------------------------------------
_NO_MATCH = object()
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _parse_as(base: Any, text: str) -> Any:
    """`text` parsed as the type `base` (bool, int, float, list, dict), or `_NO_MATCH`."""
    try:
        if base is bool:
            lowered = text.lower()
            return True if lowered in _TRUE else False if lowered in _FALSE else _NO_MATCH
        if base in (int, float):
            return base(text)
        if base in (list, dict):
            parsed = json.loads(text)
            return parsed if isinstance(parsed, base) else _NO_MATCH
    except ValueError:
        pass
    return _NO_MATCH


_TYPE_WORDS = {bool: "a bool (true/false)", int: "an int", float: "a float", list: "a JSON list",
               dict: "a JSON object", str: "a string"}
RESERVED_TRAINER_ARGS = {"max_steps": "--steps (steps=)", "output_dir": "--output (output=)"}
"""GRPOConfig fields set by `train_command` itself; giving them as trainer arguments is an error."""


def _describe(options: tuple[Any, ...]) -> str:
    words = [_TYPE_WORDS.get(typing.get_origin(o) or o, getattr(o, "__name__", str(o)))
             for o in options if o is not type(None)]
    if type(None) in options:
        words.append("none")
    return " or ".join(words) or "a valid value"


def _coerce_one(name: str, value: Any, hint: Any) -> Any:
    """Coerce a CLI string to the annotated type of a config field (other values pass through)."""
    if not isinstance(value, str):
        return value
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    text = value.strip()
    if type(None) in options and text.lower() in ("none", "null"):
        return None
    for option in options:
        parsed = _parse_as(typing.get_origin(option) or option, text)
        if parsed is not _NO_MATCH:
            return parsed
    if any(o is str or (isinstance(o, type) and issubclass(o, str)) for o in options):
        return value
    raise ConfigError(f"trainer argument {name} must be {_describe(options)}, got {value!r}")


def coerce_trainer_args(config_cls: type, trainer_args: dict[str, Any]) -> dict[str, Any]:
    """Check `trainer_args` against the fields of the dataclass `config_cls` and coerce strings.

    Raises:
        ConfigError: for an unknown field (the message lists close matches), a field set by
            `train_command` itself (`max_steps`, `output_dir`) or an uncoercible value.
    """
    fields = {f.name: f for f in dataclasses.fields(config_cls) if f.init}
    hints = typing.get_type_hints(config_cls)
    out: dict[str, Any] = {}
    for name, value in trainer_args.items():
        key = name.replace("-", "_")
        if key in RESERVED_TRAINER_ARGS:
            raise ConfigError(f"trainer argument {key!r} is set by rlvr train; use {RESERVED_TRAINER_ARGS[key]} "
                              "instead of --trainer-arg")
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise ConfigError(f"unknown {config_cls.__name__} field {name!r}{hint}")
        out[key] = _coerce_one(key, value, hints.get(key, fields[key].type))
    return out


def build_grpo_config(output: Path, steps: int, trainer_args: dict[str, Any] | None = None) -> Any:
    """A `trl.GRPOConfig`: `DEFAULT_GRPO_ARGS`, CPU settings when no CUDA, then `trainer_args`.

    Raises:
        ConfigError: for unknown fields, bad values, or settings GRPOConfig rejects.
    """
    require_trl()
    import torch
    from trl import GRPOConfig

    if steps < 1:
        raise ConfigError(f"steps must be >= 1, got {steps}")
    values: dict[str, Any] = {**DEFAULT_GRPO_ARGS, "output_dir": str(output), "max_steps": steps}
    if torch.cuda.is_available():
        values["bf16"] = torch.cuda.is_bf16_supported()
    else:
        values.update(use_cpu=True, bf16=False, dataloader_pin_memory=False)
    overrides = coerce_trainer_args(GRPOConfig, trainer_args or {})
    for old, new in (("gradient_checkpointing", "activation_checkpointing"),
                     ("gradient_checkpointing_kwargs", "activation_checkpointing_kwargs")):
        if old in overrides and new not in overrides:  # the deprecated alias is ignored once `new` is set
            overrides[new] = overrides.pop(old)
    values.update(overrides)
    _check_generation_batch(values)
    try:
        return GRPOConfig(**values)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"GRPOConfig rejected the trainer arguments: {exc}") from exc


def _check_generation_batch(values: dict[str, Any]) -> None:
    """Reject a batch size that is not a multiple of `num_generations` before GRPOConfig does, clearly.

    GRPO samples `num_generations` completions per prompt, so the generation batch (by default
    `per_device_train_batch_size` x `steps_per_generation`, which defaults to
    `gradient_accumulation_steps`) must divide evenly. An explicit `generation_batch_size` is left to
    GRPOConfig's own check.
    """
    if values.get("generation_batch_size") is not None:
        return
    num_generations = values.get("num_generations")
    batch = values.get("per_device_train_batch_size")
    if not isinstance(num_generations, int) or not isinstance(batch, int) or num_generations < 1:
        return
    steps_per_generation = values.get("steps_per_generation") or values.get("gradient_accumulation_steps") or 1
    if (batch * steps_per_generation) % num_generations == 0:
        return
    suggestion = num_generations * max(1, round(batch / num_generations))
    raise ConfigError(f"per_device_train_batch_size ({batch}) must be a multiple of num_generations "
                      f"({num_generations}): each prompt gets num_generations completions per batch; "
                      f"e.g. --trainer-arg per_device_train_batch_size={suggestion}")


# -- reward curve -----------------------------------------------------------------------------
def _status_metric(log: dict[str, Any], status: str, reward_name: str | None) -> Any:
    """`rlvr/<reward_name>/<status>` from a log entry; with no name, the first `rlvr/*/<status>` key."""
    if reward_name is not None:
        return log.get(f"{METRIC_PREFIX}/{reward_name}/{status}")
    prefix, suffix = f"{METRIC_PREFIX}/", f"/{status}"
    for key, value in log.items():
        if key.startswith(prefix) and key.endswith(suffix) and key.count("/") == 2:
            return value
    return None


def curve_row(log: dict[str, Any], elapsed_s: float, reward_name: str | None = None) -> dict[str, Any] | None:
    """One `reward_curve.csv` row from a TRL training log entry; None for entries without a reward.

    Status fractions come from the `rlvr/<reward_name>/<status>` metrics logged by
    `rlvr.adapters.trl.VerifierReward` (with `reward_name` None: the first such reward found).
    """
    if "reward" not in log or log.get("reward") is None:
        return None
    row: dict[str, Any] = {
        "step": log.get("step"),
        "reward": log.get("reward"),
        "reward_std": log.get("reward_std"),
        "completion_length": log.get("completions/mean_length"),
        "elapsed_s": round(elapsed_s, 2),
        "peak_rss_mb": _peak_rss_mb(),
        "num_tokens": log.get("num_tokens"),
    }
    for status in STATUSES:
        row[status] = _status_metric(log, status, reward_name)
    return row


def _peak_rss_mb() -> float | None:
    """Peak resident memory of this process, MiB (None where `resource` is missing, e.g. Windows)."""
    try:
        import resource
    except ImportError:
        return None
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux reports KiB


def write_curve_csv(rows: list[dict[str, Any]], path: Path, extra: tuple[str, ...] = ()) -> None:
    """Write the curve rows (rewritten whole on each call, via a temporary file and rename).

    Columns: `CURVE_COLUMNS`, then `extra` (a backend's own per-step metrics, e.g. veRL's rollout/actor
    probability correlation); other keys of the rows are left out.
    """
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*CURVE_COLUMNS, *extra], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


def plot_reward_curve(rows: list[dict[str, Any]], path: Path, title: str = "") -> None:
    """Plot mean reward (± std) and the fraction correct per step to a PNG (Agg, no pyplot state)."""
    os.environ.setdefault("MPLCONFIGDIR", str(Path(os.environ.get("TMPDIR", "/tmp")) / "rlvr-matplotlib"))
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    steps = [float(r["step"]) for r in rows]
    reward = [_num(r["reward"]) for r in rows]
    std = [_num(r.get("reward_std")) for r in rows]
    fig = Figure(figsize=(7, 4), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(steps, reward, marker=".", label="mean reward")
    low = [m - s for m, s in zip(reward, std, strict=True)]
    high = [m + s for m, s in zip(reward, std, strict=True)]
    ax.fill_between(steps, low, high, alpha=0.2, label="± std")
    if any(r.get("correct") is not None for r in rows):
        ax.plot(steps, [_num(r.get("correct")) for r in rows], linestyle="--", label="fraction correct")
    if len(rows) >= 5:
        window = max(2, len(rows) // 10)
        smooth = [sum(reward[max(0, i - window + 1): i + 1]) / len(reward[max(0, i - window + 1): i + 1])
                  for i in range(len(reward))]
        ax.plot(steps, smooth, linewidth=2, label=f"mean reward, {window}-step moving average")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("training step")
    ax.set_ylabel("reward")
    ax.set_title(title or "GRPO reward curve")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(str(path))


def _num(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number


def reward_curve_callback(output: Path, title: str, reward_name: str | None = None) -> Any:
    """A `TrainerCallback` that appends to `reward_curve.csv` on every log and plots at the end.

    `reward_name` is the `VerifierReward.__name__` whose status metrics fill the status columns
    (None: the first rlvr reward found in each log). `callback.plot()` draws the PNG from the rows so
    far (used after an interrupted run).
    """
    from transformers import TrainerCallback

    class RewardCurveCallback(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []
            self.start = time.monotonic()
            self.csv_path = output / "reward_curve.csv"
            self.png_path = output / "reward_curve.png"

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.start = time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            row = curve_row({**(logs or {}), "step": state.global_step}, time.monotonic() - self.start,
                            reward_name)
            if row is not None and state.is_world_process_zero:
                self.rows.append(row)
                write_curve_csv(self.rows, self.csv_path)

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if state.is_world_process_zero:
                self.plot()

        def plot(self) -> bool:
            """Plot the rows so far to `reward_curve.png`; False when there are none."""
            if not self.rows:
                return False
            plot_reward_curve(self.rows, self.png_path, title)
            return True

    return RewardCurveCallback()


# -- the command ----------------------------------------------------------------------------
def _dataset_limit(env: Any, config: Any, steps: int) -> int:
    """Rows a run of `steps` steps reads (unique prompts per step x steps), capped by the env size."""
    per_step: int = math.ceil(config.per_device_train_batch_size * config.gradient_accumulation_steps
                         * max(1, config.world_size) / config.num_generations)
    return max(1, min(len(env.tasks), per_step * steps * max(1, int(config.num_iterations))))


def train_command(
    backend: str,
    env: str,
    env_args: dict[str, Any] | None,
    model: str | None,
    steps: int,
    output: Path,
    trainer_args: dict[str, Any] | None,
    multi_turn: str = "auto",
    tasks: Path | None = None,
) -> TrainResult:
    """Train `model` on environment `env` with TRL for `steps` steps; write results to `output`.

    Args:
        backend: 'trl' (GRPO); 'verl' and 'openrlhf' train through `train_backend`.
        env: a registered environment id, e.g. 'math/reasoning-gym-v1'.
        env_args: keyword arguments of the environment factory (e.g. `{"task": "basic_arithmetic"}`).
        model: a local checkpoint folder, a Hub id, or None / 'smollm2' for the embedded
            SmolLM2-135M-Instruct (`rlvr.runners.models.resolve_model`).
        steps: optimizer steps.
        output: folder for `reward_curve.csv`, `reward_curve.png` and `model/`.
        trainer_args: `GRPOConfig` overrides (unknown names raise ConfigError with close matches).
        multi_turn: for multi-turn envs (`spec.max_turns > 1` or tools): 'auto' (TRL's
            `environment_factory` for tool envs, `rollout_func` otherwise), 'environment_factory' or
            'rollout_func' (`rlvr.adapters.trl.rollout.multi_turn_hooks`).
        tasks: train only on the tasks this JSONL lists (`rlvr synth`'s rl.jsonl; `rlvr.runners.task_filter`).

    Raises:
        ConfigError: unsupported backend, unknown environment or trainer argument, missing model folder.
        BackendError: the model could not be loaded (e.g. a Hub id not in the local cache offline).
        MissingExtraError: the backend's extra is not installed.
        KeyboardInterrupt: re-raised after keeping (and plotting) the partial reward curve.
    """
    if backend != "trl":
        hint = " (they train in their own process: use train_backend)" if backend in SUPPORTED_BACKENDS else ""
        raise ConfigError(f"train_command trains with trl, not {backend!r}{hint}; "
                          f"supported backends: {', '.join(SUPPORTED_BACKENDS)}")
    require_trl()
    from rlvr.adapters.trl import to_dataset
    from rlvr.adapters.trl.rollout import MULTI_TURN_PATHS
    from rlvr.environments.registry import make
    from rlvr.runners.models import resolve_model
    from rlvr.runners.task_filter import select_tasks

    if multi_turn not in MULTI_TURN_PATHS:
        raise ConfigError(f"multi-turn path must be one of {', '.join(MULTI_TURN_PATHS)}, got {multi_turn!r}")

    output = Path(output)
    config = build_grpo_config(output, steps, trainer_args)
    if output.exists() and not output.is_dir():
        raise ConfigError(f"output {str(output)!r} exists and is not a folder")
    model_path = resolve_model(model)  # before `make`: a missing folder fails fast, no env to close
    environment = make(env, **(env_args or {}))
    try:
        select_tasks(environment, tasks, env_id=env, env_args=env_args)
        dataset = to_dataset(environment, limit=_dataset_limit(environment, config, steps))
        result = _run_grpo(environment, dataset, model_path, config, output, steps, multi_turn)
    finally:
        environment.close()
    return result


MODEL_LOAD_HINT = ("a Hugging Face id must already be in the local Hugging Face cache when offline "
                   "(set HF_HOME to that cache), or pass an existing local model folder")


def _trainer_hooks(environment: Any, model_path: str, config: Any, multi_turn: str) -> dict[str, Any]:
    """`GRPOTrainer` reward/rollout keyword arguments: single-turn rewards, or the multi-turn hooks."""
    from rlvr.adapters.export import is_multi_turn
    from rlvr.adapters.trl import reward_funcs

    if is_multi_turn(environment):
        from rlvr.adapters.trl.rollout import multi_turn_hooks

        return multi_turn_hooks(environment, model_path, config, multi_turn)
    return {"reward_funcs": reward_funcs(environment)}


def _run_grpo(environment: Any, dataset: Any, model_path: str, config: Any, output: Path, steps: int,
              multi_turn: str = "auto") -> TrainResult:
    from trl import GRPOTrainer

    from rlvr.core.errors import BackendError

    created = not output.exists()
    try:
        hooks = _trainer_hooks(environment, model_path, config, multi_turn)
        callback = reward_curve_callback(output, f"GRPO on {environment.spec.id} ({Path(model_path).name})",
                                         hooks["reward_funcs"][0].__name__)
        with warnings.catch_warnings():  # TRL 1.16 flags both multi-turn hooks as experimental
            warnings.filterwarnings("ignore", message="You are using '(rollout_func|environment_factory)'",
                                    category=UserWarning)
            trainer = GRPOTrainer(model=model_path, args=config, train_dataset=dataset, callbacks=[callback], **hooks)
    except OSError as exc:
        if created and output.is_dir() and not any(output.iterdir()):
            output.rmdir()  # the trainer may have created it; leave no empty folder behind
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendError(f"could not load model {model_path!r}: {first}; hint: {MODEL_LOAD_HINT}") from exc
    output.mkdir(parents=True, exist_ok=True)  # only now: config, environment and model are valid
    print(f"rlvr train: {environment.spec.id} with {model_path}, {steps} steps -> {output}", file=sys.stderr)
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


def train_backend(
    backend: str,
    env: str,
    env_args: dict[str, Any] | None,
    model: str | None,
    steps: int,
    output: Path,
    trainer_args: dict[str, Any] | None,
    *,
    backend_python: str | Path | None = None,
    dry_run: bool = False,
    n_gpus: int = 1,
    tasks: Path | None = None,
    device: str = "auto",
    timeout_s: float | None = None,
) -> Any:
    """Train with veRL or OpenRLHF in their own interpreter: export, build the command, stream the run.

    Writes `output/export/`, `output/command.sh`, `output/run.json` and (unless `dry_run`)
    `output/train.log`; see `rlvr.runners.backends.run_backend`, which this calls.

    Args:
        backend: 'verl' or 'openrlhf'.
        env: environment id.
        env_args: its factory arguments.
        model: a model folder or Hub id; None / 'smollm2' for the embedded SmolLM2-135M-Instruct.
        steps: training steps.
        output: the run folder.
        trainer_args: options passed to the backend's command builder (veRL: hydra overrides, e.g.
            `{"actor_rollout_ref.actor.optim.lr": "1e-6"}`; OpenRLHF: flags without `--`).
        backend_python: the backend's interpreter (default `$RLVR_VERL_PYTHON` / `$RLVR_OPENRLHF_PYTHON`,
            else this Python).
        dry_run: write everything, launch nothing.
        n_gpus: GPUs to train on.
        tasks: train only on the tasks this JSONL lists (exported through `rlvr.runners.task_filter`).
        device: 'auto' (CUDA when a GPU is visible, else rlvr's CPU mode, with a notice), 'cuda' or 'cpu'.
        timeout_s: stop the run after this many seconds (exit code 124); None: no limit.

    Returns:
        A `rlvr.runners.backends.BackendRun` (`exit_code` is the trainer's; None for a dry run).

    Raises:
        ConfigError: unknown backend, env or arguments. BackendError: the backend cannot launch here
            (not installed in the interpreter, no GPU); the message names the fix, e.g. `--dry-run`.
    """
    from rlvr.runners.backends import EXTERNAL_BACKENDS, run_backend

    if backend not in EXTERNAL_BACKENDS:
        raise ConfigError(f"train_backend launches {' or '.join(EXTERNAL_BACKENDS)}, not {backend!r} "
                          "(trl trains in-process: use train_command)")
    return run_backend(backend, env, env_args, model, steps, output, trainer_args,
                       backend_python_path=backend_python, dry_run=dry_run, n_gpus=n_gpus, tasks=tasks,
                       device=device, timeout_s=timeout_s)
