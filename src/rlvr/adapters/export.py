"""What every trainer package shares: export folder and manifest, format number, references, caches.

Also the multi-turn test (`is_multi_turn`) every trainer package and runner uses.

`rlvr export --backend verl|openrlhf` writes a folder a trainer reads in *its own* process (veRL
imports `custom_reward_function.path`; OpenRLHF imports `--reward.remote_url` / agent files).

- Single-turn rewards and final scoring need only the verifier: the export records its
  `rlvr.verifiers.registry.VerifierSpec` (`VerifierSpec.of(verifier)`, known when the verifier was built
  from a spec, as the environment factories build theirs), and the trainer process builds it once per spec
  (`VerifierSpec.cached`) without building the environment or loading its dataset. A verifier built
  otherwise has no spec; its export rebuilds the environment (`cached_env`).
- Multi-turn agents step the environment, so they rebuild it (`cached_env`, once per process and key).

Either way `(response, reference)` is scored exactly as `env.verifier.verify` does in-process, so every
trainer gives the same reward for the same text (the parity tests check it).

Format: every export carries `EXPORT_FORMAT` (the manifest's `format`, each veRL row's
`extra_info["export_format"]`, the OpenRLHF reward file's `EXPORT_FORMAT`); a trainer process refuses an
export of another format with a message to re-run `rlvr export` (`check_export_format`), rather than
guess how an older layout was meant.

References (`encode_reference`): an export whose references are all strings (math answers) stores them
as plain strings (`reference_format` "text"); otherwise each is JSON (`"json"`: SQL, tests, terminal).

Layout of an export folder (backend files are listed in the manifest's `files`):

```
rlvr_export.json   the manifest (`ExportManifest`): format, backend, env id/args, verifier spec, reference
                   format, counts, files, rlvr version
...                backend files (train/val data, reward module, agent module/config)
```
"""

from __future__ import annotations

import atexit
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.files import atomic_write
from rlvr.core.types import Task, Verdict
from rlvr.verifiers.registry import VerifierSpec, close_cached_verifiers

if TYPE_CHECKING:
    from rlvr.environments.base import Environment
    from rlvr.verifiers.base import Verifier

__all__ = [
    "MANIFEST_NAME",
    "ExportManifest",
    "cached_env",
    "decode_reference",
    "encode_reference",
    "is_multi_turn",
    "read_manifest",
    "verify_text",
]

MANIFEST_NAME = "rlvr_export.json"
"""File name of the manifest inside an export folder."""

EXPORT_FORMAT = 2
"""The layout `rlvr export` writes: 2 = verifier spec (`VerifierSpec`) and reference format recorded, the
number in the manifest, the rows and the reward file. Exports without it (format 1, before the verifier
spec) or with another number are refused (`check_export_format`)."""

REFERENCE_FORMATS: tuple[str, ...] = ("text", "json")
"""How an export stores references: plain strings ('text', every reference is a string) or JSON."""


def is_multi_turn(env: Environment) -> bool:
    """True when `env` needs a trainer's agent path: tools, more than one turn, or return-scored.

    Return-scored environments (wrapped gymnasium / skyrl-gym envs, `ReturnVerifier`) cannot score a
    lone response: even a one-turn episode must run through the environment.
    """
    from rlvr.environments.external import ReturnVerifier

    spec = env.spec
    return bool(spec.tools) or int(spec.max_turns or 1) > 1 or isinstance(env.verifier, ReturnVerifier)


def check_export_format(found: Any, where: str) -> None:
    """Refuse an export written in another format than this rlvr's (`EXPORT_FORMAT`).

    Args:
        found: the format number the export carries (None: it carries none, i.e. format 1).
        where: what carried it, for the message (a manifest path, a row, a reward file).

    Raises:
        ConfigError: `found` is not `EXPORT_FORMAT`; the message says to re-run `rlvr export`.
    """
    if found != EXPORT_FORMAT:
        written = f"format {found}" if found is not None else "a format before numbered exports"
        raise ConfigError(f"{where} was written by `rlvr export` in {written}; this rlvr reads format "
                          f"{EXPORT_FORMAT}: re-run `rlvr export` with this rlvr")


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
        verifier: the env's verifier spec (`VerifierSpec` as a mapping, `export_spec`), None when it has none.
        reference_format: 'text' (references stored as plain strings) or 'json'.
        format: the export's layout, `EXPORT_FORMAT` (`read_manifest` refuses another).
    """

    backend: str
    env_id: str
    env_args: dict[str, Any]
    multi_turn: bool
    n_train: int
    reference_format: str
    n_val: int = 0
    files: dict[str, str] = field(default_factory=dict)
    rlvr_version: str = ""
    verifier: dict[str, Any] | None = None
    format: int = EXPORT_FORMAT

    @property
    def verifier_spec(self) -> VerifierSpec | None:
        """`verifier` as a `VerifierSpec` (None when the export has none).

        Raises:
            ConfigError: the recorded spec is not one this rlvr reads.
        """
        return VerifierSpec.parse(self.verifier) if self.verifier else None

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
        ConfigError: the folder has no manifest (not written by `rlvr export`), it is malformed, or it is of
            another export format (`check_export_format`).
    """
    path = Path(directory) / MANIFEST_NAME
    try:
        data = json.loads(path.read_text())
        check_export_format(data.get("format") if isinstance(data, dict) else None, str(path))
        return ExportManifest(**data)
    except FileNotFoundError as exc:
        raise ConfigError(f"{directory} has no {MANIFEST_NAME}; write the folder with `rlvr export`") from exc
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path} is not a valid rlvr export manifest: {exc}; re-run `rlvr export`") from exc


def prepare_folder(directory: Path, overwrite: bool, files: Iterable[str]) -> Path:
    """Create the export folder; with `overwrite`, remove the `files` a previous export wrote and nothing else.

    Anything else in the folder stays: a trainer's checkpoints (veRL's `<directory>/checkpoints`, which
    `trainer.resume_mode=auto` resumes from; OpenRLHF's `<directory>/openrlhf/`) and the user's own files.

    Raises:
        ConfigError: the path is a file, the folder is not empty and `overwrite` is False, or one of
            `files` is a folder.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory} exists and is not a folder; choose another output folder")
    if directory.is_dir() and any(directory.iterdir()):
        if not overwrite:
            raise ConfigError(f"{directory} is not empty; pass overwrite=True (--overwrite) or choose an empty folder")
        for name in files:
            path = directory / name
            if path.is_dir() and not path.is_symlink():
                raise ConfigError(f"{path} is a folder where the export writes a file; move it away")
            path.unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def reference_format(tasks: Sequence[Task]) -> str:
    """'text' when every task's reference is a string (stored as is), else 'json'."""
    return "text" if all(isinstance(t.reference, str) for t in tasks) else "json"


def encode_reference(task: Task, fmt: str = "json") -> str:
    """`task.reference` as stored in a data file: the string itself (`fmt="text"`) or JSON (sorted keys).

    The JSON form is the encoding of TRL's `rlvr_reference` column (`rlvr.adapters.trl.data.task_row`),
    so one recorded row scores identically through every adapter.

    Raises:
        AdapterError: the reference is not JSON-serialisable, or not a string with `fmt="text"`.
    """
    if fmt == "text":
        if not isinstance(task.reference, str):
            raise AdapterError(f"task {task.id!r}: reference is a {type(task.reference).__name__}, not text; "
                               "store it as JSON (reference_format 'json')")
        return task.reference
    try:
        return json.dumps(task.reference, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"task {task.id!r}: reference is not JSON-serialisable: {exc}") from exc


def decode_reference(value: Any, fmt: str = "json") -> Any:
    """Inverse of `encode_reference`; a non-string value (already decoded by a loader) is returned as is.

    Args:
        value: the stored reference.
        fmt: 'text' (the string is the reference) or 'json' (JSON text: TRL's `rlvr_reference` column,
            OpenRLHF labels, veRL ground truths of typed references).

    Raises:
        AdapterError: `fmt` is 'json' and `value` is a string that is not JSON, or `fmt` is unknown.
    """
    if fmt not in REFERENCE_FORMATS:
        raise AdapterError(f"unknown reference format {fmt!r}; expected one of {', '.join(REFERENCE_FORMATS)}")
    if not isinstance(value, str) or fmt == "text":
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise AdapterError(f"reference {value[:60]!r} is not the JSON written by rlvr export: {exc}") from exc


# -- verifier specs and caches ----------------------------------------------------------------------
def export_spec(verifier: Verifier) -> dict[str, Any] | None:
    """The spec an export records for `verifier`: `VerifierSpec.of(verifier)` as JSON-ready data, or None.

    None when the verifier was not built from a spec (`VerifierSpec.build`) or its spec holds a value JSON
    cannot carry; the trainer then rebuilds the environment instead (`cached_env`).
    """
    spec = VerifierSpec.of(verifier)
    if spec is None:
        return None
    try:
        data: dict[str, Any] = json.loads(spec.key())
        VerifierSpec.parse(data)
    except (TypeError, ValueError, ConfigError):  # pydantic's serialisation error is a ValueError
        return None
    return data


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
            if not _ENVS:  # the first of this process: close them all at interpreter exit
                atexit.register(close_cached_envs)
            env = _ENVS[key] = make(env_id, **(env_args or {}))
        return env


def close_cached_envs() -> None:
    """Close and forget every environment `cached_env` built and every verifier `VerifierSpec.cached` built."""
    with _ENVS_LOCK:
        closing = list(_ENVS.values())
        _ENVS.clear()
    for env in closing:
        env.close()
    close_cached_verifiers()


def verify_text(verifier: Verifier, response: str, reference: Any) -> Verdict:
    """Score one final response text against a (decoded) reference.

    Exactly what every in-process path does (`env.verifier.verify(response, reference)`); a verifier
    that raises becomes an `error` verdict (reward None), never a 0.
    """
    try:
        return verifier.verify(response, reference)
    except Exception as exc:  # a broken grader is data: status=error, reward None
        return Verdict(status="error", reward=None, detail=f"verifier raised {type(exc).__name__}: {exc}")
