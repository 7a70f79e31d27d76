"""In-sandbox session supervisor: the init (pid 1) of one persistent terminal sandbox.

Standalone (standard library only): bubblewrap starts it with `--as-pid-1` inside the sandbox,
where it cannot import rlvr. As the pid namespace's init it cannot be killed from inside the
namespace (the kernel drops SIGKILL/SIGSTOP sent to an init by its own namespace), it reaps every
orphan, and it is made non-dumpable, so the sandbox's other processes can neither ptrace it nor
open its file descriptors. The parent (`rlvr.sandbox.session`) talks to it over stdin/stdout,
one JSON object per line (replies to `finish` with `export` are followed by framed raw bytes):

- supervisor -> parent, once: `{"ready": true}`.
- parent -> supervisor: `{"op": ..., ...}`; every request gets exactly one reply line.
  - `extract` `{tar, dest}`: unpack a tar file (read-only mount) into `dest`.
  - `exec` `{command, cwd, env, timeout_s, max_output, limits, background}`: run
    `bash --noprofile --norc -c command` in a fresh process (stdin /dev/null, exactly `env`).
  - `shell` `{cwd, env, limits}`: start the persistent interactive bash on a pseudo-terminal.
  - `run` `{command, timeout_s, max_output}`: run `command` in the persistent shell (see below).
  - `pytest` `{args, cwd, env, site, timeout_s, max_output}`: run pytest in a forked child of
    this process (non-dumpable like it), JUnit report over a close-on-exec pipe to this process.
  - `read` `{path, max_bytes}`: a small file's bytes (e.g. a reward file); `list` `{path}`: names in a directory.
  - `finish` `{export, path, max_bytes}`: kill every other process of the sandbox, then send
    `path` as a tar stream (frames `{"chunk": n}` + n bytes, then `{"done": true, ...}`).

The persistent shell is `rlvr_session_shell.Shell`; process plumbing (reaping, rlimits, capped
output, killing every other process) is `rlvr_session_proc`, which takes its rlimits from the code
sandbox's `rlvr_supervisor`. The four files are copied side by side into the sandbox
(`rlvr.sandbox.session.SUPERVISOR_FILES`).
"""

import base64
import contextlib
import json
import os
import posixpath
import select
import signal
import socket
import sys
import tarfile
import time
from typing import Any

try:  # the host (type checking, tests) imports the package; the sandbox runs the files side by side
    from rlvr.sandbox.guest import rlvr_session_pytest
    from rlvr.sandbox.guest.rlvr_session_proc import (
        child_stdio,
        collect_output,
        finish_process,
        kill_others,
        memory_guard,
        orphans,
        reap_children,
        sandbox_pids,
        set_process_limits,
        spawn_process,
    )
    from rlvr.sandbox.guest.rlvr_session_shell import Shell
    from rlvr.sandbox.guest.rlvr_supervisor import make_nondumpable
except ImportError:  # pragma: no cover - inside the sandbox
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import rlvr_session_pytest  # type: ignore[import-not-found,no-redef]
    from rlvr_session_proc import (  # type: ignore[import-not-found,no-redef]
        child_stdio,
        collect_output,
        finish_process,
        kill_others,
        memory_guard,
        orphans,
        reap_children,
        sandbox_pids,
        set_process_limits,
        spawn_process,
    )
    from rlvr_session_shell import Shell  # type: ignore[import-not-found,no-redef]
    from rlvr_supervisor import make_nondumpable  # type: ignore[import-not-found,no-redef]


class _Channels:
    """Report channels of a test script: datagram socket pairs, one end at a fixed fd number in the script.

    Datagrams keep every write a message of its own, so two writers' bytes never merge into one
    value (a program's `1.` glued before the script's `0`); everything written is kept.
    """

    def __init__(self, fds: list[int]) -> None:
        self.pairs = {int(fd): socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for fd in fds}
        self.messages: dict[int, list[bytes]] = {fd: [] for fd in self.pairs}

    def child_fds(self) -> dict[int, int]:
        return {fd: theirs.fileno() for fd, (_mine, theirs) in self.pairs.items()}

    def close_child_ends(self) -> None:
        for _mine, theirs in self.pairs.values():
            theirs.close()

    def _receive(self, fd: int) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while len(self.messages[fd]) < 256:
                self.messages[fd].append(self.pairs[fd][0].recv(1 << 16, socket.MSG_DONTWAIT))

    def handlers(self) -> dict[int, Any]:
        return {mine.fileno(): (lambda _fd, fd=fd: self._receive(fd)) for fd, (mine, _t) in self.pairs.items()}

    def collect(self) -> dict[str, list[str]]:
        for fd, (mine, _theirs) in self.pairs.items():
            self._receive(fd)
            mine.close()
        return {str(fd): [base64.b64encode(m).decode() for m in msgs] for fd, msgs in self.messages.items()}


def _write_report(path: str, cwd: str, channel: bytes) -> None:
    """Write a run's JUnit XML (the channel's status lines removed) where the test script asked for it."""
    report = channel.split(b"\x00started\n", 1)[-1] if b"\x00started\n" in channel else b""
    target = path if path.startswith("/") else os.path.join(cwd, path)
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(target) or "/", exist_ok=True)
        with open(target, "wb") as f:
            f.write(report)


class _PytestServer:
    """A unix socket through which a test script's `pytest` commands run as `op_pytest` children of this process.

    The grader's `pytest` on the script's PATH is a client of this socket: each request runs pytest
    here, non-dumpable, its JUnit report on a close-on-exec pipe; the report stays in this process
    (`runs`), only pytest's output and exit status go back to the client. A program the script
    starts can ask for runs too, but never write a report: it can only add real runs.
    """

    def __init__(self, path: str, defaults: dict[str, Any]) -> None:
        self.path, self.defaults = path, defaults
        self.runs: list[dict[str, Any]] = []
        self.deadline = time.monotonic() + float(defaults.get("timeout_s", 60))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o777)
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.handlers: dict[int, Any] = {self.sock.fileno(): self._accept}

    def _read_request(self, conn: socket.socket) -> dict[str, Any]:
        """One request line, within 2 s in all (a client that dribbles bytes cannot hold the supervisor)."""
        limit = time.monotonic() + 2.0
        data = b""
        while b"\n" not in data and len(data) < 1 << 20:
            left = limit - time.monotonic()
            if left <= 0:
                raise TimeoutError("slow pytest client")
            conn.settimeout(left)
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        request: dict[str, Any] = json.loads(data.split(b"\n", 1)[0])
        return request

    def _trusted(self, args: list[str], cwd: str) -> bool:
        """Every test path of `args` (run in `cwd`) lies in the trusted tests directory (none given: cwd does)."""
        root = str(self.defaults.get("trusted_root") or "/")
        takes_value = set(self.defaults.get("value_options") or [])
        paths: list[str] = []
        skip = False
        for arg in args:
            if skip:
                skip = False
            elif arg.startswith("-"):
                skip = arg.split("=", 1)[0] in takes_value and "=" not in arg
            else:
                paths.append(arg.partition("::")[0])
        full = [posixpath.normpath(posixpath.join(cwd, p)) for p in paths or ["."]]
        return all(p == root or p.startswith(root.rstrip("/") + "/") for p in full)

    def _accept(self, _fd: int) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        try:
            request = self._read_request(conn)
            args, cwd = [str(a) for a in request.get("args") or []], str(request.get("cwd") or "/")
            left = self.deadline - time.monotonic()
            if not self._trusted(args, cwd):  # the agent's files: never run as the grader's tests
                reply = {"stdout": "", "stderr": "rlvr: the grader runs only the task's own tests (in "
                         f"{self.defaults.get('trusted_root')})\n", "exit_code": 4}
            elif left <= 1.0:
                reply = {"stdout": "", "stderr": "rlvr: the test script's time is up\n", "exit_code": 1}
            else:
                env = {**(request.get("env") or {}), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
                run = op_pytest({**self.defaults, "args": args, "cwd": cwd, "env": env,
                                 "timeout_s": min(float(self.defaults.get("timeout_s", 60)), left - 0.5)})
                self.runs.append({"args": args, "cwd": cwd, "report": run["report"], "exit_code": run["exit_code"],
                                  "signal": run["signal"], "timed_out": run["timed_out"]})
                if request.get("junitxml"):  # the script may read the report it asked for (its copy, not ours)
                    _write_report(str(request["junitxml"]), cwd, base64.b64decode(run["report"]))
                reply = {k: run[k] for k in ("stdout", "stderr", "exit_code")}
            conn.settimeout(2.0)
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except (OSError, ValueError):
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def op_exec(req: dict[str, Any], nice: int) -> dict[str, Any]:
    """Run one command of the request in a fresh process (rlimits, `nice`, capped output); the reply."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    server = _PytestServer(req["pytest_socket"], req.get("pytest_defaults") or {}) if req.get("pytest_socket") \
        else None
    channels = _Channels(req.get("report_fds") or [])
    deadline = start + float(req.get("timeout_s", 60))
    if server is not None:
        server.deadline = deadline
    pid = spawn_process(req["command"], req.get("cwd") or "/", req.get("env") or {}, req.get("limits") or {}, nice,
                 (out_w, err_w), keep=channels.child_fds())
    os.close(out_w)
    os.close(err_w)
    channels.close_child_ends()
    if req.get("background"):
        os.close(out_r)
        os.close(err_r)
        return {"pid": pid}
    stray: list[int] = []
    memory = int((req.get("limits") or {}).get("memory_total") or 0)

    def tick() -> None:  # a test script: whatever its programs leave running on their own is stopped at once
        for victim in orphans(keep=(pid,)):
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
            stray.append(victim)
        memory_guard(memory)

    handlers = {**(server.handlers if server is not None else {}), **channels.handlers()}
    (out, err), timed_out, status = collect_output(pid, [out_r, err_r], deadline, int(req.get("max_output", 1 << 16)),
                                             handlers or None, tick if server is not None else None)
    code, sig = finish_process(pid, None if timed_out else status)
    for fd in (out_r, err_r):
        os.close(fd)
    reply: dict[str, Any] = {"stdout": out.text(), "stderr": err.text(), "exit_code": code, "signal": sig,
                             "timed_out": timed_out, "elapsed_s": time.monotonic() - start}
    if channels.pairs:  # every message written to them, by the script and by anything it started
        reply["reports"] = channels.collect()
    if server is not None:  # before anything is read back: nothing the script started may write afterwards
        server.close()
        reply["killed"] = kill_others() + len(set(stray))
        reply["pytest_runs"] = server.runs
    return reply


def op_pytest(req: dict[str, Any]) -> dict[str, Any]:
    """The grader's pytest runner (`rlvr_session_pytest.main`) in a forked child (non-dumpable, like this process).

    The runner runs each test in a child of its own and writes its JUnit report over a
    close-on-exec pipe to this process.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()  # os.pipe() fds are close-on-exec: programs the tests start never get it
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            child_stdio(out_w, err_w)
            # a fork, not an exec: close-on-exec does not apply, so everything of the supervisor's (its pipes
            # to the host above all) is closed here; only the report channel stays
            os.closerange(3, res_w)
            os.closerange(res_w + 1, 1 << 16)
            os.chdir(req.get("cwd") or "/")
            os.environ.clear()
            os.environ.update(req.get("env") or {})
            set_process_limits(req.get("limits") or {}, int(req.get("nice", 0)))
            sys.stdout = os.fdopen(1, "w", encoding="utf-8", closefd=False)
            sys.stderr = os.fdopen(2, "w", encoding="utf-8", closefd=False)
            sys.argv = ["pytest"]
            os._exit(rlvr_session_pytest.main(req, res_w))
        finally:
            os._exit(125)
    for fd in (out_w, err_w, res_w):
        os.close(fd)
    for fd in (out_r, err_r, res_r):
        os.set_blocking(fd, False)
    cap = int(req.get("max_output", 1 << 16))
    (out, err, res), timed_out, status = collect_output(pid, [out_r, err_r, res_r],
                                                  start + float(req.get("timeout_s", 60)), max(cap, 1 << 22))
    code, sig = finish_process(pid, None if timed_out else status)
    for fd in (out_r, err_r, res_r):
        os.close(fd)
    report = bytes(res.head) + bytes(res.tail)
    return {"stdout": out.text()[-cap:], "stderr": err.text()[-cap:], "exit_code": code, "signal": sig,
            "timed_out": timed_out, "report": base64.b64encode(report).decode(), "report_dropped": res.dropped,
            "elapsed_s": time.monotonic() - start}


def _link_target(member: tarfile.TarInfo, dest: str) -> str:
    """Where a symlink member points once unpacked under `dest` (resolved lexically, `..` included)."""
    if member.linkname.startswith("/"):
        return posixpath.normpath(member.linkname)
    return posixpath.normpath(posixpath.join(dest, posixpath.dirname(member.name), member.linkname))


def op_extract(req: dict[str, Any]) -> dict[str, Any]:
    """Unpack a tar into `dest`; with `link_roots`, symbolic links pointing outside those roots are left out.

    Grading passes the working directory and the read-only system directories as `link_roots`: a
    link the agent made to /tests, /logs or /tmp would otherwise show the grader's own files (the
    expected outputs) in the agent's place.
    """
    dest = req["dest"]
    roots = [posixpath.normpath(r) for r in req.get("link_roots") or []]
    os.makedirs(dest, exist_ok=True)
    dropped = []
    with tarfile.open(req["tar"], "r:*") as tar:
        members = []
        for member in tar.getmembers():
            if member.issym() and roots:
                target = _link_target(member, dest)
                if not any(target == r or target.startswith(r.rstrip("/") + "/") for r in roots):
                    dropped.append(f"{member.name} -> {member.linkname}")
                    continue
            members.append(member)
        kwargs: dict[str, Any] = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
        tar.extractall(dest, members=members, **kwargs)
    if roots:  # and where each link really leads, through the others (`sub -> /usr`, `x -> sub/../tests/...`)
        dropped += _drop_escaping_links(dest, roots)
    return {"ok": True, "dropped_links": dropped}


def _drop_escaping_links(dest: str, roots: list[str]) -> list[str]:
    """Remove every symbolic link under `dest` whose real target (links followed) lies outside `roots`."""
    dropped: list[str] = []
    for _round in range(8):  # removing one link can redirect another through it: until nothing changes
        removed = 0
        for dirpath, dirnames, filenames in os.walk(dest):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    continue
                target = os.path.realpath(path)
                if not any(target == r or target.startswith(r.rstrip("/") + "/") for r in roots):
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                        dropped.append(f"{os.path.relpath(path, dest)} -> {target}")
                        removed += 1
        if not removed:
            break
    return dropped


def op_read(req: dict[str, Any]) -> dict[str, Any]:
    """Read up to `max_bytes` of the file at `path` (symlinks not followed); the reply."""
    path = req["path"]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return {"missing": True, "why": f"{type(exc).__name__}: {exc}"}
    try:
        data = os.read(fd, int(req.get("max_bytes", 1 << 16)))
    finally:
        os.close(fd)
    return {"data": base64.b64encode(data).decode()}


class _Framer:
    """File-like sink for tarfile's stream mode: every write becomes a `{"chunk": n}` frame on `out`."""

    def __init__(self, out: Any, limit: int) -> None:
        self.out, self.limit, self.sent = out, limit, 0

    def write(self, data: bytes) -> int:
        self.sent += len(data)
        if self.sent > self.limit:
            raise OSError(f"the workspace is larger than {self.limit} bytes")
        self.out.write(json.dumps({"chunk": len(data)}).encode() + b"\n")
        self.out.write(data)
        return len(data)

    def flush(self) -> None:
        self.out.flush()


def _add_tree(tar: tarfile.TarFile, root: str) -> None:
    """Add `root` to `tar` (as '.'), recording each entry's real mode even where it denies us reading.

    The agent may leave files or directories without read or search permission (mode 000); the
    owner (this process's uid) may change the mode, so such an entry is opened for a moment with
    the owner's read/search bit set and archived with the mode it had.
    """
    for dirpath, dirnames, filenames in os.walk(root, onerror=None):
        links = [name for name in dirnames if os.path.islink(os.path.join(dirpath, name))]
        for name in dirnames:  # make subdirectories listable before os.walk descends into them
            sub = os.path.join(dirpath, name)
            st = os.lstat(sub)
            if name not in links and st.st_mode & 0o500 != 0o500:
                os.chmod(sub, st.st_mode | 0o700)
                _ORIGINAL_MODES[sub] = st.st_mode
        filenames = links + filenames  # os.walk lists symlinks to directories as directories
        rel_dir = os.path.relpath(dirpath, root)
        info = tar.gettarinfo(dirpath, arcname="." if rel_dir == "." else f"./{rel_dir}")
        if dirpath in _ORIGINAL_MODES:
            info.mode = _ORIGINAL_MODES[dirpath] & 0o7777
        tar.addfile(info)
        for name in filenames:
            path = os.path.join(dirpath, name)
            found: tarfile.TarInfo | None = tar.gettarinfo(path, arcname=f"./{os.path.relpath(path, root)}")
            if found is None:  # a socket: not archivable
                continue
            info = found
            if not info.isreg():
                tar.addfile(info)
                continue
            mode = os.lstat(path).st_mode
            if not mode & 0o400:
                os.chmod(path, mode | 0o400)
            with open(path, "rb") as f:
                tar.addfile(info, f)


_ORIGINAL_MODES: dict[str, int] = {}


def op_finish(req: dict[str, Any], out: Any) -> None:
    """End the agent phase: kill every other process, then stream the tree at `path` as tar frames if asked."""
    killed = kill_others()
    if not req.get("export"):
        _reply(out, {"killed": killed})
        return
    framer = _Framer(out, int(req.get("max_bytes", 1 << 30)))
    error = ""
    try:
        with tarfile.open(fileobj=framer, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
            _add_tree(tar, req["path"])
    except (OSError, tarfile.TarError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    _reply(out, {"done": True, "killed": killed, "error": error})


def _reply(out: Any, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def serve(inp: Any, out: Any) -> None:  # noqa: C901 - one dispatch loop
    """Answer requests until stdin closes; keep the shell's background output drained meanwhile."""
    shell: Shell | None = None
    nice = 0
    buf = b""
    fd = inp.fileno()
    while True:
        watch = [fd] + ([shell.master, shell.err_r] if shell is not None else [])
        readable, _, _ = select.select(watch, [], [], 0.5)
        reap_children()
        if shell is not None:  # background jobs between commands are held to the same budgets
            shell.memory_notes += memory_guard(int(shell.limits.get("memory_total") or 0), keep=(shell.pid,))
        if shell is not None and readable and fd not in readable:
            shell.drain_background()
            continue
        if fd not in readable:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            req = json.loads(line)
            op = req.get("op")
            try:
                if op == "shell":
                    nice = int(req.get("nice", 0))
                    if shell is not None:
                        shell.stop()
                    shell = Shell(req.get("cwd") or "/", req.get("env") or {}, req.get("limits") or {}, nice)
                    reply: dict[str, Any] = {"ok": True}
                elif op == "run":
                    if shell is None:
                        reply = {"error": "no shell started"}
                    else:
                        reply = shell.run(req["command"], float(req.get("timeout_s", 60)),
                                          int(req.get("max_output", 1 << 16)))
                elif op == "exec":
                    reply = op_exec(req, int(req.get("nice", nice)))
                elif op == "pytest":
                    reply = op_pytest(req)
                elif op == "extract":
                    reply = op_extract(req)
                elif op == "read":
                    reply = op_read(req)
                elif op == "list":
                    path = req["path"]
                    reply = {"names": sorted(os.listdir(path)) if os.path.isdir(path) else []}
                elif op == "processes":
                    reply = {"count": len([p for p in sandbox_pids() if p != os.getpid()])}
                elif op == "reap_excess":
                    keep = (shell.pid,) if shell is not None else ()
                    reply = {"killed": kill_others(keep)}
                elif op == "finish":
                    if shell is not None:
                        shell.stop()
                        shell = None
                    op_finish(req, out)
                    continue
                else:
                    reply = {"error": f"unknown op {op!r}"}
            except Exception as exc:  # a failing request is reported, never fatal to the session
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            _reply(out, reply)


def main() -> None:
    """Become the sandbox's supervisor: non-dumpable, orphans reaped, requests served."""
    make_nondumpable()  # PR_SET_DUMPABLE = 0: no ptrace, no /proc/1/fd for the sandbox's other processes
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    out = os.fdopen(os.dup(1), "wb")
    inp = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    _reply(out, {"ready": True, "pid": os.getpid()})
    serve(inp, out)


if __name__ == "__main__":
    main()
