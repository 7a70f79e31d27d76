"""Every writable mount of a bubblewrap sandbox has a size, and pooled jobs leave nothing behind.

Issue 20: bubblewrap's `--dev` is an uncapped tmpfs; a code job wrote 2 GiB to `/dev/shm`, the
memory stayed taken after the job and the next job on the same warm worker saw the files; in a
terminal session `df` showed `/dev` as a 12 G tmpfs and an agent wrote 1 GiB to `/dev/shm`.
Variants: `/dev` itself, `/tmp`, the work directory, a one-shot run's work directory, System V
shared memory left for the next job.
"""

from __future__ import annotations

import pytest

from rlvr.sandbox import LocalSandbox
from rlvr.sandbox.isolation import find_bwrap

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap missing (apt install bubblewrap)")

FILL = r'''
import errno, os, sys
def fill(directory):
    """MiB written in 4 MiB files (each under the file-size rlimit) until the mount is full."""
    total = 0
    for i in range(1000):
        try:
            with open(os.path.join(directory, f"fill{i}"), "wb") as f:
                for _ in range(4):
                    f.write(b"x" * (1 << 20))
                    total += 1
        except OSError as e:
            return total, errno.errorcode[e.errno]
    return total, "no limit"
for d in sys.argv[1:] or ("/dev/shm", "/tmp", "."):
    print(d, *fill(d))
try:
    open("/dev/rlvr-probe", "w")
    print("/dev writable")
except OSError as e:
    print("/dev", errno.errorcode[e.errno])
'''

LEAVE = r'''
import ctypes, os
for d in ("/dev/shm", "/tmp", "."):
    with open(os.path.join(d, "left-behind"), "w") as f:
        f.write("secret")
libc = ctypes.CDLL(None, use_errno=True)
segment = libc.shmget(0, 1 << 20, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
print("segment", segment, ctypes.get_errno())
try:
    os.memfd_create("ram")
    print("memfd created")
except OSError as e:
    print("memfd", e.errno)
'''

LOOK = r'''
import os
print(sorted(os.listdir("/dev/shm")), sorted(os.listdir("/tmp")), sorted(os.listdir(".")))
print(len(open("/proc/sysvipc/shm").read().splitlines()) - 1)
'''


@pytest.fixture(scope="module")
def box():
    b = LocalSandbox(isolation="bwrap", pool_size=1, timeout_s=30, shm_mb=8, tmpfs_mb=12, work_mb=16)
    yield b
    b.close()


def _sizes(stdout: bytes) -> dict[str, tuple[str, ...]]:
    return {line.split()[0]: tuple(line.split()[1:]) for line in stdout.decode().splitlines() if line.strip()}


def test_pooled_job_cannot_fill_dev_shm_tmp_or_work_past_their_sizes(box):
    result = box.run_python(FILL)
    sizes = _sizes(result.stdout)
    assert result.exit_code == 0, result.stderr
    assert sizes["/dev/shm"] == ("8", "ENOSPC") and sizes["/tmp"] == ("12", "ENOSPC"), sizes
    assert int(sizes["."][0]) <= 16 and sizes["."][1] == "ENOSPC", sizes
    assert sizes["/dev"] == ("EROFS",), sizes


def test_next_pooled_job_on_the_same_worker_sees_nothing(box):
    left = box.run_python(LEAVE)
    import errno

    from rlvr.sandbox.isolation import seccomp_filter

    assert left.exit_code == 0, left.stderr
    if seccomp_filter() is not None:  # RAM outside every cap: refused (a segment counts in RLIMIT_AS only attached)
        assert left.stdout.decode().splitlines() == [f"segment -1 {errno.EPERM}", f"memfd {errno.EPERM}"], left.stdout
    seen = box.run_python(LOOK)
    assert seen.stdout.decode().splitlines() == ["[] [] []", "0"], seen.stdout


def test_one_shot_run_gets_its_files_in_a_capped_work_directory():
    box = LocalSandbox(isolation="bwrap", pool_size=0, timeout_s=30, shm_mb=8, tmpfs_mb=8, work_mb=8)
    result = box.run([box.python, "fill.py", "."], files={"fill.py": FILL, "data/in.txt": "kept"})
    assert result.exit_code == 0, result.stderr
    assert _sizes(result.stdout)["."][1] == "ENOSPC" and int(_sizes(result.stdout)["."][0]) <= 8
    again = box.run(["/bin/sh", "-c", "cat data/in.txt && echo more >> data/in.txt && cat data/in.txt"],
                    files={"data/in.txt": "kept\n"})
    assert again.stdout == b"kept\nkept\nmore\n", again.stderr


def test_terminal_session_dev_shm_is_capped_and_dev_read_only():
    from rlvr.sandbox.session import _SHM_MB, SandboxSession

    with SandboxSession() as session:
        session.start_shell()
        out = session.run("df -m /dev/shm | tail -1; dd if=/dev/zero of=/dev/shm/f bs=1M count=200 2>&1 | tail -1;"
                          " touch /dev/probe 2>&1; echo x > /dev/null && echo null-ok").stdout
    lines = out.splitlines()
    assert int(lines[0].split()[1]) == _SHM_MB, out
    assert f"{_SHM_MB} MiB) copied" in out and "Read-only file system" in out and lines[-1] == "null-ok", out
