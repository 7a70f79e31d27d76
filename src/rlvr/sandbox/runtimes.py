"""Container runtimes for `rlvr.sandbox.container`: finding a working podman/docker, building task images.

`container_runtime()` finds a container runtime CLI that can really run a container here (probed once per
process), `build_image` builds a task's Dockerfile into an image tagged by a hash of its content,
`ContainerConfig` says how the container runtime is called. podman and docker are container runtimes;
crun and runc, which podman drives, are OCI runtimes (`oci_runtime`).

Host quirks handled by `container_runtime()`'s probe (one trial run per variant, cached per
process): podman's default OCI runtime crun refuses hosts whose cgroup controllers are split
between v1 and v2 ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2",
raised in crun's src/libcrun/cgroup.c; see buildbuddy-io/buildbuddy#6857), so the probe falls
back to `--runtime runc` where runc is installed (runc drives v1 controllers); podman sets
nofile and nproc to 1048576 unless told otherwise (podman-run(1), `--ulimit`), and raising them
above the hard limits of podman's own process needs CAP_SYS_RESOURCE (setrlimit(2)), so
explicit ulimits no higher than this process's hard limits are always passed (`auto_ulimits`);
cgroup limits the container runtime cannot apply are left out (`RuntimeInfo.cgroup_limits`, with the reason
in `RuntimeInfo.notes`).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlvr.core.errors import SandboxError
from rlvr.sandbox.host_process import kill_group

__all__ = ["build_image", "container_runtime", "image_exists"]

RuntimeKind = Literal["podman", "docker"]
_PROBE_TIMEOUT_S = 60.0


class ContainerConfig(BaseModel):
    """How `ContainerSession` and `build_image` call the container runtime.

    Frozen. The defaults work with podman (rootful, also on hosts with hybrid cgroups) and with
    docker on a usual daemon host.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    container_runtime: str | None = Field(default=None, description="'podman', 'docker' or a path to either "
                                          "CLI; None: `container_runtime()` (podman first).")
    oci_runtime: str | None = Field(default=None, description="podman's OCI runtime (`podman --runtime`); None: as "
                                    "the "
                                "probe found working (runc where crun fails on hybrid cgroups). Ignored for docker.")
    ulimits: dict[str, str] | None = Field(default=None, description="`--ulimit name=soft:hard` of the container; "
                                           "None: nofile and nproc no higher than this process's hard limits "
                                           "(podman sets them from its own process) and core=0:0; {}: none.")
    memory_mb: int | None = Field(default=4096, ge=16, description="cgroup memory limit of the whole container "
                                  "(`--memory`), MiB; None: none. Left out where the runtime cannot apply it.")
    pids_limit: int | None = Field(default=1024, ge=16, description="cgroup process limit of the whole container "
                                   "(`--pids-limit`); None: none. Left out where the runtime cannot apply it.")
    cpus: float | None = Field(default=None, gt=0, description="CPU quota (`--cpus`), cores; None: none.")
    network: str = Field(default="none", description="`--network` of the session container.")
    uidmap: str | None = Field(default="0:100000:65536", pattern=r"^\d+:\d+:\d+$", description="podman "
                               "`--uidmap`/`--gidmap` (container:host:count): container root is an unprivileged "
                               "host uid; None: no user namespace. Ignored for docker.")
    user: str | None = Field(default=None, description="`--user` of the container; None: the image's USER.")
    cap_drop_all: bool = Field(default=True, description="`--cap-drop ALL` (root in the container has no "
                               "capabilities: no chown of others' files, no apt sandbox user switch).")
    cap_add: tuple[str, ...] = Field(default=(), description="Capabilities added back (`--cap-add`).")
    image_env: bool = Field(default=True, description="The image's ENV is the base of the shell's environment.")
    extra_args: tuple[str, ...] = Field(default=(), description="More `run` options, placed before the image.")
    build_args: tuple[str, ...] = Field(default=(), description="More `build` options (e.g. `--network host`).")
    start_timeout_s: float = Field(default=120.0, gt=0, description="Wait for the supervisor's ready "
                                   "line, seconds (the first run of an image with a uid map copies its layers).")


@dataclass(frozen=True)
class RuntimeInfo:
    """What the probe found about one container runtime CLI.

    Attributes:
        path: the CLI.
        kind: 'podman' or 'docker' (a `docker` that is podman's wrapper counts as podman).
        oci_runtime: OCI runtime to pass as `--runtime` (podman), None for the container runtime's default.
        cgroup_limits: `--memory` and `--pids-limit` work here.
        userns: `--uidmap`/`--gidmap` work here (podman).
        notes: what the probe had to work around.
    """

    path: str
    kind: RuntimeKind
    oci_runtime: str | None = None
    cgroup_limits: bool = True
    userns: bool = False
    notes: tuple[str, ...] = ()

    def global_args(self, oci_runtime: str | None = None) -> list[str]:
        """Options before the subcommand: `--runtime` (the OCI runtime) for podman."""
        chosen = oci_runtime or self.oci_runtime
        return ["--runtime", chosen] if self.kind == "podman" and chosen else []


_RUNTIMES: dict[str, RuntimeInfo | None] = {}
_REASONS: dict[str, str] = {}
_RUNTIME_LOCK = threading.Lock()
_BUILD_LOCKS: dict[str, threading.Lock] = {}
_BUILD_GUARD = threading.Lock()


def run_cli(argv: Sequence[str], timeout_s: float, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run a container runtime command; a missing binary or a timeout is an `rc` of 127 / 124, the reason on stderr."""
    try:
        return subprocess.run(list(argv), input=stdin, capture_output=True, timeout=timeout_s, check=False,
                              stdin=None if stdin is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(list(argv), 124, b"", f"timed out after {timeout_s:g} s".encode())
    except OSError as exc:
        return subprocess.CompletedProcess(list(argv), 127, b"", str(exc).encode())


def _text(data: bytes, limit: int = 2000) -> str:
    return data.decode(errors="replace").strip()[-limit:]


def _resolve(name: str) -> str | None:
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name)


def auto_ulimits(open_files: int = 1024, kind: RuntimeKind = "podman") -> dict[str, str]:
    """The default `--ulimit`s: nofile `open_files` (at least 1024), nproc 4096, core 0.

    podman applies a container's rlimits from its own process, so above this process's hard
    limits they fail with EPERM unless it has CAP_SYS_RESOURCE: for podman they are capped at
    them. Docker applies them in its daemon, so they are passed as they are.
    """
    wanted = {"nofile": (resource.RLIMIT_NOFILE, max(open_files, 1024)), "nproc": (resource.RLIMIT_NPROC, 4096)}
    out = {}
    for name, (kind_id, value) in wanted.items():
        hard = resource.getrlimit(kind_id)[1]
        if kind == "podman" and hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        out[name] = f"{value}:{value}"
    out["core"] = "0:0"
    return out


def ulimit_args(ulimits: Mapping[str, str]) -> list[str]:
    """`--ulimit NAME=VALUE` arguments of a container run."""
    return [arg for name, value in ulimits.items() for arg in ("--ulimit", f"{name}={value}")]


def _probe_rootfs(root: str) -> list[str]:
    """An empty rootfs under `root` that sees the host's /usr (and /bin, /lib* where they are not symlinks)."""
    mounts = ["-v", "/usr:/usr:ro"]
    for name in ("bin", "sbin", "lib", "lib64"):
        host = f"/{name}"
        if os.path.islink(host):
            os.symlink(os.readlink(host).lstrip("/"), os.path.join(root, name))
        elif os.path.isdir(host):
            mounts += ["-v", f"{host}:{host}:ro"]
    for name in ("proc", "dev", "sys", "etc", "tmp", "run"):
        os.makedirs(os.path.join(root, name), exist_ok=True)
    os.chmod(root, 0o755)
    return mounts


def _runtime_kind(path: str) -> RuntimeKind:
    if "podman" in os.path.basename(path):
        return "podman"
    version = run_cli([path, "--version"], 15.0)
    return "podman" if b"podman" in version.stdout.lower() else "docker"


def _probe_podman(path: str) -> RuntimeInfo | str:
    """One trial `podman run` of the host's `true` in a scratch rootfs per variant; the first that works."""
    info = run_cli([path, "info", "--format", "{{.Host.OCIRuntime.Name}}"], _PROBE_TIMEOUT_S)
    if info.returncode != 0:
        return f"`podman info` failed: {_text(info.stderr, 500)}"
    default_runtime = _text(info.stdout, 100) or None
    true = shutil.which("true", path="/usr/bin:/bin") or "/usr/bin/true"
    runtimes: list[str | None] = [None]
    if default_runtime != "runc" and shutil.which("runc"):
        runtimes.append("runc")
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rlvr-probe-") as root:
        os.chmod(root, 0o755)
        rootfs = os.path.join(root, "rootfs")
        os.mkdir(rootfs)
        binds = _probe_rootfs(rootfs)

        def trial(runtime: str | None, extra: list[str]) -> str | None:
            argv = [path, *(["--runtime", runtime] if runtime else []), "run", "--rm", "--log-driver", "none",
                    "--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                    *ulimit_args(auto_ulimits()), *binds, *extra, "--rootfs", rootfs, true]
            done = run_cli(argv, _PROBE_TIMEOUT_S)
            return None if done.returncode == 0 else _text(done.stderr, 300) or f"exit {done.returncode}"

        limits = ["--pids-limit", "64", "--memory", "64m"]
        for runtime in runtimes:
            for with_limits in (True, False):
                why = trial(runtime, limits if with_limits else [])
                if why is not None:
                    failures.append(f"runtime {runtime or default_runtime}"
                                    f"{' with cgroup limits' if with_limits else ''}: {why}")
                    continue
                notes = list(failures)
                uid = ["--uidmap", "0:100000:65536", "--gidmap", "0:100000:65536"]
                userns_why = trial(runtime, uid + (limits if with_limits else []))
                if userns_why is not None:
                    notes.append(f"no user namespace (--uidmap failed: {userns_why})")
                return RuntimeInfo(path=path, kind="podman", oci_runtime=runtime, cgroup_limits=with_limits,
                                  userns=userns_why is None, notes=tuple(notes))
    return "no podman run worked: " + " | ".join(failures)


def _probe_docker(path: str) -> RuntimeInfo | str:
    """`docker info` (the daemon answers); docker has no image-less trial run, so `run` is trusted then."""
    info = run_cli([path, "info", "--format", "{{.ServerVersion}}"], 30.0)
    if info.returncode != 0 or not info.stdout.strip():
        return f"`docker info` failed (no daemon?): {_text(info.stderr, 500)}"
    return RuntimeInfo(path=path, kind="docker")


def probe_runtime(path: str) -> RuntimeInfo | None:
    """Probe the container runtime CLI at `path` once per process (cached); None when it cannot run containers here.

    The reason for None is kept for `runtime_info`'s error message.
    """
    with _RUNTIME_LOCK:
        if path in _RUNTIMES:
            return _RUNTIMES[path]
        found = _probe_podman(path) if _runtime_kind(path) == "podman" else _probe_docker(path)
        if isinstance(found, str):
            _REASONS[path] = found
            _RUNTIMES[path] = None
        else:
            _RUNTIMES[path] = found
        return _RUNTIMES[path]


def container_runtime(preferred: str | None = None) -> str | None:
    """The path of a container runtime CLI that can run containers here, or None.

    Args:
        preferred: 'podman', 'docker' or a path: only that one is tried. None: podman, then docker.

    Returns:
        The CLI's path; None when none works (a docker CLI without a reachable daemon, podman
        whose every OCI runtime fails). The probe runs once per CLI and process.
    """
    for name in [preferred] if preferred else ["podman", "docker"]:
        path = _resolve(name)
        if path is not None and probe_runtime(path) is not None:
            return path
    return None


def runtime_info(runtime: str | None = None) -> RuntimeInfo:
    """The probe result of `runtime` ('podman', 'docker', a path; None: `container_runtime()`).

    Raises:
        SandboxError: no such container runtime, or it cannot run containers here (the message says why).
    """
    path = container_runtime() if runtime is None else _resolve(runtime)
    if path is None:
        why = "; ".join(f"{p}: {r}" for p, r in _REASONS.items()) or "neither `podman` nor `docker` is on PATH"
        raise SandboxError(f"no working container runtime ({runtime or 'podman or docker'}): {why}. Install podman "
                           "(Debian: `apt-get install podman runc`) or start the docker daemon")
    info = probe_runtime(path)
    if info is None:
        raise SandboxError(f"the container runtime {path} cannot run containers here: {_REASONS.get(path, '')}")
    return info


# -- images --------------------------------------------------------------------------------------
def image_tag(dockerfile: str | Path, context: str | Path) -> str:
    """The content tag of a build: `rlvr-task-<12 hex digits>`.

    The digits are the SHA-256 of the Dockerfile and of every context entry's name, type,
    executable bit and content (symlinks: their target), in sorted order: same inputs, same tag.

    Raises:
        SandboxError: the Dockerfile or the context directory is missing.
    """
    dockerfile, context = Path(dockerfile), Path(context)
    if not dockerfile.is_file() or not context.is_dir():
        raise SandboxError(f"cannot build: {dockerfile} is not a file or {context} is not a directory")
    digest = hashlib.sha256(b"rlvr-image-v1\0dockerfile\0" + dockerfile.read_bytes() + b"\0")
    for path in sorted(context.rglob("*")):
        rel = path.relative_to(context).as_posix().encode()
        if path.is_symlink():
            digest.update(b"L\0" + rel + b"\0" + os.readlink(path).encode() + b"\0")
        elif path.is_dir():
            digest.update(b"D\0" + rel + b"\0")
        elif path.is_file():
            executable = b"x" if os.stat(path).st_mode & 0o111 else b"-"
            digest.update(b"F\0" + rel + b"\0" + executable + str(path.stat().st_size).encode() + b"\0")
            with path.open("rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
    return f"rlvr-task-{digest.hexdigest()[:12]}"


def _qualified(tag: str, kind: RuntimeKind) -> str:
    """Podman names local images `localhost/NAME`; say so, so that no registry is searched for a short name."""
    first = tag.split("/", 1)[0]
    if kind == "podman" and ("/" not in tag or ("." not in first and ":" not in first and first != "localhost")):
        return f"localhost/{tag}"
    return tag


def image_exists(image: str, *, runtime: str) -> bool:
    """True when `image` is in the container runtime's local store (never pulls)."""
    return run_cli([runtime, "image", "inspect", image], 60.0).returncode == 0


def image_config(image: str, runtime: str) -> dict[str, object]:
    """The image's `Config` (Env, WorkingDir, User, ...) from the local store.

    Raises:
        SandboxError: the image is not in the local store.
    """
    done = run_cli([runtime, "image", "inspect", "--format", "{{json .Config}}", image], 60.0)
    if done.returncode != 0:
        raise SandboxError(f"the image {image} is not in {runtime}'s local store (build it with `build_image`): "
                           f"{_text(done.stderr, 300)}")
    config = json.loads(done.stdout or b"null")
    return config if isinstance(config, dict) else {}


def image_env(image: str, *, runtime: str) -> dict[str, str]:
    """The image's ENV (its `Config.Env`), from the local store.

    Raises:
        SandboxError: the image is not in the local store.
    """
    out: dict[str, str] = {}
    items = image_config(image, runtime).get("Env") or []
    for item in items if isinstance(items, list) else []:
        name, _, value = str(item).partition("=")
        if name:
            out[name] = value
    return out


def build_image(dockerfile: str | Path, context: str | Path, *, runtime: str, tag: str | None = None,
                timeout_s: float = 1800, config: ContainerConfig | None = None) -> str:
    """Build `dockerfile` with build context `context` unless an image of that tag already exists.

    Args:
        dockerfile: the Dockerfile (it may lie outside `context`).
        context: the build context directory.
        runtime: container runtime CLI ('podman', 'docker' or a path).
        tag: image name; None: `image_tag(dockerfile, context)` (a content hash, so an unchanged
            task is built once and a changed one gets a new image).
        timeout_s: limit of the build, seconds (the build is killed at it).
        config: `oci_runtime` and `build_args` are used (podman RUN steps need the same OCI runtime
            workaround as `run`).

    Returns:
        The image reference to run (podman: `localhost/<tag>`).

    Raises:
        SandboxError: the container runtime does not work, the inputs are missing, or the build failed or
            timed out (the message ends with the build log's tail).
    """
    cfg = config or ContainerConfig()
    info = runtime_info(runtime)
    ref = _qualified(tag or image_tag(dockerfile, context), info.kind)
    with _BUILD_GUARD:
        lock = _BUILD_LOCKS.setdefault(ref, threading.Lock())
    with lock:
        if image_exists(ref, runtime=info.path):
            return ref
        argv = [info.path, *info.global_args(cfg.oci_runtime), "build", "-f", str(dockerfile), "-t", ref,
                *cfg.build_args, str(context)]
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                code: int | None = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                proc.wait()
                code = None
            log.seek(max(0, log.seek(0, os.SEEK_END) - 4000))
            tail = _text(log.read(), 4000)
        if code != 0:
            why = f"timed out after {timeout_s:g} s" if code is None else f"exit {code}"
            raise SandboxError(f"building {dockerfile} ({' '.join(argv)}) failed ({why}):\n{tail}")
        return ref
