"""SandboxSession against real bubblewrap: a persistent shell, limits, containment, export."""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

import pytest

from rlvr.sandbox.isolation import make_readable, stage_dir
from rlvr.sandbox.session import Mount, SandboxSession, SessionConfig

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")


@pytest.fixture()
def session():
    s = SandboxSession(SessionConfig(workdir_mb=16, tmp_mb=16, processes=64)).start()
    s.start_shell()
    yield s
    s.close()


def _host_procs_of(uid: int) -> set[int]:
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    out.add(int(name))
            except OSError:
                pass
    return out


def test_shell_state_persists(session):
    assert session.run("cd /tmp && export GREETING=hi && f() { echo fn-$1; }").exit_code == 0
    r = session.run("pwd; echo $GREETING; f x")
    assert (r.stdout, r.exit_code) == ("/tmp\nhi\nfn-x\n", 0)


def test_stdout_stderr_exit_code(session):
    r = session.run("echo out; echo err >&2; (exit 7)")
    assert (r.stdout, r.stderr, r.exit_code, r.timed_out) == ("out\n", "err\n", 7, False)
    assert session.run("printf 'no newline'").stdout == "no newline"


def test_looks_like_root_in_app_without_privileges(session):
    r = session.run("id -u; pwd; grep CapEff /proc/self/status; touch /usr/x 2>&1; ls / >/dev/null; echo $HOME")
    lines = r.stdout.splitlines()
    assert lines[0] == "0" and lines[1] == "/app" and int(lines[2].split()[1], 16) == 0
    assert "Read-only file system" in r.stdout and lines[-1] == "/root"
    r = session.run("python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\"")
    assert r.exit_code != 0 and "unreachable" in r.stderr.lower()


def test_timeout_interrupts_and_the_shell_survives(session):
    session.run("cd /tmp && export KEEP=1")
    for command in ("sleep 30", "while true; do :; done", "cat", "trap '' INT; sleep 30"):
        r = session.run(command, timeout_s=1.0)
        assert r.timed_out and r.exit_code is None, command
        assert r.elapsed_s < 6
    session.run("trap - INT")
    assert session.run("pwd; echo $KEEP").stdout == "/tmp\n1\n"


def test_stuck_shell_is_replaced(session):
    # The shell ignores Ctrl-C from a command of its own, before the loop starts: with both in one command a
    # Ctrl-C could arrive before the shell reached `trap` and end the loop normally (it did beside other jobs,
    # even with 3 s to reach it).
    assert session.run("trap '' INT").exit_code == 0
    r = session.run("while true; do :; done", timeout_s=1.0)
    assert r.timed_out and any("new shell" in n for n in r.notes)
    assert session.run("echo back").stdout == "back\n"


def test_exit_and_kill_restart_the_shell(session):
    for command in ("exit 3", "kill -9 $$", "set -e; false"):
        r = session.run(command)
        assert any("shell exited" in n for n in r.notes), (command, r)
        assert session.run("echo ok").stdout == "ok\n"
    assert session.run("exit 3").exit_code == 3


def test_syntax_error_is_confined_to_the_command(session):
    r = session.run('echo "unterminated')
    assert r.exit_code == 2 and "unexpected EOF" in r.stderr
    assert session.run("echo fine").stdout == "fine\n"


def test_output_is_capped_head_and_tail(session):
    r = session.run("seq 1 200000")
    assert r.stdout.startswith("1\n2\n") and r.stdout.rstrip().endswith("200000")
    assert r.dropped_bytes > 1_000_000 and "bytes omitted" in r.stdout
    r = session.run("yes", timeout_s=1.0)
    assert r.timed_out and len(r.stdout) < 40_000


def test_background_output_reaches_a_later_command(session):
    session.run("(sleep 0.3; echo late) &")
    assert "late" in session.run("sleep 0.8; echo now").stdout


def test_init_cannot_be_killed_and_is_not_readable(session):
    r = session.run("kill -9 1; echo sent; ls /proc/1/fd 2>&1 | head -1; cat /proc/1/environ 2>&1 | head -c 80")
    assert "sent" in r.stdout and "Permission denied" in r.stdout
    assert session.run("echo alive").stdout == "alive\n"
    r = session.run("sleep 100 & kill -9 -1; sleep 0.2; jobs -r | wc -l")  # kill(2) spares the caller and init
    assert r.stdout.strip() == "0" and not r.notes
    assert session.run("echo still").stdout == "still\n"


def test_fork_bomb_is_contained(session):
    before = len(_host_procs_of(65534)) if os.geteuid() == 0 else 0
    session.run(":(){ :|:& };:", timeout_s=3.0)
    r = session.run("sleep 1; echo done", timeout_s=20.0)
    assert "done" in r.stdout
    assert session.run("echo responsive").stdout == "responsive\n"
    session.finish()
    if os.geteuid() == 0:
        assert len(_host_procs_of(65534)) <= before + 5


def test_disk_filler_stays_in_its_tmpfs(session):
    free = shutil.disk_usage("/tmp").free
    r = session.run("dd if=/dev/zero of=/app/fill bs=1M count=200 2>&1 | head -1; "
                    "dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1 | head -1")
    assert r.stdout.count("No space left on device") == 2, r
    assert int(session.run("du -sm /app | cut -f1").stdout) <= 16
    assert shutil.disk_usage("/tmp").free > free - (64 << 20)


def test_finish_kills_everything_and_exports_the_tree(session, tmp_path):
    session.run("mkdir -p d/sub && echo data > d/sub/f && ln -s d/sub link && ln -s /usr/bin/env abs && "
                "echo s > secret && chmod 000 secret && mkdir closed && chmod 000 closed")
    session.run("nohup sleep 300 >/dev/null 2>&1 & setsid sleep 300 & (sleep 300 &) ; disown -a")
    assert session.request({"op": "processes"}, 10)["count"] >= 3
    out = tmp_path / "ws.tar"
    killed = session.finish(export_to=out)
    assert killed >= 2
    assert session.request({"op": "processes"}, 10)["count"] == 0
    with tarfile.open(out) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert members["./d/sub/f"].isfile() and members["./link"].issym() and members["./link"].linkname == "d/sub"
    assert members["./abs"].linkname == "/usr/bin/env"
    assert members["./secret"].mode & 0o777 == 0 and members["./closed"].mode & 0o777 == 0


def test_exec_runs_a_clean_process_and_extract_reads_mounts():
    stage = Path(stage_dir("rlvr-test-"))  # readable by the sandbox's host uid (pytest's tmp_path is not, as root)
    (stage / "f.txt").write_text("mounted\n")
    with tarfile.open(stage / "seed.tar", "w") as tar:
        tar.add(stage / "f.txt", arcname="seeded.txt")
    make_readable(str(stage))
    with SandboxSession(mounts=[Mount("/run/rlvr/in", str(stage))], env={"ONLY": "this"}) as s:
        s.extract("/run/rlvr/in/seed.tar")
        r = s.exec("cat /app/seeded.txt /run/rlvr/in/f.txt; echo $ONLY; touch /run/rlvr/in/x 2>&1 | tail -1",
                   env={"PATH": "/usr/bin:/bin", "ONLY": "clean"})
        assert r.stdout.splitlines()[:3] == ["mounted", "mounted", "clean"] and "Read-only" in r.stdout
        assert s.exec("sleep 5", timeout_s=0.5).timed_out
    shutil.rmtree(stage)


def test_memory_of_all_processes_together_is_capped():
    with SandboxSession(SessionConfig(memory_total_mb=600)) as s:
        s.start_shell()
        hog = "python3 -c 'x = bytearray(300 << 20); import time; time.sleep(30)'"
        r = s.run(f"for i in 1 2 3; do {hog} & done; sleep 3; jobs -r | wc -l", timeout_s=20)
        assert r.stdout.strip() == "1" and sum("memory exceeded 600 MiB" in n for n in r.notes) == 2, r
        assert s.run("echo alive").stdout == "alive\n"


# the grading runner's guard (`rlvr.sandbox.guest.rlvr_session_pytest._guard`), in a forked child of this process
GUARD_DENIED = {
    "proc-mem": "open('/proc/self/mem', 'rb')",
    "proc-mem-of-the-thread": "open('/proc/thread-self/mem', 'rb')",
    "str-subclass": "class S(str):\n    pass\nopen(S('/proc/self/mem'), 'rb')",
    "bytes-subclass": "class B(bytes):\n    pass\nopen(B(b'/proc/self/mem'), 'rb')",
    "own-path-object": "class P:\n    n = 0\n    def __fspath__(self):\n        P.n += 1\n"
                       "        return '/proc/self/mem' if P.n % 2 else '/tmp'\nopen(P(), 'rb')",
    "own-path-object-os-open": "import os\nclass P:\n    n = 0\n    def __fspath__(self):\n        P.n += 1\n"
                               "        return '/proc/self/mem' if P.n % 2 else '/tmp'\nos.open(P(), os.O_RDONLY)",
    "patched-pathlib": "import pathlib\npathlib.PosixPath.__fspath__ = lambda self: '/proc/self/mem'\n"
                       "open(pathlib.Path('/tmp'), 'rb')",
    "link-to-mem": "import os, tempfile\nd = tempfile.mkdtemp()\nos.symlink('/proc/self/mem', d + '/m')\n"
                   "open(d + '/m', 'rb')",
    "proc-dir-fd": "import os\nfd = os.open('/proc/self', os.O_RDONLY)\nos.open('mem', os.O_RDONLY, dir_fd=fd)",
    "chdir-proc": "import os\nos.chdir('/proc/self')\nopen('mem', 'rb')",
    "gc-objects": "import gc\ngc.get_objects()",
    "gc-referrers": "import gc\ngc.get_referrers(gc)",
    "other-threads-frames": "import sys\nsys._current_frames()",
    "tracer": "import sys\nsys.settrace(lambda *a: None)",
    "profiler": "import sys\nsys.setprofile(lambda *a: None)",
    "ctypes-memory": "import ctypes\nctypes.string_at(id(ctypes), 8)",
    "another-hook": "import sys\nsys.addaudithook(lambda *a: None)",
}
GUARD_ALLOWED = {
    "plain-files": "import pathlib, tempfile\nd = tempfile.mkdtemp()\npathlib.Path(d, 'x').write_text('1')\n"
                   "open(d + '/x').read()\nopen(pathlib.Path(d) / 'x').read()",
    "proc-status": "open('/proc/self/status').read()\nopen('/proc/meminfo').read()",
    "dir-entries": "import os\n[open(e).close() for e in os.scandir('/etc') if e.is_file() and e.name == 'hostname']",
    "imports-and-threads": "import json, decimal, threading\nt = threading.Thread(target=json.dumps, args=([1],))\n"
                           "t.start()\nt.join()",
}


def _guarded(source: str) -> int:
    from rlvr.sandbox.guest.rlvr_session_pytest import _guard

    pid = os.fork()
    if pid == 0:
        try:
            import sys

            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            sys.addaudithook(_guard([], None))
            exec(compile(source, "<agent>", "exec"), {"__name__": "agent"})
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.parametrize("name", sorted(GUARD_DENIED))
def test_the_graders_guard_ends_a_test_child_that_reaches_for_its_memory(name):
    from rlvr.sandbox.guest.rlvr_session_pytest import DENIED_EXIT

    assert _guarded(GUARD_DENIED[name]) == DENIED_EXIT


@pytest.mark.parametrize("name", sorted(GUARD_ALLOWED))
def test_the_graders_guard_lets_ordinary_code_run(name):
    assert _guarded(GUARD_ALLOWED[name]) == 0
