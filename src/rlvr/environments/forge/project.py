"""A pure-Python project with its own pytest tests, read for `rlvr forge` (step 1: the project's set-up).

Sources (`open_project`): a source tree (a folder), an sdist (`.tar.gz`, `.zip`), or `NAME==VERSION`,
whose sdist is fetched from the configured package index at run time (`fetch_sdist`: the simple
API of PEP 691 JSON, or PEP 503 HTML, at `PIP_INDEX_URL` / `UV_DEFAULT_INDEX` / `UV_INDEX_URL`,
default PyPI; its sha256 checked) into a cache folder the caller chooses, never into the repository.

What is read from the tree (`read_project`):

- the import root: `src/` when it holds a package or module (the src layout), else the top folder;
- the project's modules: packages (folders with `__init__.py`) and modules there, minus tests,
  docs, examples and tooling (`setup.py`, `noxfile.py`, ...);
- the tests: a top-level `tests/`, `test/` or `testing/` folder (all of it is withheld from the
  agent and becomes the task's `tests/`), else top-level `test_*.py` / `*_test.py` files (with
  the top-level `conftest.py`); tests inside the package are not supported;
- the workspace: every other file, minus what could hold a second copy of the original source or
  its build: `.git`, `*.egg-info`, `PKG-INFO`, `build/`, `dist/`, `__pycache__`, `*.pyc`, caches.

Bad input raises `ProjectError` (a `DataError`) naming the project and the reason: no tests,
tests inside the package, compiled code (C, Cython, Rust sources, `ext_modules`), a module name of
the standard library, a Python the sandbox does not have.
"""

from __future__ import annotations

import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import DataError

__all__ = ["Project", "ProjectError", "host_copies", "host_file_copies", "open_project"]

DEFAULT_INDEX = "https://pypi.org/simple"
"""The package index used when neither PIP_INDEX_URL nor UV_DEFAULT_INDEX / UV_INDEX_URL is set."""
MAX_SDIST_BYTES = 64 << 20
MAX_TREE_BYTES = 256 << 20
"""Largest sdist downloaded, and largest unpacked tree, bytes."""
COMPILED_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".pyx", ".pxd", ".rs", ".f", ".f90", ".cu", ".go")
"""Source files that need a compiler: a project holding one is refused."""
TEST_DIRS = ("tests", "test", "testing")
NOT_MODULES = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "bench",
                         "benchmark", "scripts", "tools", "build", "dist", "setup", "conftest", "noxfile", "fabfile",
                         "tasks", "versioneer", "ez_setup", "bootstrap", "manage", "runtests", "run_tests", "tox",
                         "_version"})
"""Names at the import root that are never the project's own modules."""
JUNK_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".eggs", "build", "dist", ".tox", ".nox",
                       ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "htmlcov", ".venv", "venv",
                       ".idea", ".vscode", ".github"})
JUNK_SUFFIXES = (".pyc", ".pyo", ".orig", ".rej", ".so", ".pyd", ".dylib", ".whl", ".tar.gz", ".zip", ".egg")
JUNK_FILES = frozenset({"PKG-INFO", ".coverage"})
SANDBOX_ROOTS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
"""Host folders every sandbox mounts read-only (`rlvr.sandbox`): a copy of the project there is reachable."""
"""What the workspace never holds: version-control data, builds, caches, bytecode, archives, sdist metadata."""


class ProjectError(DataError):
    """A project `rlvr forge` cannot use, and why (`project`, `reason`)."""

    def __init__(self, project: str, reason: str) -> None:
        super().__init__(f"project {project}: {reason}")
        self.project = project
        self.reason = reason


class Project(BaseModel):
    """A project read from its source tree (module docstring). Paths are relative to `root`, with `/`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Distribution name (PKG-INFO / pyproject.toml), or the folder's name.")
    version: str = Field(default="", description="Its version ('' when the tree does not say).")
    root: str = Field(description="Absolute host path of the source tree (read only).")
    import_root: str = Field(default="", description="'src' for the src layout, '' when modules sit at the top.")
    modules: tuple[str, ...] = Field(description="Top-level import names of the project's own code.")
    tests_dir: str = Field(description="Folder whose contents become the task's tests/ ('' for top-level test files).")
    test_files: tuple[str, ...] = Field(description="The test files (`test_*.py`, `*_test.py`).")
    test_support: tuple[str, ...] = Field(default=(), description="Other files that go with the tests (helpers, "
                                          "data, conftest.py).")
    workspace_files: tuple[str, ...] = Field(description="The files the agent's workspace holds.")
    requires_python: str = Field(default="", description="Requires-Python ('' when not declared).")
    dependencies: tuple[str, ...] = Field(default=(), description="Declared runtime requirements (not extras).")

    @property
    def label(self) -> str:
        """`name==version` (or the name alone)."""
        return f"{self.name}=={self.version}" if self.version else self.name

    def tests_name(self, path: str) -> str:
        """Where a test or support file lies under the task's tests/ (relative to `tests_dir`)."""
        return path[len(self.tests_dir) + 1:] if self.tests_dir else path

    def source_files(self) -> list[str]:
        """The Python files of the project's own modules (the files forge may mutate)."""
        base = f"{self.import_root}/" if self.import_root else ""
        out = []
        for path in self.workspace_files:
            if not path.endswith(".py") or not path.startswith(base):
                continue
            top = path[len(base):].split("/", 1)[0]
            if top.removesuffix(".py") in self.modules:
                out.append(path)
        return out

    def read(self, path: str) -> bytes:
        """The bytes of one file of the tree."""
        return (Path(self.root) / path).read_bytes()


def _canonical(name: str) -> str:
    """PEP 503 normalised name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def index_url() -> str:
    """The package index's simple API root: PIP_INDEX_URL, UV_DEFAULT_INDEX, UV_INDEX_URL, else PyPI's."""
    for key in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        value = os.environ.get(key, "").strip()
        if value:
            return value.rstrip("/")
    return DEFAULT_INDEX


def _parse_requirement(requirement: str) -> tuple[str, str]:
    name, sep, version = requirement.strip().partition("==")
    if not sep or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name.strip()) or not version.strip():
        raise DataError(f"--package {requirement!r}: give a pinned requirement NAME==VERSION (e.g. inflection==0.5.1)")
    return name.strip(), version.strip()


def _sdist_files(name: str, index: str) -> list[dict[str, Any]]:
    """The files the index lists for `name` (PEP 691 JSON, or PEP 503 HTML parsed): filename, url, sha256."""
    url = f"{index}/{_canonical(name)}/"
    request = urllib.request.Request(url, headers={
        "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.2", "User-Agent": "rlvr-forge"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            kind = reply.headers.get("Content-Type", "")
            body = reply.read(16 << 20).decode("utf-8", errors="replace")
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(f"cannot read the package index at {url}: {exc} (set PIP_INDEX_URL to a reachable index, "
                        "or pass --source with a downloaded sdist)") from exc
    if "json" in kind:
        files = json.loads(body).get("files") or []
        return [{"filename": f.get("filename", ""), "url": urllib.parse.urljoin(url, f.get("url", "")),
                 "sha256": (f.get("hashes") or {}).get("sha256"), "yanked": bool(f.get("yanked"))} for f in files]
    out = []
    for href, filename in re.findall(r'<a[^>]*href="([^"]+)"[^>]*>([^<]+)</a>', body):
        link, _, fragment = href.partition("#")
        digest = fragment[len("sha256="):] if fragment.startswith("sha256=") else None
        out.append({"filename": filename.strip(), "url": urllib.parse.urljoin(url, link), "sha256": digest,
                    "yanked": False})
    return out


def fetch_sdist(requirement: str, cache_dir: str | os.PathLike[str], index: str | None = None) -> Path:
    """Download the sdist of `NAME==VERSION` from the package index into `cache_dir` (reused when present).

    Raises:
        DataError: not pinned, the index cannot be read, no sdist of that version, a hash mismatch,
            or a file larger than `MAX_SDIST_BYTES`.
    """
    name, version = _parse_requirement(requirement)
    root = index or index_url()
    wanted = []
    for item in _sdist_files(name, root):
        filename = item["filename"]
        stem = filename[:-len(".tar.gz")] if filename.endswith(".tar.gz") else (
            filename[:-len(".zip")] if filename.endswith(".zip") else None)
        if stem is None or "-" not in stem:
            continue
        file_name, file_version = stem.rsplit("-", 1)
        if _canonical(file_name) == _canonical(name) and file_version == version and not item["yanked"]:
            wanted.append(item)
    if not wanted:
        raise DataError(f"{name}=={version}: the index {root} lists no sdist of that version (forge needs the "
                        "source distribution: a wheel holds no tests)")
    item = sorted(wanted, key=lambda f: not f["filename"].endswith(".tar.gz"))[0]
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    target: Path = cache / str(item["filename"])
    if target.is_file() and (item["sha256"] is None or _sha256(target) == item["sha256"]):
        return target
    try:
        with urllib.request.urlopen(urllib.request.Request(item["url"], headers={"User-Agent": "rlvr-forge"}),
                                    timeout=120) as reply:
            data = reply.read(MAX_SDIST_BYTES + 1)
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(f"{name}=={version}: cannot download {item['url']}: {exc}") from exc
    if len(data) > MAX_SDIST_BYTES:
        raise DataError(f"{name}=={version}: the sdist is larger than {MAX_SDIST_BYTES >> 20} MiB")
    if item["sha256"] is not None and hashlib.sha256(data).hexdigest() != item["sha256"]:
        raise DataError(f"{name}=={version}: the downloaded sdist does not match the index's sha256")
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unpack_sdist(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> Path:
    """Unpack an sdist into `dest` (safely: no absolute paths, `..`, links out, devices) and return its top folder.

    Raises:
        DataError: not a .tar.gz/.zip, unsafe or too large (`MAX_TREE_BYTES`), or not one top folder.
    """
    source, out = Path(archive), Path(dest)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    try:
        if source.name.endswith((".tar.gz", ".tgz", ".tar")):
            _unpack_tar(source, out)
        elif source.suffix == ".zip":
            _unpack_zip(source, out)
        else:
            raise DataError(f"{source}: not an sdist (.tar.gz or .zip) or a source folder")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        raise DataError(f"{source.name}: cannot unpack ({exc})") from exc
    tops = [p for p in out.iterdir()]
    if len(tops) == 1 and tops[0].is_dir():
        return tops[0]
    return out


def _check_members(source: Path, out: Path, names: list[str], size: int) -> None:
    if size > MAX_TREE_BYTES:
        raise DataError(f"{source.name}: unpacks to more than {MAX_TREE_BYTES >> 20} MiB")
    for name in names:
        if name.startswith("/") or ".." in Path(name).parts or not (out / name).resolve().is_relative_to(
                out.resolve()):
            raise DataError(f"{source.name}: member {name!r} escapes the archive")


def _unpack_tar(source: Path, out: Path) -> None:
    with tarfile.open(source) as tar:
        members = tar.getmembers()
        _check_members(source, out, [m.name for m in members], sum(m.size for m in members))
        kept = [m for m in members if m.isfile() or m.isdir()]  # no links, devices or fifos
        if hasattr(tarfile, "data_filter"):
            tar.extractall(out, members=kept, filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            tar.extractall(out, members=kept)


def _unpack_zip(source: Path, out: Path) -> None:
    with zipfile.ZipFile(source) as zf:
        infos = zf.infolist()
        _check_members(source, out, [i.filename for i in infos], sum(i.file_size for i in infos))
        zf.extractall(out)


def _metadata(root: Path) -> dict[str, Any]:
    """name, version, requires_python, dependencies from PKG-INFO, else pyproject.toml's [project]."""
    info = root / "PKG-INFO"
    if info.is_file():
        msg = email.parser.Parser().parsestr(info.read_text(encoding="utf-8", errors="replace"), headersonly=True)
        deps = [d for d in msg.get_all("Requires-Dist") or [] if "extra ==" not in d and "extra==" not in d]
        return {"name": msg.get("Name") or root.name, "version": msg.get("Version") or "",
                "requires_python": msg.get("Requires-Python") or "", "dependencies": deps}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project") or {}
        except (ValueError, OSError):
            project = {}
        return {"name": project.get("name") or root.name, "version": str(project.get("version") or ""),
                "requires_python": project.get("requires-python") or "",
                "dependencies": [str(d) for d in project.get("dependencies") or []]}
    return {"name": root.name, "version": "", "requires_python": "", "dependencies": []}


def _compiled(root: Path, files: list[str]) -> str | None:
    """Why the project needs a compiler (None when it does not)."""
    found = [f for f in files if f.endswith(COMPILED_SUFFIXES)]
    if found:
        return f"needs a compiler: it holds compiled-language sources ({', '.join(found[:4])})"
    setup = root / "setup.py"
    if setup.is_file() and re.search(r"\bext_modules\b|\bExtension\(", setup.read_text(errors="replace")):
        return "needs a compiler: setup.py builds extension modules (ext_modules)"
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text(errors="replace")
        backend = re.search(r"build-backend\s*=\s*[\"']([^\"']+)", text)
        if backend and backend.group(1).split(".")[0] in ("maturin", "scikit_build_core", "mesonpy", "setuptools_rust"):
            return f"needs a compiler: its build backend is {backend.group(1)}"
    return None


def _walk(root: Path) -> list[str]:
    """Every regular file under `root` (relative, `/`), junk folders and files left out, symbolic links skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in JUNK_DIRS and not d.endswith(".egg-info")
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name in JUNK_FILES or name.endswith(JUNK_SUFFIXES) or os.path.islink(path) or not os.path.isfile(path):
                continue
            out.append(os.path.relpath(path, root).replace(os.sep, "/"))
    return out


def _is_test_file(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py"))


def _modules(base: Path, files: list[str], prefix: str) -> list[str]:
    """Top-level import names under `base` (`prefix`: its path relative to the tree, '' or 'src/')."""
    names = set()
    for path in files:
        if not path.startswith(prefix) or not path.endswith(".py"):
            continue
        parts = path[len(prefix):].split("/")
        top = parts[0].removesuffix(".py")
        if not top.isidentifier() or top in NOT_MODULES or (_is_test_file(parts[-1]) and len(parts) == 1):
            continue
        if len(parts) == 1 or (base / parts[0] / "__init__.py").is_file():
            names.add(top)
    return sorted(names)


def read_project(root: str | os.PathLike[str], label: str | None = None) -> Project:
    """Read a project's source tree (module docstring for the rules).

    Args:
        root: the tree's top folder (holding pyproject.toml, setup.py or setup.cfg).
        label: how messages name the project (default: its name from the metadata).

    Raises:
        ProjectError: not a Python project, compiled code, no tests, tests inside the package, no
            module, or a module named like the standard library's.
    """
    top = Path(root).resolve()
    meta = _metadata(top) if top.is_dir() else {"name": top.name}
    who = label or (f"{meta['name']}=={meta['version']}" if meta.get("version") else meta["name"])
    if not top.is_dir() or not any((top / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        raise ProjectError(who, f"{top} is not a Python project (no pyproject.toml, setup.py or setup.cfg)")
    files = _walk(top)
    if sum((top / f).stat().st_size for f in files) > MAX_TREE_BYTES:
        raise ProjectError(who, f"the source tree is larger than {MAX_TREE_BYTES >> 20} MiB")
    why = _compiled(top, files)
    if why:
        raise ProjectError(who, why)
    src = top / "src"
    import_root = "src" if src.is_dir() and _modules(src, files, "src/") else ""
    base = src if import_root else top
    modules = _modules(base, files, "src/" if import_root else "")
    if not modules:
        raise ProjectError(who, "no importable package or module found (a package needs an __init__.py)")
    clash = [m for m in modules if m in sys.stdlib_module_names]
    if clash:
        raise ProjectError(who, f"its module {clash[0]!r} is named like a standard-library module, which the "
                           "grader always imports first")
    tests_dir = next((d for d in TEST_DIRS if any(f.startswith(d + "/") and _is_test_file(f) for f in files)), "")
    if tests_dir:
        test_files = [f for f in files if f.startswith(tests_dir + "/") and _is_test_file(f)]
        support = [f for f in files if f.startswith(tests_dir + "/") and f not in test_files]
    else:
        test_files = [f for f in files if "/" not in f and _is_test_file(f)]
        support = ["conftest.py"] if "conftest.py" in files and test_files else []
    if not test_files:
        inside = [f for f in files if _is_test_file(f)]
        if inside:
            raise ProjectError(who, f"its tests live inside the package ({inside[0]}); forge needs them in a "
                               "top-level tests/ folder or top-level test_*.py files")
        raise ProjectError(who, "no tests: no tests/ folder and no top-level test_*.py files")
    hidden = set(test_files) | set(support)
    workspace = [f for f in files if f not in hidden]
    return Project(name=meta["name"], version=meta.get("version", ""), root=str(top), import_root=import_root,
                   modules=tuple(modules), tests_dir=tests_dir, test_files=tuple(test_files),
                   test_support=tuple(support), workspace_files=tuple(workspace),
                   requires_python=meta.get("requires_python", ""), dependencies=tuple(meta.get("dependencies", ())))


def open_project(source: str | os.PathLike[str] | None = None, package: str | None = None, *,
                 cache_dir: str | os.PathLike[str]) -> Project:
    """Read a project from a source folder, an sdist file, or `NAME==VERSION` from the package index.

    Args:
        source: a source folder, or an sdist (`.tar.gz`, `.zip`).
        package: `NAME==VERSION` (fetched with `fetch_sdist`).
        cache_dir: where downloaded sdists and unpacked trees go.

    Raises:
        DataError: exactly one of `source` and `package` must be given; fetching or unpacking failed.
        ProjectError: the project cannot be used (`read_project`).
    """
    if (source is None) == (package is None):
        raise DataError("give exactly one of --source PATH and --package NAME==VERSION")
    cache = Path(cache_dir)
    if package is not None:
        archive = fetch_sdist(package, cache / "sdists")
        label: str | None = package
    else:
        archive = Path(source).expanduser().resolve()  # type: ignore[arg-type]
        label = None
        if archive.is_dir():
            return read_project(archive)
        if not archive.is_file():
            raise DataError(f"--source {source}: no such file or folder")
    stem = archive.name.removesuffix(".tar.gz").removesuffix(".zip").removesuffix(".tgz")
    top = unpack_sdist(archive, cache / "trees" / stem)
    return read_project(top, label=label)


def host_copies(project: Project, python: str, site: tuple[str, ...]) -> list[str]:
    """Installed copies of the project's modules the sandbox can see (each `module at path`; [] when none).

    The sandbox mounts the host's system read-only: a Debian `python3-*` package or a pip copy of
    the project in the system's packages, or in the grader's site, would hand the agent the
    original source (and, before the grader put the workspace first, would have been what the
    tests imported). Checked with the sandbox's own interpreter, from `/`, isolated (`-I`).
    """
    code = ("import importlib.util, json, sys\nout = {}\nfor m in sys.argv[1:]:\n    try:\n"
            "        spec = importlib.util.find_spec(m)\n    except Exception:\n        spec = None\n"
            "    out[m] = spec and (spec.origin or list(spec.submodule_search_locations or []))\n"
            "print(json.dumps(out))\n")
    found: list[str] = []
    try:
        reply = subprocess.run([python, "-I", "-c", code, *project.modules], capture_output=True, text=True,
                               timeout=120, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        origins = json.loads(reply.stdout or "{}")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise ProjectError(project.label, f"cannot check the sandbox's Python {python} for installed copies: "
                           f"{exc}") from exc
    found += [f"{m} at {where}" for m, where in origins.items() if where]
    for directory in site:
        for module in project.modules:
            hits = [p for p in Path(directory).glob(f"{module}*") if p.name in (module, f"{module}.py")
                    or p.name.startswith(f"{module}.")]
            found += [f"{module} at {p} (the grader's site)" for p in hits if not p.name.endswith(".dist-info")]
    return found


def host_file_copies(project: Project, extra_roots: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Copies of the project's source files anywhere the sandbox can read: source path -> host paths.

    A module found by the import system (`host_copies`) is one way to reach the original; a copy
    vendored inside another program is another (e.g. `/usr/lib/google-cloud-sdk/.../third_party/
    inflection/__init__.py`, which no import finds). Every file under `SANDBOX_ROOTS` (and
    `extra_roots`, e.g. the grader's site) whose path ends with a source file's path below the
    import root (`inflection/__init__.py`), or is its bytecode (`inflection/__pycache__/
    __init__.cpython-311.pyc`), is listed.
    """
    base = f"{project.import_root}/" if project.import_root else ""
    wanted: dict[str, list[tuple[str, str]]] = {}
    for path in project.source_files():
        rel = path[len(base):]
        wanted.setdefault(rel.rsplit("/", 1)[-1], []).append((path, rel))
    found: dict[str, list[str]] = {}
    roots = [r for r in (*SANDBOX_ROOTS, *extra_roots) if os.path.isdir(r) and not os.path.islink(r)]
    for root in roots:
        for dirpath, _dirnames, filenames in os.walk(root):
            in_cache = dirpath.endswith("/__pycache__")
            for name in filenames:
                source_name = name.split(".", 1)[0] + ".py" if in_cache and name.endswith(".pyc") else name
                for path, rel in wanted.get(source_name, ()):
                    where = os.path.dirname(dirpath) if in_cache else dirpath
                    if os.path.join(where, source_name).endswith("/" + rel):
                        found.setdefault(path, []).append(os.path.join(dirpath, name))
    return found
