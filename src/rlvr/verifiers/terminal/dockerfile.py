"""A task's Dockerfile as setup steps for the local sandbox, or the reason it needs a container.

Parsed with `dockerfile-parse` (the containerbuildsystem project's parser). The local provider
runs a Dockerfile whose image is a stock Linux distribution and whose instructions only prepare
the working directory:

- `FROM` one of `STOCK_BASES` (Terminal-Bench's base images, ubuntu, debian, python,
  buildpack-deps): the host's own system stands in for the image's;
- `WORKDIR`: the first one is the sandbox's working directory (a tmpfs); later ones must lie
  inside it;
- `COPY`/`ADD` from the build context into the working directory (ADD unpacks local tars);
- `RUN`: package installs (`apt-get install`, `pip install`, ...) are checked against the host
  (every package present: skipped; any missing: container), downloads (`curl`, `wget`,
  `git clone`) need a container; every other command runs in the sandbox in Dockerfile order;
- `ENV` values apply to later steps, the agent's shell and the tests; `ARG` defaults are
  substituted; `CMD`, `ENTRYPOINT`, `EXPOSE`, `LABEL`, `HEALTHCHECK`, `STOPSIGNAL` are ignored;
  `USER` other than root, multi-stage builds, `COPY --from`, `VOLUME` and `ONBUILD` need a container.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import io
import json
import os
import posixpath
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from rlvr.core.errors import DataError
from rlvr.verifiers.terminal.shell import ShellParseError, install_packages, split_commands
from rlvr.verifiers.terminal.spec import SetupStep

__all__: list[str] = []

STOCK_BASES = ("ghcr.io/laude-institute/t-bench/", "ubuntu", "debian", "python", "buildpack-deps",
               "library/ubuntu", "library/debian", "library/python", "docker.io/library/")
"""Image name prefixes the host system stands in for (Terminal-Bench's base images are Ubuntu 24.04 or
python:3.13 with tmux and asciinema, `docker/base-images/` in the terminal-bench repository)."""

_DOWNLOADS = re.compile(r"^(curl|wget)$")


@dataclass
class DockerPlan:
    """The result of reading a Dockerfile."""

    steps: list[SetupStep] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    cwd: str | None = None
    image: str | None = None
    container_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def local(self) -> bool:
        """True when the local sandbox can prepare this environment."""
        return not self.container_reasons


@functools.lru_cache(maxsize=512)
def _apt_present(package: str) -> bool:
    if shutil.which(package):
        return True
    dpkg = shutil.which("dpkg-query")
    if dpkg is None:
        return False
    try:
        out = subprocess.run([dpkg, "-W", "-f=${Status}", package], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "install ok installed" in out.stdout


@functools.lru_cache(maxsize=512)
def _pip_present(python: str, package: str) -> bool:
    code = "import importlib.metadata as m, sys\ntry:\n m.distribution(sys.argv[1])\nexcept Exception:\n sys.exit(1)\n"
    try:
        return subprocess.run([python, "-I", "-c", code, package], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _stock(image: str) -> bool:
    return any(image.startswith(prefix) for prefix in STOCK_BASES)


def _env_pairs(value: str) -> list[tuple[str, str]]:
    """ENV `K=V K2="v 2"` or the legacy `K V` form."""
    try:
        parts = shlex.split(value)
    except ValueError:
        parts = value.split()
    if parts and "=" not in parts[0]:
        return [(parts[0], value.split(None, 1)[1] if len(value.split(None, 1)) > 1 else "")]
    return [tuple(p.split("=", 1)) for p in parts if "=" in p]  # type: ignore[misc]


def _expand(text: str, env: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return env.get(name, m.group(0))
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, text)


def _resolve(path: str, cwd: str) -> str:
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Reader:
    """Walks the Dockerfile's instructions, collecting steps and container reasons."""

    def __init__(self, context: Path, python: str) -> None:
        self.context = context.resolve()
        self.python = python
        self.plan = DockerPlan()
        self.cwd = "/"
        self.args: dict[str, str] = {}

    def need(self, why: str) -> None:
        if why not in self.plan.container_reasons:
            self.plan.container_reasons.append(why)

    def instruction(self, name: str, value: str, line: int) -> None:
        handler = {"FROM": self.from_, "WORKDIR": self.workdir, "ENV": self.env, "ARG": self.arg, "RUN": self.run,
                   "COPY": self.copy, "ADD": self.copy, "USER": self.user}.get(name)
        if handler is not None:
            handler(_expand(value, {**self.args, **self.plan.env}) if name != "RUN" else value, name, line)
        elif name in ("VOLUME", "ONBUILD"):
            self.need(f"{name} (line {line}) needs a container")
        elif name == "SHELL":
            self.plan.notes.append(f"SHELL (line {line}) ignored: RUN lines run with bash")

    def from_(self, value: str, name: str, line: int) -> None:
        words = [w for w in value.split() if not w.startswith("--")]
        image = words[0] if words else ""
        if self.plan.image is not None:
            self.need(f"multi-stage build (second FROM on line {line}) needs a container")
            return
        self.plan.image = image
        if not _stock(image):
            self.need(f"base image {image!r} is not a stock distribution the host can stand in for")

    def workdir(self, value: str, name: str, line: int) -> None:
        path = _resolve(value.strip(), self.cwd)
        if self.plan.workdir is None:
            if path in ("/", "/usr", "/etc", "/bin", "/lib", "/var", "/opt") or path.startswith(("/usr/", "/etc/")):
                self.need(f"WORKDIR {path} is a system directory: needs a container")
            self.plan.workdir = path
        elif not _inside(path, self.plan.workdir):
            self.need(f"WORKDIR {path} (line {line}) lies outside the working directory {self.plan.workdir}")
        self.cwd = self.plan.cwd = path

    def env(self, value: str, name: str, line: int) -> None:
        for key, val in _env_pairs(value):
            self.plan.env[key] = val
            self.plan.steps.append(SetupStep(kind="env", name=key, value=val))

    def arg(self, value: str, name: str, line: int) -> None:
        key, _, default = value.strip().partition("=")
        if default:
            self.args[key] = default.strip("\"'")

    def user(self, value: str, name: str, line: int) -> None:
        if value.strip().split(":")[0] not in ("root", "0"):
            self.need(f"USER {value.strip()} (line {line}) needs a second user account: a container")

    def run(self, value: str, name: str, line: int) -> None:
        command = value.strip()
        if command.startswith("["):
            with contextlib.suppress(ValueError, TypeError):
                command = shlex.join(json.loads(command))
        try:
            parts = split_commands(command)  # a RUN line split at its top-level && and ;
        except ShellParseError:
            self.plan.steps.append(SetupStep(kind="run", command=command, cwd=self.cwd))
            return
        kept = []
        writable = (self.plan.workdir or "/app", "/tmp", "/root", "/dev/null", "/dev/stdout", "/dev/stderr")
        for part in parts:
            outside = [p for p in part.writes if not any(_inside(posixpath.normpath(p), w) for w in writable)]
            if outside and part.kind != "install":
                self.need(f"RUN line {line} writes {outside[0]} outside the working directory (read-only here)")
            if part.kind == "install":
                self.check_install(part.words, line)
            elif part.words and (_DOWNLOADS.match(part.words[0]) or part.words[:2] == ("git", "clone")):
                self.need(f"RUN line {line} downloads ({part.words[0]}): needs network, a container")
            elif part.kind != "noop" or part.text.strip() not in (":", "true"):
                kept.append(part.text)
        if kept:
            self.plan.steps.append(SetupStep(kind="run", command=" && ".join(kept), cwd=self.cwd))

    def check_install(self, words: tuple[str, ...], line: int) -> None:
        manager, packages = install_packages(words)
        missing = []
        for package in packages:
            present = _apt_present(package) if manager == "apt" else _pip_present(self.python, package)
            if not present:
                missing.append(package)
        if missing:
            self.need(f"RUN line {line} installs {', '.join(missing)} ({manager}), which this machine lacks")
        elif packages:
            self.plan.notes.append(f"line {line}: {manager} packages {', '.join(packages)} already present; "
                                   "install skipped")

    def copy(self, value: str, name: str, line: int) -> None:  # noqa: C901 - Docker's COPY rules, one place
        try:
            words = shlex.split(value)
        except ValueError:
            words = value.split()
        if words and words[0].startswith("["):
            with contextlib.suppress(ValueError):
                words = json.loads(value)
        flags = [w for w in words if w.startswith("--")]
        paths = [w for w in words if not w.startswith("--")]
        if any(f.startswith("--from") for f in flags):
            self.need(f"{name} --from (line {line}) copies from another image: needs a container")
            return
        mode = None
        for flag in flags:
            if flag.startswith("--chmod="):
                with contextlib.suppress(ValueError):
                    mode = int(flag.split("=", 1)[1], 8)
        if len(paths) < 2:
            raise DataError(f"Dockerfile line {line}: {name} needs a source and a destination, got {value!r}")
        *sources, dest = paths
        workdir = self.plan.workdir or "/"
        target = _resolve(dest, self.cwd)
        if not _inside(target, workdir):
            self.need(f"{name} to {target} (line {line}) writes outside the working directory {workdir}")
            return
        for source in sources:
            if re.match(r"^[a-z]+://", source):
                self.need(f"ADD of a URL (line {line}) needs network: a container")
                continue
            matches = sorted(glob.glob(str(self.context / source))) if any(c in source for c in "*?[") else \
                [str(self.context / source)]
            for host in matches:
                real = Path(host).resolve()
                if not real.is_relative_to(self.context):
                    raise DataError(f"Dockerfile line {line}: {name} source {source!r} leaves the build context")
                if not real.exists():
                    raise DataError(f"Dockerfile line {line}: {name} source {source!r} does not exist in "
                                    f"{self.context}")
                into_dir = dest.endswith("/") or len(sources) > 1 or len(matches) > 1
                file_dest = posixpath.join(target, real.name) if real.is_file() and into_dir else target
                extract = name == "ADD" and real.is_file() and _is_archive(real)
                self.plan.steps.append(SetupStep(kind="copy", source=str(real), dest=target if (
                    real.is_dir() or extract) else file_dest, extract=extract, mode=mode))


def _is_archive(path: Path) -> bool:
    return path.name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".txz"))


def read_dockerfile(path: str | os.PathLike[str], context: str | os.PathLike[str], python: str) -> DockerPlan:
    """Read the Dockerfile at `path` (build context `context`) into setup steps and container reasons.

    Args:
        path: the Dockerfile.
        context: the build context directory (COPY sources are relative to it).
        python: the sandbox's Python, to check `pip install` requirements against.

    Raises:
        DataError: the file cannot be read, or a COPY names a missing source or one outside the context.
    """
    from dockerfile_parse import DockerfileParser

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read the Dockerfile {path}: {exc}") from exc
    parser = DockerfileParser(fileobj=io.BytesIO(data), env_replace=False)
    reader = _Reader(Path(context), python)
    for item in parser.structure:
        reader.instruction(item["instruction"].upper(), item["value"], item["startline"] + 1)
    if reader.plan.image is None:
        reader.need("the Dockerfile has no FROM line")
    return reader.plan
