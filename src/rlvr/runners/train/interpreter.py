"""The interpreter a trainer backend runs in, and what it can do there (probes run in that interpreter).

veRL and OpenRLHF pin other versions of transformers, torch and friends than TRL (and than each
other), so each usually lives in its own virtual environment. The interpreter of a backend:
`--backend-python PATH` (`rlvr compare`: `--verl-python` ...), else `$RLVR_VERL_PYTHON` /
`$RLVR_OPENRLHF_PYTHON` / `$RLVR_TRL_PYTHON`, else the current Python (`backend_python`).

Each check runs a small script in that interpreter (`python -c SOURCE ...`) and reads one tagged
line of its output, so nothing of the backend is imported here: `probe` (do rlvr and the backend
import, how many CUDA devices), `env_problem` (does the environment build there),
`verl_config_problem` (does veRL's own hydra config accept the overrides).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import BackendError, ConfigError

__all__ = ["Probe", "backend_python", "probe"]

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
