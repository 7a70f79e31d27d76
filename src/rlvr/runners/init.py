"""`rlvr init`: write a pip-installable environment package from the templates in `rlvr/scaffold/`.

The templates are real files, linted with rlvr's own code: `scaffold/common/` (pyproject.toml with
the `rlvr.environments` entry point, the package's `__init__.py`, its tests, a README) and one
folder per kind (`single`: tasks and a verifier; `tool`: typed `@tool` functions in a `ToolEnv`;
`multi`: a `MultiTurnEnv` whose `env_response` answers each turn), each holding
`scaffold_template/env.py`. Three placeholders are replaced in paths and contents:
`scaffold/template-v1` (the environment id), `scaffold_template` (the import name) and
`scaffold-template` (the distribution name). The test suite installs every kind and runs it
through `rlvr check`, `eval`, `export` and `train`, so the templates cannot drift from the API.

Bad input is refused before anything is written: a name that is not a distribution and import
name, an id of the wrong form or already registered, an import name that already resolves, a
non-empty output folder. The files are written into a temporary sibling folder and moved into
place in one rename, so a failure leaves nothing half-written.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import shutil
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from rlvr.core.errors import ConfigError
from rlvr.core.types import ENV_ID_PATTERN

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["KINDS", "Scaffold", "init_env"]

KINDS: dict[str, str] = {
    "single": "one prompt, one answer, a verifier of your own",
    "tool": "typed @tool functions the policy calls before it answers",
    "multi": "a multi-turn environment that answers each of the policy's turns",
}
"""The kinds `rlvr init --kind` writes, with what each one shows."""

TEMPLATE_ENV_ID = "scaffold/template-v1"
TEMPLATE_MODULE = "scaffold_template"
TEMPLATE_DIST = "scaffold-template"

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
"""A name that is both a normalised distribution name (PEP 503) and, with '-' as '_', an import name."""


@dataclass(frozen=True)
class Scaffold:
    """What `init_env` wrote.

    Attributes:
        directory: the package folder.
        env_id: the environment id its entry point registers.
        module: the import name of its package.
        dist: its distribution name (what `pip` installs).
        kind: 'single', 'tool' or 'multi'.
        files: the files written, relative to `directory`, sorted.
    """

    directory: Path
    env_id: str
    module: str
    dist: str
    kind: str
    files: tuple[Path, ...]


def init_env(name: str, kind: str = "single", output: Path | None = None, env_id: str | None = None) -> Scaffold:
    """Write the environment package `name` of `kind` into `output` (default `./NAME`).

    Args:
        name: distribution name, e.g. 'word-sort' (lower case letters, digits, single '-' or '_'
            between them); the import name is the same with '_' for '-'.
        kind: 'single', 'tool' or 'multi' (`KINDS`).
        output: the folder to create; it may exist if it is empty.
        env_id: the environment id, `family/name-vN`; default `IMPORT_NAME/default-v1`.

    Returns:
        The `Scaffold` written.

    Raises:
        ConfigError: a bad name, kind or id, an id that is already registered, an import name that
            already resolves to an installed module, or a non-empty output folder (nothing written).
        OSError: the folder cannot be written (nothing left behind).
    """
    dist, module = _names(name)
    if kind not in KINDS:
        raise ConfigError(f"--kind must be one of {', '.join(KINDS)}; got {kind!r}")
    env_id = env_id if env_id is not None else f"{module}/default-v1"
    _check_env_id(env_id)
    directory = (output if output is not None else Path(name)).absolute()
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ConfigError(f"{directory} exists and is not an empty folder; pass another folder with -o DIR "
                          "(rlvr init never writes over files)")
    replacements = ((TEMPLATE_ENV_ID, env_id), (TEMPLATE_MODULE, module), (TEMPLATE_DIST, dist))
    root = files("rlvr") / "scaffold"
    sources = {**_templates(root / "common"), **_templates(root / kind)}
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=directory.parent))
    try:
        written = []
        for relative, source in sorted(sources.items()):
            target = Path(_replace(relative, replacements))
            (staging / target).parent.mkdir(parents=True, exist_ok=True)
            (staging / target).write_text(_replace(source.read_text(encoding="utf-8"), replacements), encoding="utf-8")
            written.append(target)
        if directory.exists():
            directory.rmdir()
        staging.rename(directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Scaffold(directory, env_id, module, dist, kind, tuple(sorted(written)))


def _names(name: str) -> tuple[str, str]:
    """`(distribution name, import name)` of `name`, or the reason it is neither."""
    if not _NAME.fullmatch(name):
        raise ConfigError(f"NAME {name!r} must be a package name: lower case letters and digits, words joined by "
                          "single '-' or '_', starting with a letter (e.g. 'word-sort')")
    module = name.replace("-", "_")
    if keyword.iskeyword(module):
        raise ConfigError(f"NAME {name!r} is a Python keyword, so it cannot be imported; pick another name")
    if importlib.util.find_spec(module) is not None:
        raise ConfigError(f"a module named {module!r} is already importable here (the standard library or an "
                          "installed package); pick another NAME so the new package does not shadow it")
    return name, module


def _check_env_id(env_id: str) -> None:
    from rlvr.environments.registry import registry

    if not ENV_ID_PATTERN.fullmatch(env_id):
        raise ConfigError(f"--id {env_id!r} must look like 'family/name-vN' (lower case), e.g. 'word_sort/default-v1'")
    if env_id in registry:
        raise ConfigError(f"environment id {env_id!r} is already registered ({registry.spec(env_id).description}); "
                          "pick another with --id, or a new version (-v2) for a change of behaviour")


def _templates(folder: Traversable, prefix: str = "") -> dict[str, Traversable]:
    """Every template file under `folder`, by its path relative to it (caches skipped)."""
    found: dict[str, Traversable] = {}
    for entry in folder.iterdir():
        if entry.name == "__pycache__" or entry.name.endswith(".pyc"):
            continue
        relative = f"{prefix}{entry.name}"
        if entry.is_dir():
            found.update(_templates(entry, f"{relative}/"))
        else:
            found[relative] = entry
    return found


def _replace(text: str, replacements: tuple[tuple[str, str], ...]) -> str:
    for placeholder, value in replacements:
        text = text.replace(placeholder, value)
    return text
