"""`TrainConfig`: the options of one `rlvr train` run, whichever backend trains.

TRL trains in this process (`rlvr.runners.train.trl.train_trl`); veRL and OpenRLHF in their own
interpreter (`rlvr.runners.train.external.run_backend`); `rlvr compare` builds one per backend.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from rlvr.runners.config import CommandConfig

__all__ = ["BACKENDS", "EXTERNAL_BACKENDS", "TrainConfig"]

BACKENDS: tuple[str, ...] = ("trl", "verl", "openrlhf")
"""`trl` trains in this process; the `EXTERNAL_BACKENDS` in their own."""

EXTERNAL_BACKENDS: tuple[str, ...] = ("verl", "openrlhf")
"""Backends trained in their own process (and interpreter)."""

DEVICES: tuple[str, ...] = ("auto", "cuda", "cpu")
"""`device` of veRL and OpenRLHF runs: 'cpu' is rlvr's CPU mode (`rlvr.adapters.cpu`)."""


class TrainConfig(CommandConfig):
    """One `rlvr train` run (the CLI builds it; `train_trl` or `run_backend` runs it; frozen, unknown fields refused).

    Build it with `TrainConfig.build(...)` to get a `ConfigError` naming each bad field.
    """

    # -- what is trained, on what
    backend: str = Field(default="trl", description="Trainer: trl (GRPO in this process), verl or openrlhf (in "
                         "their own interpreter, `backend_python`).")
    env: str = Field(description="Registered environment id, e.g. math/reasoning-gym-v1.")
    env_args: dict[str, Any] = Field(default_factory=dict, description="Environment factory keyword arguments, "
                                     "e.g. {'task': 'basic_arithmetic'} (JSON-serialisable: veRL and OpenRLHF "
                                     "rebuild the environment from them).")
    tasks: Path | None = Field(default=None, description="Train only on the tasks this JSONL lists (`rlvr synth`'s "
                               "rl.jsonl; `rlvr.runners.task_filter`).")
    model: str | None = Field(default=None, description="Local checkpoint folder or Hugging Face id; None or "
                              "'smollm2': the embedded SmolLM2-135M-Instruct (`rlvr.runners.models.resolve_model`).")
    steps: int = Field(default=50, ge=1, description="Optimizer steps.")
    output: Path = Field(description="The run folder: reward_curve.csv/.png and model/ (veRL/OpenRLHF also export/, "
                         "command.sh, run.json, train.log).")
    trainer_args: dict[str, Any] = Field(default_factory=dict, description="Backend options passed through: TRL "
                                         "GRPOConfig fields (strings coerced to the field's type; unknown names "
                                         "refused with close matches); veRL hydra overrides {'key.path': value}; "
                                         "OpenRLHF flags without `--`.")
    # -- TRL only
    multi_turn: str = Field(default="auto", description="Multi-turn envs with TRL: 'auto' (environment_factory for "
                            "tool envs, else rollout_func), 'environment_factory' or 'rollout_func'.")
    # -- veRL and OpenRLHF only
    backend_python: Path | None = Field(default=None, description="The backend's interpreter (default "
                                        "$RLVR_VERL_PYTHON / $RLVR_OPENRLHF_PYTHON, else this Python).")
    dry_run: bool = Field(default=False, description="Write the export, command.sh and run.json; launch nothing.")
    n_gpus: int = Field(default=1, ge=1, description="GPUs to train on.")
    device: str = Field(default="auto", description="'auto' (CUDA when the interpreter sees n_gpus GPUs, else "
                        "rlvr's CPU mode, with a notice; a dry run writes the CUDA command), 'cuda' or 'cpu'.")
    timeout_s: float | None = Field(default=None, gt=0, description="Stop the run after this many seconds (exit "
                                    "code 124); None: no limit.")

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, backend: str) -> str:
        if backend not in BACKENDS:
            raise ValueError(f"not {backend!r}; supported backends: {', '.join(BACKENDS)}")
        return backend

    @field_validator("device")
    @classmethod
    def _known_device(cls, device: str) -> str:
        if device not in DEVICES:
            raise ValueError(f"must be one of {', '.join(DEVICES)}, got {device!r}")
        return device

    @model_validator(mode="after")
    def _external_options_need_an_external_backend(self) -> TrainConfig:
        if self.backend == "trl" and (self.dry_run or self.backend_python is not None):
            raise ValueError("--dry-run and --backend-python are for --backend verl|openrlhf; trl trains in this "
                             "process")
        if self.backend == "trl" and self.n_gpus != 1:
            raise ValueError("--n-gpus is for --backend verl|openrlhf; trl uses the devices this process sees "
                             "(CUDA_VISIBLE_DEVICES; for several GPUs launch it with accelerate)")
        return self

    def command_args(self) -> list[str]:
        """The `rlvr train ...` arguments that build this config again (to run it in another interpreter).

        Options left at their defaults are not written; `trainer_args` values are written as given.
        """
        args = ["train", "--backend", self.backend, "--env", self.env]
        for key, value in self.env_args.items():
            args += ["--env-arg", f"{key}={json.dumps(value)}"]
        if self.model is not None:
            args += ["--model", self.model]
        args += ["--steps", str(self.steps), "-o", str(self.output)]
        optional = (("--tasks", self.tasks, None), ("--multi-turn", self.multi_turn, "auto"),
                    ("--backend-python", self.backend_python, None), ("--n-gpus", self.n_gpus, 1),
                    ("--device", self.device, "auto"), ("--timeout", self.timeout_s, None))
        for flag, value, default in optional:
            if value != default:
                args += [flag, str(value)]
        if self.dry_run:
            args.append("--dry-run")
        for key, value in self.trainer_args.items():
            args += ["--trainer-arg", f"{key}={value}"]
        return args
