"""`trl.GRPOConfig` for `rlvr train --backend trl`: rlvr's small defaults, then the user's trainer arguments.

Defaults are small enough for a CPU (`DEFAULT_GRPO_ARGS`); any `GRPOConfig` field except
`max_steps` and `output_dir` (`TrainConfig.steps` / `TrainConfig.output`) can be overridden through
`trainer_args`, whose strings (as typed on the command line) are coerced to the field's type
(`coerce_trainer_args`).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import types
import typing
from pathlib import Path
from typing import Any

from rlvr.adapters.trl import require_trl
from rlvr.core.errors import ConfigError

__all__: list[str] = []

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
"""GRPOConfig fields set by `train_trl` itself (from `TrainConfig.steps` and `.output`); giving them as
trainer arguments is an error."""


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
            `train_trl` itself (`max_steps`, `output_dir`) or an uncoercible value.
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

