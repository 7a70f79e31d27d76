"""Make installed distributions (e.g. pytest) importable inside the sandbox, wherever they are installed.

The sandbox runs as an unprivileged uid (65534) when the caller is root, and bubblewrap, started as
that uid, can only mount directories that uid can reach. A virtual environment inside a checkout
under `/root` (mode 0700) is not reachable, so mounting its site-packages fails. In that case a
read-only copy of exactly the files of the wanted distributions and their requirements (from each
distribution's RECORD, `importlib.metadata`) is staged once under the temporary directory:

- `<tmp>/rlvr-sandbox-lib-<euid>-<digest>`, the digest over the distributions' names, versions and
  files and the Python version, so an upgrade gets a fresh copy and an unchanged one is reused;
- built in a private temporary directory and published with one `os.rename` (atomic: no reader
  ever sees a half-copied tree; of two concurrent builders one wins and the other's copy is dropped);
- directories 0755, files 0644, owned by the caller (root), so the sandbox uid can read but not
  change them; an existing directory with that name is reused only when it is a real directory
  owned by the caller and writable by nobody else (otherwise another user could plant packages).

The copied packages were resolved for this interpreter (requirement markers such as
`python_version < "3.11"`, compiled extensions), so the sandbox's Python must have the same
major.minor version; a mismatch is a `SandboxError`.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata as metadata
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rlvr.core.errors import SandboxError
from rlvr.sandbox.isolation import is_root, remove_tree, world_reachable

__all__ = ["sandbox_site_path", "stage_files"]

STAGE_PREFIX = "rlvr-sandbox-lib"
_FORMAT = 1
"""Bumped when the layout of a staged directory changes (part of the digest)."""


def _canonical(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _find(name: str, search: Sequence[str] | None) -> metadata.Distribution | None:
    found = metadata.distributions(name=name, path=list(search)) if search is not None else \
        metadata.distributions(name=name)
    return next(iter(found), None)


def distribution_closure(names: Sequence[str], search: Sequence[str] | None = None) -> list[metadata.Distribution]:
    """The installed distributions `names` and, recursively, the requirements they need here.

    A requirement counts when its environment marker holds for this interpreter with no extra
    selected (so `tomli; python_version < "3.11"` and `numpy; extra == "dev"` are left out on 3.11).
    Requirements that are not installed are left out too: importing the package in the sandbox
    then fails exactly as it would here.

    Args:
        names: distribution names (e.g. `("pytest",)`).
        search: directories to look in (default: `sys.path`), first match wins like an import.

    Returns:
        The distributions, each once, in discovery order.

    Raises:
        SandboxError: one of `names` is not installed (the message says `pip install <name>`).
    """
    seen: dict[str, metadata.Distribution] = {}
    todo = [(name, True) for name in names]
    while todo:
        name, required = todo.pop(0)
        key = _canonical(name)
        if key in seen:
            continue
        dist = _find(name, search)
        if dist is None:
            if required:
                raise SandboxError(f"{name} is not installed in this environment ({sys.executable}): "
                                   f"pip install {name}")
            continue
        seen[key] = dist
        from packaging.requirements import InvalidRequirement, Requirement  # pip and pytest both require it

        for line in dist.requires or []:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append((req.name, False))
    return list(seen.values())


def _files(dist: metadata.Distribution) -> list[tuple[str, Path]]:
    """(path relative to the site directory, absolute path) of every installed file, bytecode excluded."""
    if dist.files is None:
        raise SandboxError(f"distribution {dist.metadata['Name']} {dist.version} has no RECORD file, so its files "
                           "cannot be staged for the sandbox; reinstall it with pip")
    out = []
    for entry in dist.files:
        parts = entry.parts
        if not parts or parts[0] == ".." or "__pycache__" in parts or entry.suffix == ".pyc":
            continue  # console scripts (../../bin) and bytecode are not needed
        path = Path(str(dist.locate_file(entry)))
        if path.is_file():
            out.append((entry.as_posix(), path))
    return out


@functools.lru_cache(maxsize=8)
def sandbox_python_version(python: str) -> tuple[int, int]:
    """(major, minor) of the interpreter `python` (run once, by the caller, outside the sandbox).

    Raises:
        SandboxError: `python` cannot be run or does not report a version.
    """
    try:
        out = subprocess.run([python, "-I", "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                             capture_output=True, timeout=30, check=True, text=True).stdout.split()
        return int(out[0]), int(out[1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        raise SandboxError(f"cannot read the version of the sandbox Python {python!r}: {exc}") from exc


def _check_version(python: str) -> None:
    here = sys.version_info[:2]
    there = sandbox_python_version(python)
    if there != here:
        raise SandboxError(
            f"the sandbox Python {python} is {there[0]}.{there[1]} but the packages it needs were installed for "
            f"this interpreter, Python {here[0]}.{here[1]} ({sys.executable}); set SandboxConfig(python=...) to a "
            f"Python {here[0]}.{here[1]} the sandbox uid can run, or run from an environment of the same version")


def _usable(path: Path) -> bool:
    """True when `path` is a real directory owned by this process's user and writable by nobody else."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise SandboxError(f"{path} exists but is not a directory owned by uid {os.geteuid()} and closed to writes "
                           "by others, so its packages cannot be trusted; remove it")
    return True


def _stage_root(cache_root: str | None) -> Path:
    candidates = [cache_root] if cache_root else [tempfile.gettempdir(), "/tmp", "/var/tmp"]
    for candidate in candidates:
        if candidate and os.path.isdir(candidate) and world_reachable(candidate):
            return Path(candidate)
    raise SandboxError(f"no directory to stage the sandbox's packages in: none of {candidates} can be entered by "
                       "other users; set TMPDIR to a world-readable directory such as /tmp")


def stage_files(files: Sequence[tuple[str, Path]], key: str, cache_root: str | None = None) -> str:
    """A read-only copy of `files` under `cache_root`, built once per `key` and reused afterwards.

    Args:
        files: (relative destination, source file) pairs.
        key: identifies the content (e.g. names and versions); the directory name carries its digest.
        cache_root: parent directory (default: the temporary directory, else `/tmp`, `/var/tmp`);
            it must be enterable by other users.

    Returns:
        The staged directory: dirs 0755, files 0644, owned by the caller.

    Raises:
        SandboxError: no usable parent directory, or the target name is taken by a directory that
            is not the caller's own read-only one.
    """
    root = _stage_root(cache_root)
    digest = hashlib.sha256(f"{_FORMAT}\0{key}".encode()).hexdigest()[:20]
    final = root / f"{STAGE_PREFIX}-{os.geteuid()}-{digest}"
    if _usable(final):
        return str(final)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=root))
    try:
        for rel, source in files:
            target = work / rel
            if not target.resolve().is_relative_to(work.resolve()):
                raise SandboxError(f"file {rel!r} of a staged distribution escapes the staging directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        for dirpath, _dirs, names in os.walk(work):
            os.chmod(dirpath, 0o755)
            for name in names:
                os.chmod(os.path.join(dirpath, name), 0o644)
        try:
            os.rename(work, final)
        except OSError:
            if not _usable(final):  # not a lost race: a real failure
                raise
    finally:
        remove_tree(str(work))
    return str(final)


_SANDBOX_MOUNTS = ("/work", "/grader")
"""Directories `LocalSandbox` mounts over: a site directory below one of them is hidden in the sandbox."""


def _shadowed(path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in _SANDBOX_MOUNTS)


@functools.lru_cache(maxsize=8)
def sandbox_site_path(distributions: tuple[str, ...], python: str, search: tuple[str, ...] | None = None,
                      cache_root: str | None = None) -> tuple[str, ...]:
    """Directories to put on the sandbox's python path so `python` there can import `distributions`.

    When the caller is not root the sandbox runs as the caller, and when root the directories
    holding the distributions may already be reachable by the sandbox uid: those directories
    are returned as they are. Otherwise -- or when one lies below `/work` or `/grader`, which the
    sandbox mounts its own directories over (a checkout in `/work/...`) -- the distributions and
    their requirements are staged (see the module docstring) and the staged directory is returned.

    Args:
        distributions: names of the distributions the sandbox needs, e.g. `("pytest",)`.
        python: the sandbox's interpreter (must be the same major.minor as this one).
        search: where to find the distributions (default `sys.path`).
        cache_root: parent of staged directories (default: the temporary directory).

    Returns:
        The site directories (each once, in order), or the one staged directory.

    Raises:
        SandboxError: a distribution is missing, the sandbox Python's version differs, or no
            staging directory can be used.
    """
    dists = distribution_closure(distributions, search)
    _check_version(python)
    sites = list(dict.fromkeys(str(Path(str(d.locate_file(""))).resolve()) for d in dists))
    shadowed = any(_shadowed(site) for site in sites)
    if not shadowed and (not is_root() or all(world_reachable(site) for site in sites)):
        return tuple(sites)
    files: dict[str, Path] = {}
    for dist in dists:
        files.update(_files(dist))
    key = json.dumps({"python": sys.version_info[:2], "dists": sorted((_canonical(d.metadata["Name"]), d.version)
                                                                     for d in dists), "files": sorted(files)})
    return (stage_files(sorted(files.items()), key, cache_root),)
