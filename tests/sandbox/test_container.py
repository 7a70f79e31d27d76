"""ContainerSession against a real container runtime (podman or docker), without any registry.

The base image is made from this host's own files: bash, coreutils and python3 with their shared
libraries and the Python standard library, packed into a tar and `import`ed (cached by a tag that
hashes the file list, so the suite builds it once per host). A task image is then built `FROM` it
with `build_image`, as a Terminal-Bench Dockerfile would be: a tool written outside the working
directory, `WORKDIR /app`, a `COPY`.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from rlvr.core.errors import SandboxError
from rlvr.sandbox.container import (
    ContainerConfig,
    ContainerSession,
    build_image,
    container_runtime,
    image_exists,
    image_tag,
    runtime_info,
)
from rlvr.sandbox.isolation import stage_dir
from rlvr.sandbox.session import Mount, SessionConfig

pytestmark = pytest.mark.slow

HOST_PYTHON = "/usr/bin/python3"

@pytest.fixture(scope="module")
def task_image(runtime: str, base_image: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    ctx = tmp_path_factory.mktemp("task")
    (ctx / "data.txt").write_text("from-the-image\n")
    (ctx / "Dockerfile").write_text(
        f"FROM {base_image}\n"
        "RUN printf '#!/bin/bash\\necho tool-ok \"$@\"\\n' > /usr/local/bin/mytool && chmod 755 /usr/local/bin/mytool\n"
        "ENV TASK_FLAVOUR=container\n"
        "WORKDIR /app\n"
        "COPY data.txt /app/data.txt\n")
    return build_image(ctx / "Dockerfile", ctx, runtime=runtime)


@pytest.fixture()
def session(task_image: str):
    s = ContainerSession(task_image, SessionConfig(processes=64)).start()
    s.start_shell()
    yield s
    s.close()


def _containers(runtime: str) -> list[str]:
    out = subprocess.run([runtime, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True)
    return out.stdout.split()


def _host_cmdlines_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(name))
            except OSError:
                pass
    return found


# -- container runtime and images ---------------------------------------------------------------
def test_runtime_probe_is_cached_and_usable(runtime):
    info = runtime_info(runtime)
    assert info.path == runtime and info.kind in ("podman", "docker")
    start = time.monotonic()
    assert container_runtime() == runtime and time.monotonic() - start < 0.05
    assert container_runtime("/nonexistent/podman") is None


def test_image_tag_hashes_dockerfile_and_context(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM x\n")
    (tmp_path / "a.txt").write_text("1")
    first = image_tag(tmp_path / "Dockerfile", tmp_path)
    assert re.fullmatch(r"rlvr-task-[0-9a-f]{12}", first) and image_tag(tmp_path / "Dockerfile", tmp_path) == first
    (tmp_path / "a.txt").write_text("2")
    second = image_tag(tmp_path / "Dockerfile", tmp_path)
    (tmp_path / "a.txt").chmod(0o755)
    assert len({first, second, image_tag(tmp_path / "Dockerfile", tmp_path)}) == 3
    with pytest.raises(SandboxError):
        image_tag(tmp_path / "missing", tmp_path)


def test_build_is_skipped_when_the_tag_exists_and_failures_show_the_log(runtime, task_image, base_image, tmp_path):
    assert image_exists(task_image, runtime=runtime)
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(f"FROM {base_image}\nRUN echo building-step-output && exit 3\n")
    with pytest.raises(SandboxError, match="building-step-output"):
        build_image(ctx / "Dockerfile", ctx, runtime=runtime, timeout_s=300)
    start = time.monotonic()
    (ctx / "Dockerfile").write_text(f"FROM {base_image}\nRUN true\n")
    tag = build_image(ctx / "Dockerfile", ctx, runtime=runtime)
    assert build_image(ctx / "Dockerfile", ctx, runtime=runtime) == tag and image_exists(tag, runtime=runtime)
    assert time.monotonic() - start < 120
    subprocess.run([runtime, "rmi", "-f", tag], capture_output=True, check=False)


# -- the session ---------------------------------------------------------------------------------
def test_shell_state_persists_and_the_image_is_the_machine(session):
    assert session.run("cd /tmp && export GREETING=hi && f() { echo fn-$1; }").exit_code == 0
    r = session.run("pwd; echo $GREETING; f x; mytool arg; cat /app/data.txt; echo $TASK_FLAVOUR")
    assert (r.stdout, r.exit_code) == ("/tmp\nhi\nfn-x\ntool-ok arg\nfrom-the-image\ncontainer\n", 0)
    r = session.run("echo out; echo err >&2; (exit 7)")
    assert (r.stdout, r.stderr, r.exit_code) == ("out\n", "err\n", 7)


def test_root_without_privileges_or_network(session):
    r = session.run("id -u; grep CapEff /proc/self/status; cat /proc/1/cmdline | tr '\\0' ' '")
    lines = r.stdout.splitlines()
    assert lines[0] == "0" and int(lines[1].split()[1], 16) == 0 and "rlvr_session.py" in lines[2]
    r = session.run("python3 -I -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\"")
    assert r.exit_code != 0 and "unreachable" in r.stderr.lower()


def test_timeout_interrupts_and_the_shell_survives(session):
    session.run("cd /tmp && export KEEP=1")
    r = session.run("sleep 30", timeout_s=1)
    assert r.timed_out and r.exit_code is None and r.elapsed_s < 10
    assert session.run("pwd; echo $KEEP").stdout == "/tmp\n1\n"


def test_exec_runs_a_clean_process(session):
    session.run("export ONLY_IN_SHELL=1")
    r = session.exec("echo ${ONLY_IN_SHELL:-unset}; pwd", cwd="/app")
    assert (r.stdout, r.exit_code) == ("unset\n/app\n", 0)


def test_mounts_and_pytest_op(task_image, tmp_path):
    stage = stage_dir("rlvr-test-in-")
    try:
        Path(stage, "test_ok.py").write_text("def test_one():\n    assert open('/app/data.txt').read() == "
                                             "'from-the-image\\n'\n")
        os.chmod(Path(stage, "test_ok.py"), 0o644)
        site = os.path.dirname(os.path.dirname(pytest.__file__))
        py = f"{sys.version_info.major}.{sys.version_info.minor}"
        version = "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"
        image_py = subprocess.run([HOST_PYTHON, "-c", version], capture_output=True, text=True).stdout.strip()
        mounts = [Mount("/run/rlvr/in", stage), Mount("/logs", kind="tmpfs", size_mb=8), Mount(site, site)]
        with ContainerSession(task_image, mounts=mounts) as s:
            assert s.list_dir("/run/rlvr/in") == ["test_ok.py"]
            assert s.exec("echo x > /logs/y && cat /logs/y").stdout == "x\n"
            if py != image_py:
                pytest.skip(f"this pytest is for Python {py}, the image's python3 is {image_py}")
            env = {**s.env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # as the grader runs it
            run = s.pytest(["/run/rlvr/in/test_ok.py", "-p", "no:cacheprovider", "-q"], site=[site], env=env,
                           timeout_s=60, trusted_root="/run/rlvr/in")
            assert run.started and run.exit_code == 0, (run.stdout, run.stderr, run.import_error)
            assert b'tests="1"' in run.report and b"failures=\"0\"" in run.report
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def test_finish_exports_image_files_and_agent_changes(session, tmp_path):
    session.run("echo agent > /app/new.txt && mkdir -p /app/sub && echo deep > /app/sub/f && rm /app/data.txt "
                "&& echo changed > /app/data.txt && sleep 1000 &")
    time.sleep(0.3)
    out = tmp_path / "ws.tar"
    killed = session.finish(export_to=out)
    assert killed >= 1
    with tarfile.open(out) as tar:
        names = set(tar.getnames())
        assert {"./data.txt", "./new.txt", "./sub/f"} <= names
        data = tar.extractfile("./data.txt")
        assert data is not None and data.read() == b"changed\n"


def test_close_leaves_no_process_and_no_container(runtime, task_image):
    s = ContainerSession(task_image).start()
    s.start_shell()
    marker = f"9{os.getpid()}7"
    s.run(f"sleep {marker} & (sleep {marker} &) ; true")
    pid1 = s.host_pid()
    assert pid1 is not None and _host_cmdlines_with(marker) and s.name in _containers(runtime)
    s.close()
    assert not _host_cmdlines_with(marker) and not os.path.exists(f"/proc/{pid1}")
    assert s.name not in _containers(runtime)
    assert s.run("true").error is not None  # a closed session never restarts
    s.close()  # idempotent


def test_a_dropped_session_removes_its_container(runtime, task_image):
    s = ContainerSession(task_image).start()
    name = s.name
    del s
    gc.collect()
    assert name not in _containers(runtime)


def test_an_image_without_python_names_the_fix(runtime, base_image, tmp_path):
    (tmp_path / "Dockerfile").write_text(f"FROM {base_image}\nRUN rm -f /usr/bin/python3*\n")
    tag = build_image(tmp_path / "Dockerfile", tmp_path, runtime=runtime)
    s = ContainerSession(tag, container=ContainerConfig())
    with pytest.raises(SandboxError, match=r"has no `python3`.*apt-get install"):
        s.start()
    assert s.name not in _containers(runtime)


def test_a_workdir_the_image_lacks_is_created(task_image, tmp_path):
    with ContainerSession(task_image, SessionConfig(workdir="/srv/work")) as s:
        s.start_shell()
        assert s.run("pwd; ls /app").stdout == "/srv/work\ndata.txt\n"
        s.run("echo x > made.txt")
        s.finish(export_to=tmp_path / "w.tar")
    with tarfile.open(tmp_path / "w.tar") as tar:
        assert "./made.txt" in tar.getnames()


def test_the_image_user_is_kept(runtime, base_image, tmp_path):
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base_image}\n"
        "RUN echo 'app:x:1000:1000::/home/app:/bin/bash' >> /etc/passwd && mkdir -p /home/app /app "
        "&& chown 1000:1000 /home/app /app\n"
        "USER app\nWORKDIR /app\n")
    tag = build_image(tmp_path / "Dockerfile", tmp_path, runtime=runtime)
    with ContainerSession(tag, SessionConfig(home="/home/app")) as s:
        s.start_shell()
        r = s.run("id -u; pwd; echo mine > f.txt && cat f.txt")
        assert r.stdout == "1000\n/app\nmine\n", r
        s.finish(export_to=tmp_path / "u.tar")
    with tarfile.open(tmp_path / "u.tar") as tar:
        assert tar.getmember("./f.txt").uid == 1000


def test_a_missing_image_is_an_error(runtime):
    with pytest.raises(SandboxError, match="not in"):
        ContainerSession("localhost/rlvr-no-such-image:none")
