"""In-sandbox supervisor: a warm Python process that runs each job in a fresh forked child.

Standalone (standard library only): it is executed *inside* the sandbox by the sandbox's Python,
which cannot import rlvr. The parent (`rlvr.sandbox.pool`) talks to it over stdin/stdout, one
JSON object per line:

- supervisor -> parent, once at start: `{"ready": true, "pid_namespace": bool}`.
- parent -> supervisor, per job: `{"program": str, "prelude": str (optional; trusted code run once
  per supervisor, whose namespace each job's program starts from; sent once, later jobs send only
  its "prelude_key"), "files": {name: text}, "stdin": base64,
  "timeout_s": float, "limits": {...}, "env": {...}, "max_output": int}`.
- supervisor -> parent, per job: `{"exit_code", "signal", "timed_out", "output_limited",
  "stdout", "stderr", "result" (base64), "elapsed_s"}`.

Each job runs in a child forked from this process: new session, fresh job directory, rlimits
(CPU, address space, file size, open files, processes) set before the program starts, output
read concurrently with a byte cap, a wall-clock deadline after which the child's process group
is killed. The supervisor itself never runs job code; it is made non-dumpable, so processes of
the same uid can neither ptrace it nor read its memory. With a private pid namespace, every
process left behind by a job (daemons, fork bombs) is killed with `kill(-1, SIGKILL)` after it.

Standard-library modules named in `$RLVR_PRELOAD` (comma-separated) are imported once at start.
Run `python rlvr_supervisor.py --once` to run a single job read from stdin (one-shot mode).
"""

import base64
import contextlib
import ctypes
import gc
import json
import os
import resource
import select
import shutil
import signal
import sys
import time
from typing import Any

_LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "address_space": resource.RLIMIT_AS,
    "file_size": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
    "processes": resource.RLIMIT_NPROC,
}


def libc() -> Any:
    """The C library handle, opened once (children inherit it through fork instead of re-opening it)."""
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


_LIBC: Any = None


def make_nondumpable() -> None:
    """Mark this process not dumpable: no core file, and its memory closed to ptrace and /proc/PID/mem of others."""
    with contextlib.suppress(Exception):
        libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4


def _pdeathsig() -> None:
    with contextlib.suppress(Exception):
        libc().prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1


_WARM_SOURCE = """
import sys
def _f(a, *b, c=1, **d):
    return [x for x in a if x], {k: v for k, v in d.items()}, (lambda y: y)(c)
class _C:
    def m(self):
        return f"{self!r:>3}"
assert _f([1, 0], c=2)[2] == 2
"""


def _warm() -> None:
    """Initialise, once in the supervisor, the interpreter state every job would otherwise build itself.

    A forked child that compiles its first program, opens its first text stream or loads the C
    library pays for lazily built parser, codec and ctypes state (about 2-3 ms per job, measured
    with `benchmarks/code_verifier.py`'s pool latency); done here, each child inherits it.
    """
    exec(compile(_WARM_SOURCE, "<warm>", "exec"), {"__name__": "__warm__"})
    with os.fdopen(os.open(os.devnull, os.O_WRONLY), "w", encoding="utf-8") as stream:
        stream.write("")
    with os.fdopen(os.open(os.devnull, os.O_RDONLY), "r", encoding="utf-8", errors="replace") as stream:
        stream.read()
    libc()


def set_rlimits(limits: dict[str, Any]) -> None:
    """Apply `limits` (names of `_LIMITS` -> values, None: unset) to this process, and no core files."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in limits.items():
        if value is None or name not in _LIMITS:
            continue
        kind = _LIMITS[name]
        _soft, hard = resource.getrlimit(kind)
        new = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (new, new))


_PRELUDES: dict[str, Any] = {}
_PRELUDE_KEYS: dict[str, str] = {}  # key the parent names a prelude by (after sending it once) -> source


def _prelude(source: str) -> Any:
    """A prelude's namespace, built once per supervisor: compiled and run here, before any fork.

    Each job's child starts from its own copy-on-write copy of the namespace, so a job can change
    it without the next job seeing the change. The prelude is the parent's (trusted) code, never
    the job's program. A prelude that raises is kept as source and run in each child instead, where
    its error reaches the job's stderr.
    """
    namespace = _PRELUDES.get(source)
    if namespace is None:
        namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        try:
            exec(compile(source, "<prelude>", "exec"), namespace)
        except Exception:
            namespace = source
        _PRELUDES[source] = namespace
    return namespace


def _child(job: dict[str, Any], work: str, fds: tuple[int, int, int, int]) -> None:
    """In the forked child: wire fds, limits, then exec the program. Never returns."""
    stdin_r, out_w, err_w, res_w = fds
    try:
        os.setsid()
        _pdeathsig()
        os.dup2(stdin_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        target = int(job.get("result_fd", 3))
        if res_w != target:
            os.dup2(res_w, target)
            os.close(res_w)
        os.set_inheritable(target, True)
        os.closerange(3, target)  # nothing of the supervisor's (its job/reply pipes, /dev/null) reaches the job
        os.closerange(target + 1, 1 << 20)
        os.chdir(work)
        env = dict(job.get("env") or {})
        env["RLVR_RESULT_FD"] = str(target)
        os.environ.clear()
        os.environ.update(env)
        set_rlimits(job.get("limits") or {})
        sys.argv = ["main.py"]
        sys.path.insert(0, work)
        sys.stdin = os.fdopen(0, "r", encoding="utf-8", errors="replace", closefd=False)
        sys.stdout = os.fdopen(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = os.fdopen(2, "w", encoding="utf-8", closefd=False)
        code = compile(job["program"], os.path.join(work, "__main__.py"), "exec")
        prelude = _prelude(job["prelude"]) if job.get("prelude") else None
        namespace = prelude if isinstance(prelude, dict) else {"__name__": "__main__", "__builtins__": __builtins__}
        try:
            if isinstance(prelude, str):
                exec(compile(prelude, "<prelude>", "exec"), namespace)
            exec(code, namespace)
            status = 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            status = 1
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status & 0xFF)
    except BaseException:
        os._exit(125)


def _collect(pid: int, fds: tuple[int, int, int, int], stdin_data: bytes, deadline: float, cap: int) -> Any:  # noqa: C901 - one select loop
    """Feed stdin and read stdout/stderr/result concurrently until EOF, the deadline or the cap."""
    stdin_w, out_r, err_r, res_r = fds
    bufs = {out_r: bytearray(), err_r: bytearray(), res_r: bytearray()}
    open_fds = set(bufs)
    pending = memoryview(stdin_data)
    writers = [stdin_w] if pending else []
    if not pending:
        os.close(stdin_w)
    timed_out = limited = False
    status = None
    exited_at = 0.0
    while open_fds:
        now = time.monotonic()
        wait = deadline - now
        if wait <= 0:
            timed_out = True
            break
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status, exited_at = st, now
        elif now - exited_at > 0.2:
            break  # the program exited; a leftover descendant holds a pipe open: stop waiting for it
        readable, writable, _ = select.select(list(open_fds), writers, [], min(wait, 0.05))
        if writable:
            try:
                n = os.write(stdin_w, pending[:65536])
                pending = pending[n:]
            except OSError:
                pending = pending[:0]
            if not pending:
                os.close(stdin_w)
                writers = []
        for fd in readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            room = cap - len(bufs[fd])
            bufs[fd] += chunk[:room]
            if len(chunk) > room:
                limited = True
        if limited:
            break
    if writers:
        os.close(stdin_w)
    return bufs[out_r], bufs[err_r], bufs[res_r], timed_out, limited, status


def _kill_job(pid: int, pid_namespace: bool) -> bool:
    """Kill the job's process group and, in a pid namespace, every other process; False if some survived."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    if pid_namespace:  # everything in this namespace but pid 1 and us: leftovers, daemons, bombs
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                return True  # ESRCH: nothing left to signal
            _reap_orphans()
            time.sleep(0.002)
        return False
    return True


def _reap_orphans() -> None:
    """As the namespace's init (unshare --fork makes us pid 1), reap the orphans we adopted."""
    if os.getpid() == 1:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass


def _reap(pid: int, deadline: float) -> int:
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            _done, status = os.waitpid(pid, 0)
            return status
        time.sleep(0.001)


def _clean(path: str) -> None:
    if os.path.isdir(path):
        for root, dirs, _files in os.walk(path):
            for d in dirs:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(root, d), 0o700)
        shutil.rmtree(path, ignore_errors=True)


def _empty_dir(path: str) -> None:
    """Make `path` an empty private directory, reusing it when it already is one.

    Reuse matters: removing and re-creating the directory costs a journal update per job on a
    disk file system (about 2 ms on ext4 here), while an empty directory needs only a listing.
    """
    st = os.lstat(path) if os.path.lexists(path) else None
    if st is None or not os.path.isdir(path) or os.path.islink(path):
        if st is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
        os.makedirs(path, mode=0o700)
        return
    if st.st_mode & 0o7777 != 0o700:
        os.chmod(path, 0o700)
    _remove_entries(path)


def _remove_entries(path: str) -> None:
    """Remove everything inside the directory `path` (subdirectories made writable first), keeping `path`."""
    for name in os.listdir(path):
        child = os.path.join(path, name)
        if os.path.isdir(child) and not os.path.islink(child):
            _clean(child)
        else:
            with contextlib.suppress(OSError):
                os.unlink(child)


def run_job(job: dict[str, Any], base: str, pid_namespace: bool) -> dict[str, Any]:
    """Run one job in a forked child; return the reply dict."""
    work = os.path.join(base, "job")
    _empty_dir(work)
    for name, text in (job.get("files") or {}).items():
        path = os.path.join(work, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        for fd in (stdin_w, out_r, err_r, res_r):
            os.close(fd)
        _child(job, work, (stdin_r, out_w, err_w, res_w))
    for fd in (stdin_r, out_w, err_w, res_w):
        os.close(fd)
    deadline = start + float(job.get("timeout_s", 10.0))
    stdin_data = base64.b64decode(job.get("stdin") or "")
    out, err, res, timed_out, limited, status = _collect(
        pid, (stdin_w, out_r, err_r, res_r), stdin_data, deadline, int(job.get("max_output", 1 << 20)))
    if timed_out or limited:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)  # reaped next; leftovers elsewhere go in _kill_job
    if status is None:
        status = _reap(pid, max(deadline, time.monotonic()) + 0.5)
    elapsed = time.monotonic() - start
    clean = _kill_job(pid, pid_namespace)  # a job's leftovers never outlive it
    _reap_orphans()
    for fd in (out_r, err_r, res_r):
        os.close(fd)
    _empty_dir(work)
    _clean_tmp()
    return {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "output_limited": limited,
        "stdout": base64.b64encode(bytes(out)).decode(),
        "stderr": base64.b64encode(bytes(err)).decode(),
        "result": base64.b64encode(bytes(res)).decode(),
        "elapsed_s": elapsed,
        "clean": clean,
    }


def _clean_tmp() -> None:
    """Wipe what a job may leave for the next one: /tmp, and under bubblewrap /dev/shm and System V IPC objects."""
    tmp = os.environ.get("RLVR_SANDBOX_TMP")
    if tmp and os.path.isdir(tmp):
        _remove_entries(tmp)
    shm = os.environ.get("RLVR_SANDBOX_SHM")  # set only where /dev/shm and the IPC namespace are this sandbox's own
    if shm and os.path.isdir(shm):
        _remove_entries(shm)
        _remove_sysv_ipc()


def _remove_sysv_ipc() -> None:
    """Remove every System V shared-memory segment, semaphore set and message queue of this IPC namespace."""
    for kind, call in (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl")):
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                ids = [int(line.split()[1]) for line in f.read().splitlines()[1:] if line.strip()]
        except (OSError, ValueError, IndexError):
            continue
        for ident in ids:
            with contextlib.suppress(Exception):
                if kind == "sem":
                    libc().semctl(ident, 0, 0)  # IPC_RMID = 0
                else:
                    getattr(libc(), call)(ident, 0, None)


def main() -> None:
    """Serve jobs from stdin (or run exactly one with --once)."""
    make_nondumpable()
    for name in os.environ.get("RLVR_PRELOAD", "").split(","):
        if name:  # warm standard-library modules: children find them in sys.modules
            with contextlib.suppress(ImportError):
                __import__(name)
    _warm()
    gc.collect()
    gc.freeze()  # keep the warm heap out of the children's garbage collections (fewer copy-on-write faults)
    once = "--once" in sys.argv
    pid_namespace = os.getpid() <= 3
    base = os.getcwd()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    inp = os.fdopen(os.dup(0), "r", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    if not once:
        out.write(json.dumps({"ready": True, "pid_namespace": pid_namespace}) + "\n")
        out.flush()
    for line in inp:
        if not line.strip():
            continue
        job = json.loads(line)
        key = job.get("prelude_key")
        if job.get("prelude"):
            _prelude(job["prelude"])  # in the supervisor, so the children need not compile or run it
            if key:
                _PRELUDE_KEYS[key] = job["prelude"]
        elif key:
            if key not in _PRELUDE_KEYS:
                return  # a prelude we never received: exit, the parent retries in a fresh worker
            job["prelude"] = _PRELUDE_KEYS[key]
        reply = run_job(job, base, pid_namespace)
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if once or not reply["clean"]:
            return  # leftovers we could not kill: exit, so the parent tears the whole sandbox down


if __name__ == "__main__":
    main()
