"""What every backend export shares: the manifest, the reference encoding, and per-process env rebuilds.

`rlvr export --backend verl|openrlhf` writes a folder a trainer reads in *its own* process (veRL
imports `custom_reward_function.path`; OpenRLHF imports `--reward.remote_url` / agent files). Those
processes rebuild the environment from the manifest (`env_id` + `env_args`) with `rlvr.make`, once per
process (`cached_env`), and score `(response, reference)` exactly as `env.verifier.verify` does
in-process — so every backend gives the same reward for the same text (the parity tests check it).

Layout of an export folder (backend files are listed in the manifest's `files`):

```
rlvr_export.json   the manifest (`ExportManifest`): backend, env id/args, counts, files, rlvr version
...                backend files (train/val data, reward module, agent module/config)
```
"""

from __future__ import annotations

import atexit
import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.files import atomic_write
from rlvr.core.types import Task, Verdict

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__ = [
    "MANIFEST_NAME",
    "ExportManifest",
    "absolute_paths",
    "cached_env",
    "close_cached_envs",
    "decode_reference",
    "encode_reference",
    "read_manifest",
    "score_text",
    "write_manifest",
]

MANIFEST_NAME = "rlvr_export.json"
"""File name of the manifest inside an export folder."""


@dataclass
class ExportManifest:
    """What an export folder holds and how a trainer process rebuilds its environment.

    Attributes:
        backend: 'verl' or 'openrlhf'.
        env_id: registered environment id (`rlvr.make(env_id, **env_args)` rebuilds it).
        env_args: JSON-serialisable factory keyword arguments.
        multi_turn: True when the env needs the backend's agent path (tools or `max_turns > 1`).
        n_train: rows in the train file. n_val: rows in the validation file (0 when none).
        files: role -> file name relative to the folder, e.g. {"train": "train.parquet",
            "reward": "reward.py", "agent": "agent_loop.py", "agent_config": "agent_loop.yaml"}.
        rlvr_version: version of rlvr that wrote the export.
    """

    backend: str
    env_id: str
    env_args: dict[str, Any]
    multi_turn: bool
    n_train: int
    n_val: int = 0
    files: dict[str, str] = field(default_factory=dict)
    rlvr_version: str = ""

    def path(self, directory: Path, role: str) -> Path:
        """Absolute path of the file with `role` inside `directory`.

        Raises:
            AdapterError: the export has no file with that role.
        """
        if role not in self.files:
            raise AdapterError(f"export in {directory} has no {role!r} file (has: {', '.join(sorted(self.files))})")
        return (Path(directory) / self.files[role]).resolve()


def absolute_paths(env_args: Mapping[str, Any], cwd: Path | None = None) -> dict[str, Any]:
    """`env_args` with every relative path that exists from `cwd` (default: the current folder) made absolute.

    veRL and OpenRLHF import the reward/agent files in Ray worker processes whose working folder is
    not the one `rlvr export` ran in, so `{"path": "data/q.json"}` would not be found there. Strings (top level
    or in a list) that name an existing file or folder relative to `cwd` are resolved; others are kept.
    """
    base = Path.cwd() if cwd is None else Path(cwd)

    def fix(value: Any) -> Any:
        if isinstance(value, str) and value and not Path(value).is_absolute():
            try:
                candidate = base / value
                if candidate.exists():
                    return str(candidate.resolve())
            except (OSError, ValueError):  # not a path (too long, NUL byte)
                return value
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return {key: fix(value) for key, value in env_args.items()}


def write_manifest(directory: Path, manifest: ExportManifest) -> Path:
    """Write `manifest` as `directory/rlvr_export.json` (atomically: `rlvr.core.files`); return the path."""
    from rlvr import __version__

    if not manifest.rlvr_version:
        manifest.rlvr_version = __version__
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return atomic_write(directory / MANIFEST_NAME, json.dumps(asdict(manifest), indent=2, sort_keys=True) + "\n")


def read_manifest(directory: Path) -> ExportManifest:
    """Read `directory/rlvr_export.json`.

    Raises:
        ConfigError: the folder has no manifest (not written by `rlvr export`) or it is malformed.
    """
    path = Path(directory) / MANIFEST_NAME
    try:
        data = json.loads(path.read_text())
        return ExportManifest(**data)
    except FileNotFoundError as exc:
        raise ConfigError(f"{directory} has no {MANIFEST_NAME}; write the folder with `rlvr export`") from exc
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path} is not a valid rlvr export manifest: {exc}; re-run `rlvr export`") from exc


def encode_reference(task: Task) -> str:
    """`task.reference` as a JSON string (sorted keys), the form every backend's data file carries.

    The same encoding as TRL's `rlvr_reference` column (`rlvr.adapters.trl.task_row`), so one
    recorded row scores identically through every adapter.

    Raises:
        AdapterError: the reference is not JSON-serialisable.
    """
    try:
        return json.dumps(task.reference, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"task {task.id!r}: reference is not JSON-serialisable: {exc}") from exc


def decode_reference(value: Any) -> Any:
    """Inverse of `encode_reference`; a non-string value (already decoded by a loader) is returned as is.

    Raises:
        AdapterError: `value` is a string that is not JSON.
    """
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise AdapterError(f"reference {value[:60]!r} is not the JSON written by rlvr export: {exc}") from exc


_ENVS: dict[str, Environment] = {}
_ENVS_LOCK = threading.Lock()


def cached_env(env_id: str, env_args: dict[str, Any] | None = None) -> Environment:
    """`rlvr.make(env_id, **env_args)`, built once per process and key (trainer workers call this per sample).

    Raises:
        ConfigError: unknown id or arguments (from `rlvr.make`).
    """
    from rlvr.environments.registry import make

    key = json.dumps([env_id, env_args or {}], sort_keys=True)
    with _ENVS_LOCK:
        env = _ENVS.get(key)
        if env is None:
            if not _ENVS:  # the first env of this process: close them all (worker pools) at interpreter exit
                atexit.register(close_cached_envs)
            env = _ENVS[key] = make(env_id, **(env_args or {}))
        return env


def close_cached_envs() -> None:
    """Close and forget every environment `cached_env` built (stops their verifier worker pools)."""
    with _ENVS_LOCK:
        envs = list(_ENVS.values())
        _ENVS.clear()
    for env in envs:
        env.close()


def score_text(env: Environment, response: str, reference: Any) -> Verdict:
    """Score one final response text against a (decoded) reference with the env's verifier.

    Exactly what every in-process path does (`env.verifier.verify(response, reference)`); a verifier
    that raises becomes an `error` verdict (reward None), never a 0.
    """
    try:
        return env.verifier.verify(response, reference)
    except Exception as exc:  # a broken grader is data: status=error, reward None
        return Verdict(status="error", reward=None, detail=f"verifier raised {type(exc).__name__}: {exc}")
