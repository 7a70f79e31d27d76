"""What every trainer package shares: export folder and manifest, references, verifier specs, caches.

Also the multi-turn test (`is_multi_turn`) every trainer package and runner uses.

`rlvr export --backend verl|openrlhf` writes a folder a trainer reads in *its own* process (veRL
imports `custom_reward_function.path`; OpenRLHF imports `--reward.remote_url` / agent files).

- Single-turn rewards and final scoring need only the verifier: the export records it as a spec
  (`verifier_spec`: `{"class": "module:Class", "config": {...}}`, or a wrapper with its `inner` spec and
  `args`), and the trainer process builds it once per spec (`cached_verifier`) without building the
  environment or loading its dataset. A verifier the spec cannot rebuild exactly (its class takes
  other arguments than its config, or the rebuilt config differs) gets no spec; such exports, and
  exports written before specs existed, rebuild the environment (`cached_env`) as before.
- Multi-turn agents step the environment, so they rebuild it (`cached_env`, once per process and key).

Either way `(response, reference)` is scored exactly as `env.verifier.verify` does in-process, so every
trainer gives the same reward for the same text (the parity tests check it).

References (`encode_reference`): an export whose references are all strings (math answers) stores them
as plain strings (`reference_format` "text"); otherwise each is JSON (`"json"`: SQL, tests, terminal).
Exports written before the format was recorded are JSON.

Layout of an export folder (backend files are listed in the manifest's `files`):

```
rlvr_export.json   the manifest (`ExportManifest`): backend, env id/args, verifier spec, reference format,
                   counts, files, rlvr version
...                backend files (train/val data, reward module, agent module/config)
```
"""

from __future__ import annotations

import atexit
import inspect
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.files import atomic_write
from rlvr.core.types import Task, Verdict

if TYPE_CHECKING:
    from rlvr.environments.base import Environment
    from rlvr.verifiers.base import Verifier

__all__ = [
    "MANIFEST_NAME",
    "REFERENCE_FORMATS",
    "ExportManifest",
    "absolute_paths",
    "build_verifier",
    "cached_env",
    "cached_verifier",
    "close_cached_envs",
    "decode_reference",
    "encode_reference",
    "is_multi_turn",
    "prepare_folder",
    "read_manifest",
    "reference_format",
    "score_text",
    "verifier_spec",
    "verify_text",
    "write_manifest",
]

MANIFEST_NAME = "rlvr_export.json"
"""File name of the manifest inside an export folder."""

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
        verifier: the env's verifier spec (`verifier_spec`), None when it has none (or an older export).
        reference_format: 'text' (references stored as plain strings) or 'json' (older exports: 'json').
    """

    backend: str
    env_id: str
    env_args: dict[str, Any]
    multi_turn: bool
    n_train: int
    n_val: int = 0
    files: dict[str, str] = field(default_factory=dict)
    rlvr_version: str = ""
    verifier: dict[str, Any] | None = None
    reference_format: str = "json"

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
        fmt: 'text' (the string is the reference) or 'json' (the default, and the only form of exports
            written before the format was recorded).

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


# -- verifier specs ---------------------------------------------------------------------------------
def _class_path(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}:{cls.__qualname__}"


def _raw_spec(verifier: Verifier) -> dict[str, Any] | None:
    from rlvr.verifiers.wrappers import FormatReward

    if type(verifier) is FormatReward:
        inner = _raw_spec(verifier.inner)
        if inner is None:
            return None
        return {"class": _class_path(verifier), "inner": inner,
                "args": {"weight": verifier.weight, "pattern": verifier.pattern,
                         "max_answer_chars": verifier.max_answer_chars}}
    params = list(inspect.signature(type(verifier).__init__).parameters.values())[1:]
    named = [p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if named != ["config"] or not any(p.kind is p.VAR_KEYWORD for p in params):
        return None  # built from other arguments than its config: the config alone cannot rebuild it
    return {"class": _class_path(verifier), "config": verifier.config.model_dump(mode="json")}


def _same(a: Verifier, b: Verifier) -> bool:
    if type(a) is not type(b) or a.config != b.config:
        return False
    inner_a, inner_b = getattr(a, "inner", None), getattr(b, "inner", None)
    if inner_a is None or inner_b is None:
        return inner_a is inner_b
    return (_same(inner_a, inner_b)
            and all(getattr(a, k) == getattr(b, k) for k in ("weight", "pattern", "max_answer_chars")))


def verifier_spec(verifier: Verifier) -> dict[str, Any] | None:
    """A JSON spec that rebuilds `verifier` in another process (`build_verifier`), or None.

    `{"class": "module:Class", "config": {...}}` for a verifier built from its config
    (`Class(**config)`, as `rlvr.verifiers.registry.get_verifier` does), `{"class": ..., "inner": spec,
    "args": {...}}` for `FormatReward`. The spec is rebuilt once here and kept only when the rebuilt
    verifier is of the same class with an equal config, so a spec never scores differently.
    """
    try:
        spec = _raw_spec(verifier)
        if spec is None:
            return None
        spec = json.loads(json.dumps(spec, sort_keys=True))
        rebuilt = build_verifier(spec)
    except Exception:  # any failure to describe or rebuild: no spec, the trainer rebuilds the env
        return None
    try:
        return spec if _same(rebuilt, verifier) else None
    finally:
        rebuilt.close()


def build_verifier(spec: Mapping[str, Any] | str) -> Verifier:
    """The verifier a spec (`verifier_spec`, or its JSON) describes, newly built.

    Raises:
        ConfigError: the spec is malformed, its class cannot be imported, is not a `Verifier`, or
            rejects its configuration.
    """
    from rlvr.core.registry import load_attr
    from rlvr.verifiers.base import Verifier

    try:
        data = dict(json.loads(spec) if isinstance(spec, str) else spec)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"verifier spec {str(spec)[:80]!r} is not the JSON rlvr export writes: {exc}") from exc
    cls = load_attr(str(data.get("class", "")))
    if not (isinstance(cls, type) and issubclass(cls, Verifier)):
        raise ConfigError(f"verifier spec names {data.get('class')!r}, which is not a Verifier class")
    try:
        if "inner" in data:  # a wrapper (FormatReward): the wrapped verifier first
            wrapper: Any = cls
            built: Verifier = wrapper(build_verifier(data["inner"]), **dict(data.get("args") or {}))
            return built
        return cls(**dict(data.get("config") or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"verifier spec {data.get('class')!r} rejected its configuration: {exc}") from exc


_VERIFIERS: dict[str, Verifier] = {}
_ENVS: dict[str, Environment] = {}
_ENVS_LOCK = threading.Lock()


def cached_verifier(spec: Mapping[str, Any] | str) -> Verifier:
    """`build_verifier(spec)`, built once per process and spec (trainer workers call this per sample).

    Raises:
        ConfigError: see `build_verifier`.
    """
    data = json.loads(spec) if isinstance(spec, str) else spec
    key = json.dumps(data, sort_keys=True)
    with _ENVS_LOCK:
        verifier = _VERIFIERS.get(key)
        if verifier is None:
            if not _ENVS and not _VERIFIERS:
                atexit.register(close_cached_envs)
            verifier = _VERIFIERS[key] = build_verifier(data)
        return verifier




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
            if not _ENVS and not _VERIFIERS:  # the first of this process: close them all at interpreter exit
                atexit.register(close_cached_envs)
            env = _ENVS[key] = make(env_id, **(env_args or {}))
        return env


def close_cached_envs() -> None:
    """Close and forget every environment `cached_env` and verifier `cached_verifier` built (stops worker pools)."""
    with _ENVS_LOCK:
        closing: list[Environment | Verifier] = [*_ENVS.values(), *_VERIFIERS.values()]
        _ENVS.clear()
        _VERIFIERS.clear()
    for item in closing:
        item.close()


def score_text(env: Environment, response: str, reference: Any) -> Verdict:
    """Score one final response text against a (decoded) reference with the env's verifier (`verify_text`)."""
    return verify_text(env.verifier, response, reference)


def verify_text(verifier: Verifier, response: str, reference: Any) -> Verdict:
    """Score one final response text against a (decoded) reference.

    Exactly what every in-process path does (`env.verifier.verify(response, reference)`); a verifier
    that raises becomes an `error` verdict (reward None), never a 0.
    """
    try:
        return verifier.verify(response, reference)
    except Exception as exc:  # a broken grader is data: status=error, reward None
        return Verdict(status="error", reward=None, detail=f"verifier raised {type(exc).__name__}: {exc}")
