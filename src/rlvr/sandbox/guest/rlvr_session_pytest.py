"""The grader's pytest in the grading sandbox: each test in a forked child, judged by a parent running no agent code.

Standard library only (plus the grader's pytest), like the supervisor: it runs inside the sandbox.
`rlvr_session.op_pytest` forks the *runner* (`main`), which:

1. imports the grader's pytest with a clean path: the standard library first, then the grader's
   site and the system's packages; the task's `PYTHONPATH` goes in only afterwards, right after
   the standard library, so a workspace `pprint.py`, `json.py` or `argparse.py` never shadows a
   module pytest (or the runner) uses, and the workspace's own modules come before any copy in
   the grader's site or the system's packages (a host copy of the module under test is never
   what the tests import). A failure to import pytest here is the grader's (`error`);
2. compiles every Python file of the trusted tests directory itself (pytest's assertion
   rewriting, plus two marker statements: `sys.audit("rlvr.module")` as the module's first
   statement and `sys.audit("rlvr.done")` after the last statement of every function, before each
   of its `return`s), each marker on a line number no source line has;
3. becomes a child subreaper, forks one child to collect the test ids, then one fresh child per
   test. It never imports a test module or anything of the agent's: no code of the agent's ever
   runs in it, so nothing the agent wrote can change what it records.

Each test child, before pytest loads anything of the task's: reads a 32-byte key the runner makes
only after the fork (so no earlier child, and no frame the child inherited, ever held it), then
installs two audit hooks (`sys.addaudithook`: they cannot be removed). The child's imports of the
trusted test files are served from the runner's compiled code (a meta-path finder). The *signer*
holds the key in its closure and writes `HMAC(key, test id)` onto a pipe to the runner, once, when
the `rlvr.done` event comes from a frame that

- executes the very code object the runner compiled for that test's function (`is`, not `==`),
- stands on the `rlvr.done` marker's line (the function ran every statement before it),
- runs in the globals of the test module as it was first loaded (`rlvr.module`, first one wins),
- with no trace or profile function set.

It runs no code of the agent's (frames and C functions captured before any ran) and never raises,
so no callback or traceback ever shows its frame. The *guard* holds no secret; it ends the child at
once (exit `DENIED_EXIT`, the test fails; nothing to catch) on what could read the key or fake the
test's frame: reading the interpreter's objects or other threads' frames
(`gc.get_objects`/`get_referrers`/`get_referents`, `sys._current_frames`), native calls (`ctypes`
beyond loading a library), opening the process's memory (a procfs directory or a `/proc/PID/mem`,
links followed), a trace or profile function (`sys.settrace`, `sys.setprofile`: it can jump a
frame to any line), functions or `exec` built on the trusted code objects, more audit hooks.

The runner records a test as passed only when the child's own JUnit report says it passed *and*
the signed record for that id arrived; a child's report, exit status and output can be forged by
the code under test, the signature cannot, short of raw memory access through native code other
than `ctypes` (a C extension addressing memory: a documented limit). Paths are judged without
running code the agent could have changed (a `str` subclass by its characters, pathlib's own
classes only with their shipped methods; any other path object opening through `os.open` ends the
child).
After each child the runner kills every process the child left (they were re-parented to it, the
subreaper), so nothing runs on into the next test. The runner writes one JUnit report of its own
(test ids from the collection, names from the trusted file paths) on its report fd.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import hmac
import importlib
import importlib.abc
import importlib.machinery
import os
import signal
import sys
import time
from typing import Any
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

MODULE_LINE = 9_000_000
DONE_LINE = 9_000_001
"""Line numbers of the marker statements (no source line has them)."""
MAX_TESTS = 5000
MAX_REPORT = 4 << 20
JUNIT_ARG = "--junitxml=/dev/fd/{}"
"""pytest's JUnit report to a pipe of the runner (the fd filled in per child)."""
_CO_NEWLOCALS = 0x2


class _Instrument(ast.NodeTransformer):
    """Add the `rlvr.done` marker at the end of every function (and before each of its returns)."""

    @staticmethod
    def _done() -> ast.stmt:
        call = ast.parse('__import__("sys").audit("rlvr.done")').body[0]
        for node in ast.walk(call):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = DONE_LINE  # type: ignore[attr-defined]
                node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
        return call

    def _function(self, node: Any) -> Any:
        self.generic_visit(node)  # nested functions get their own markers (harmless: only the test's counts)
        node.body.append(self._done())
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        return node

    def visit_Return(self, node: ast.Return) -> Any:
        if node.value is None:
            return [self._done(), node]
        store, load = ast.Name(id="__rlvr_returned", ctx=ast.Store()), ast.Name(id="__rlvr_returned", ctx=ast.Load())
        keep = ast.Assign(targets=[store], value=node.value)
        back = ast.Return(value=load)
        for new in (keep, back, store, load):
            ast.copy_location(new, node)
        return [keep, self._done(), back]


def _module_marker(tree: ast.Module) -> None:
    """`sys.audit("rlvr.module")` as the first statement after the docstring and `__future__` imports."""
    at = 0
    body = tree.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        at = 1
    while at < len(body) and getattr(body[at], "module", None) == "__future__":
        at += 1
    marker = ast.parse('__import__("sys").audit("rlvr.module")').body[0]
    for node in ast.walk(marker):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = MODULE_LINE  # type: ignore[attr-defined]
            node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
    body.insert(at, marker)


def compile_trusted(path: str) -> Any:
    """The module code of the trusted file `path`: pytest's assertion rewriting plus the markers (None: no parse)."""
    from _pytest.assertion.rewrite import rewrite_asserts

    with open(path, "rb") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return None
    rewrite_asserts(tree, source, path, None)
    _Instrument().visit(tree)
    _module_marker(tree)
    return compile(tree, path, "exec", dont_inherit=True)


def literal_cases(path: str) -> dict[str, int]:
    """Qualified name -> number of cases, for test functions parametrized only with literal lists of values.

    The collection runs the agent's code (the test module imports it), which could drop the cases
    it fails; what the trusted source itself spells out is counted here, before any of that ran.
    """
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), filename=path)
    out: dict[str, int] = {}

    def count(fn: Any, prefix: str) -> None:
        total, seen = 1, False
        for deco in fn.decorator_list:
            func = getattr(deco, "func", None)
            name = getattr(func, "attr", None) or getattr(func, "id", None)
            if name != "parametrize":
                continue
            values = deco.args[1] if len(deco.args) > 1 else next(
                (k.value for k in deco.keywords if k.arg == "argvalues"), None)
            if not isinstance(values, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in values.elts):
                return
            total, seen = total * len(values.elts), True
        if seen:
            out[prefix + fn.name] = total

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            count(node, "")
        elif isinstance(node, ast.ClassDef) and not node.decorator_list:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    count(item, node.name + ".")
    return out


_SELECTING = ("-k", "-m", "--deselect", "--lf", "--last-failed", "--ff", "--sw", "--stepwise")


def _selects(args: list[str]) -> bool:
    """The command line picks some tests (`-k`, `-m`, `path::name`, ...): fewer cases than written is expected."""
    return any("::" in a or a.split("=", 1)[0] in _SELECTING or (a.startswith(("-k", "-m")) and len(a) > 2)
               for a in args)


def _qualnames(code: Any, prefix: str = "") -> dict[str, list[Any]]:
    """Qualified name -> code objects of the functions defined at module level and in (nested) class bodies."""
    out: dict[str, list[Any]] = {}
    for const in code.co_consts:
        if not hasattr(const, "co_code"):
            continue
        name = f"{prefix}{const.co_name}"
        out.setdefault(name, []).append(const)
        if not const.co_flags & _CO_NEWLOCALS:  # a class body: its methods are `Class.method`
            for key, value in _qualnames(const, name + ".").items():
                out.setdefault(key, []).extend(value)
    return out


def _all_codes(code: Any) -> list[Any]:
    out = [code]
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            out += _all_codes(const)
    return out


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the trusted files' imports from the runner's compiled code (each file executed once)."""

    def __init__(self, codes: dict[str, Any]) -> None:
        self.codes = codes
        self.loaded: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None)
        if spec is None or not origin or os.path.realpath(origin) not in self.codes:
            return None
        spec.loader = _Loader(self, os.path.realpath(origin))
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, finder: _Finder, path: str) -> None:
        self.finder, self.path = finder, path

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        if self.path in self.finder.loaded:
            raise ImportError(f"rlvr: the test file {self.path} is loaded only once per test")
        self.finder.loaded.add(self.path)
        exec(self.finder.codes[self.path], module.__dict__)


_DENIED = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
                     "sys.settrace", "sys.setprofile", "sys.addaudithook"})
_CTYPES_ALLOWED = frozenset({"ctypes.dlopen", "ctypes.get_errno", "ctypes.set_errno"})
DENIED_EXIT = 86
"""Exit status of a test child that tried a denied operation (it ends at once: nothing to catch)."""


def _guard(trusted: list[Any], exec_code: Any) -> Any:  # noqa: C901 - one hook, its checks side by side
    """The child's first audit hook: it ends the child on an operation that could read the key or fake a test's frame.

    It holds no secret, so whatever runs while it does (a path object's own `__fspath__`) finds
    nothing to take; it calls only functions captured here.
    """
    getframe, write, exit_now, stat, fspath = sys._getframe, os.write, os._exit, os.stat, os.fspath
    import pathlib

    with os.scandir("/") as entries:
        dir_entry = type(next(entries))
    # pathlib caches the string it made on the object, so `open`'s own conversion gets the one checked here
    safe_paths = {kind: [(name, getattr(kind, name)) for name in ("__fspath__", "__str__")]
                  for kind in (pathlib.PosixPath, pathlib.PurePosixPath, dir_entry)}
    proc_dev = os.stat("/proc").st_dev if os.path.isdir("/proc/self") else None
    trusted_ids = frozenset(id(c) for c in trusted)
    keep = tuple(trusted)  # the ids above stay valid: the objects stay alive

    def end(why: str) -> None:
        with contextlib.suppress(OSError):
            write(2, f"\nrlvr: {why} is not allowed while the grader runs a test\n".encode())
        exit_now(DENIED_EXIT)

    def plain(path: Any) -> Any:
        """The path `open` will use, found without running code the agent could have changed; None: no telling."""
        kind = type(path)
        if kind in (str, bytes, int):
            return path
        if isinstance(path, str):  # a subclass: its characters, not its (overridable) methods
            return str.__getitem__(path, slice(None))
        if isinstance(path, bytes):
            return bytes.__getitem__(path, slice(None))
        if kind in safe_paths and all(getattr(kind, name, None) is method for name, method in safe_paths[kind]):
            return fspath(path)  # pathlib as shipped: the string it caches is what `open` gets too
        return None

    def on_proc(path: Any) -> bool:
        """`/proc/PID/mem` (a regular procfs file only its owner may read) or a procfs directory, links followed."""
        resolved = plain(path)
        if resolved is None:  # a path object of the agent's: it could answer this check and `open` differently
            return hasattr(type(path), "__fspath__")
        path = resolved
        if isinstance(path, int):
            return False
        try:
            st = stat(path)
        except (OSError, ValueError, TypeError):
            return False
        kind = st.st_mode & 0o170000
        return st.st_dev == proc_dev and (kind == 0o040000 or (kind == 0o100000 and st.st_mode & 0o777 == 0o600))

    def guard(event: str, args: tuple[Any, ...]) -> None:
        if event in _DENIED or (event.startswith("ctypes.") and event not in _CTYPES_ALLOWED):
            end(event)
        elif event == "function.__new__" and args and id(args[0]) in trusted_ids and keep:
            end("a function built from the trusted test code")
        elif event == "exec" and args and id(args[0]) in trusted_ids and getframe(1).f_code is not exec_code:
            end("exec of the trusted test code")
        elif event == "object.__setattr__" and len(args) > 2 and args[1] == "__code__" and id(args[2]) in trusted_ids:
            end("a function given the trusted test code")
        elif event in ("open", "os.chdir") and args and proc_dev is not None and on_proc(args[0]):
            end(f"{event} of {args[0]!r} (the process's memory)")

    return guard


def _signer(key: bytes, done_fd: int, test_id: str, expected: list[Any], module_code: Any) -> Any:
    """The child's second audit hook: the signed record for `test_id`, once, from the test's own end marker.

    No code of the agent's runs while it does (it touches only frames and C functions captured
    here) and it never raises, so neither a traceback nor a callback ever shows its frame.
    """
    getframe, gettrace, getprofile, write = sys._getframe, sys.gettrace, sys.getprofile, os.write
    import _thread

    ident = _thread.get_ident
    expected_ids = frozenset(id(c) for c in expected)
    keep = (tuple(expected), module_code)
    busy: set[int] = set()
    state: dict[str, Any] = {"globals": None, "signed": False}
    record = hmac.digest(key, b"done\x00" + test_id.encode(), hashlib.sha256)

    def signer(event: str, args: tuple[Any, ...]) -> None:
        if event not in ("rlvr.done", "rlvr.module"):
            return
        me = ident()
        if me in busy:
            return
        busy.add(me)
        try:
            frame = getframe(1)
            if event == "rlvr.module":
                if frame.f_code is module_code and frame.f_lineno == MODULE_LINE and state["globals"] is None:
                    state["globals"] = frame.f_globals
            elif (not state["signed"] and id(frame.f_code) in expected_ids and frame.f_lineno == DONE_LINE
                  and state["globals"] is not None and frame.f_globals is state["globals"] and keep
                  and frame.f_trace is None and gettrace() is None and getprofile() is None):
                state["signed"] = True
                write(done_fd, record)
        except BaseException:
            pass
        finally:
            busy.discard(me)

    return signer


def _clean_path(site: list[str]) -> list[str]:
    """sys.path: the standard library, the grader's site, the system's packages; the task's path is added later.

    Returns:
        The standard library's entries (the task's path goes right after them, `_task_path`).
    """
    import site as site_module

    stdlib = [p for p in sys.path if p and not p.startswith("/run/rlvr/")]
    own = [p for p in sys.path if p.startswith("/run/rlvr/")]
    sys.path[:] = stdlib + [p for p in site if p not in stdlib] + own
    for d in site_module.getsitepackages():  # the system's packages (read-only), as a task's python3 has them
        if os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
    minor = "python{}.{}".format(*sys.version_info[:2])
    if os.path.isdir("/usr/lib/" + minor):  # Debian/Ubuntu's python3 is this version: its package dirs too
        sys.path += [d for d in (f"/usr/local/lib/{minor}/dist-packages", "/usr/lib/python3/dist-packages")
                     if os.path.isdir(d) and d not in sys.path]  # appended as plain dirs: no .pth files run
    return stdlib


def _task_path(stdlib: list[str], extra: list[str]) -> None:
    """Put the task's `PYTHONPATH` right after the standard library, ahead of every host copy of a package.

    The grader's site and the system's packages (a Debian `python3-*` module, a pre-installed
    pip copy) come after it: the tests import the workspace's module, never a host copy of it.
    """
    task = [p for p in extra if p not in stdlib]
    rest = [p for p in sys.path if p not in stdlib and p not in task]
    sys.path[:] = [p for p in sys.path if p in stdlib] + task + rest


def _children() -> list[int]:
    me = str(os.getpid())
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError), open(f"/proc/{name}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[1] == me:
                    out.append(int(name))
    return out


def _kill_descendants() -> None:
    """SIGKILL every child of the runner (a subreaper: the test child's leftovers are re-parented to it)."""
    for _round in range(200):
        kids = _children()
        if not kids:
            return
        for pid in kids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        for pid in kids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.002)


def _drain(pid: int, fds: dict[str, int], deadline: float, cap: int) -> tuple[dict[str, bytes], int | None]:
    """Read `fds` until `pid` exits and they close (or the deadline); (data per name, wait status or None)."""
    import select

    data = {name: b"" for name in fds}
    open_fds = dict(fds)
    status: int | None = None
    while True:
        if status is None:
            with contextlib.suppress(ChildProcessError):
                got, st = os.waitpid(pid, os.WNOHANG)
                if got == pid:
                    status = st
        left = deadline - time.monotonic()
        if (status is not None and not open_fds) or left <= 0:
            break
        ready: list[int] = []
        if open_fds:
            ready = select.select(list(open_fds.values()), [], [], min(max(left, 0), 0.05))[0]
        else:
            time.sleep(0.01)
        for name, fd in list(open_fds.items()):
            if fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    del open_fds[name]
                elif len(data[name]) < cap:
                    data[name] += chunk[: cap - len(data[name])]
        if status is not None and open_fds and not ready:  # the child is gone; what it left holding the pipes goes too
            _kill_descendants()
    return data, status


class _Plugin:
    """The runner's pytest plugin in a child: the collection's ids (`collect`) or only one test kept (`keep`)."""

    def __init__(self, out_fd: int | None = None, keep: str | None = None, path: str | None = None) -> None:
        self.out_fd, self.keep, self.path = out_fd, keep, path

    def pytest_ignore_collect(self, collection_path: Any) -> bool | None:
        """A test's child collects only that test's file (the others' imports are not its business)."""
        name = str(collection_path)
        if self.path is None or not name.endswith(".py") or os.path.basename(name) == "conftest.py":
            return None
        return True if os.path.realpath(name) != self.path else None

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        if self.keep is None:
            return
        chosen = [i for i in items if i.nodeid == self.keep]
        dropped = [i for i in items if i.nodeid != self.keep]
        items[:] = chosen
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def pytest_collection_finish(self, session: Any) -> None:
        if self.out_fd is None:
            return
        lines = []
        for item in session.items[:MAX_TESTS]:
            path = str(getattr(item, "path", None) or getattr(item, "fspath", ""))
            lines.append(f"{os.path.realpath(path)}\t{item.nodeid}\n")
        with contextlib.suppress(OSError):
            os.write(self.out_fd, "".join(lines).encode())


def _child_start(out_w: int, err_w: int, keep: tuple[int, ...]) -> None:
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    top = max([2, *keep])
    for fd in range(3, top + 1):
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.closerange(top + 1, 1 << 16)


def _fork_pytest(args: list[str], plugin: _Plugin, pipes: dict[str, tuple[int, int]], before: Any,
                 deadline: float, cap: int, after_fork: Any = None) -> tuple[dict[str, bytes], int | None]:
    """pytest.main(args) in a forked child; the parent keeps the read ends of `pipes` (name -> (r, w))."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            _child_start(out_w, err_w, tuple(w for _r, w in pipes.values()) + tuple(
                r for name, (r, _w) in pipes.items() if name == "key"))  # the key's write end: closed by `before`
            before()
            import pytest

            code = pytest.main(args, plugins=[plugin])
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(code) & 0xFF)
        except BaseException:
            os._exit(70)
        finally:
            os._exit(70)
    os.close(out_w)
    os.close(err_w)
    reads = {"stdout": out_r, "stderr": err_r}
    for name, (r, w) in pipes.items():
        if name == "key":
            os.close(r)
        else:
            os.close(w)
            reads[name] = r
    if after_fork is not None:
        after_fork(pid)
    data, status = _drain(pid, reads, deadline, cap)
    if status is None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _kill_descendants()
    for fd in reads.values():
        os.close(fd)
    return data, status


def _claim(report: bytes) -> tuple[str, str]:
    """What the child's own JUnit report says: ('pass' | 'fail' | 'error' | 'skipped' | '', message)."""
    if not report.strip():
        return "", ""
    try:
        root = ET.fromstring(report[:MAX_REPORT])
    except ET.ParseError:
        return "fail", "the test's JUnit report is not well-formed"
    cases = list(root.iter("testcase"))
    if not cases:
        return "", ""
    for case in cases:
        for kind in ("failure", "error", "skipped"):
            el = case.find(kind)
            if el is not None:
                text = (el.get("message") or "") + "\n" + (el.text or "")
                return ("skipped" if kind == "skipped" else "error" if kind == "error" else "fail"), text[:1500]
    return "pass", ""


def _case(root: str, path: str, test_id: str, kind: str, message: str, seconds: float) -> str:
    rel = os.path.relpath(path, root)
    module = (rel[:-3] if rel.endswith(".py") else rel).replace("/", ".")
    base, bracket, params = test_id.partition("[")  # a parameter id may hold `::` itself
    parts = base.split("::")[1:]
    if parts and bracket:
        parts[-1] += bracket + params
    classname = ".".join([module, *parts[:-1]])
    name = parts[-1] if parts else module
    body = ""
    if kind == "skipped":
        body = f"<skipped message={quoteattr(message[:300])}/>"
    elif kind != "pass":
        tag = "error" if kind == "error" else "failure"
        first = message.splitlines()[0][:300] if message else kind
        body = f"<{tag} message={quoteattr(first)}>{escape(message)}</{tag}>"
    return (f"<testcase classname={quoteattr(classname)} name={quoteattr(name)} time=\"{seconds:.3f}\">"
            f"{body}</testcase>")


def _qualname(test_id: str) -> str:
    """`file.py::Class::test[params]` -> `Class.test` (the function's qualified name in its module)."""
    return ".".join(test_id.partition("[")[0].split("::")[1:])


def _suite_name(args: list[str]) -> str:
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "-o" and i + 1 < len(args) else (arg[2:] if arg.startswith("-o") else "")
        if value.startswith("junit_suite_name="):
            return value.split("=", 1)[1]
    return "pytest"


def _subreaper() -> None:
    try:
        from rlvr.sandbox.guest.rlvr_supervisor import libc
    except ImportError:  # pragma: no cover - inside the sandbox
        from rlvr_supervisor import libc  # type: ignore[import-not-found,no-redef]
    with contextlib.suppress(Exception):
        libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _import_pytest(res_fd: int) -> bool:
    """Import the grader's pytest and its own plugins once (children inherit them); False after reporting why not."""
    try:
        import _pytest.assertion.rewrite
        import _pytest.junitxml  # noqa: F401
        import pytest  # noqa: F401
        from _pytest.config import default_plugins

        for plugin in default_plugins:  # pytest's own plugins: imported once here, not in every child
            with contextlib.suppress(ImportError):
                importlib.import_module("_pytest." + plugin)
    except BaseException as exc:
        os.write(res_fd, ("\x00import-error " + type(exc).__name__ + ": " + str(exc)).encode())
        return False
    return True


def _compile_tree(root: str, res_fd: int) -> dict[str, Any] | None:
    """Every trusted test file under `root` compiled (`compile_trusted`); None after reporting one that does not."""
    codes: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.realpath(os.path.join(dirpath, name))
                try:
                    code = compile_trusted(path)
                except OSError:
                    continue
                except Exception as exc:  # a file that parses must compile: the grader's own failure
                    os.write(res_fd, (f"\x00import-error rlvr cannot compile the test file {path}: "
                                      f"{type(exc).__name__}: {exc}").encode())
                    return None
                if code is not None:
                    codes[path] = code
    return codes


def _collect_ids(args: list[str], codes: dict[str, Any], deadline: float) -> tuple[dict[str, str], bytes]:
    """The test ids (id -> trusted file) from a throwaway child (it imports the tests, and so the agent's code)."""
    ids_r, ids_w = os.pipe()
    jr, jw = os.pipe()
    finder = _Finder(codes)

    def load_trusted() -> None:
        sys.meta_path.insert(0, finder)

    collect_args = [*args, "--collect-only", "-q", "--continue-on-collection-errors", JUNIT_ARG.format(jw)]
    got, _status = _fork_pytest(collect_args, _Plugin(out_fd=ids_w), {"ids": (ids_r, ids_w), "junit": (jr, jw)},
                                load_trusted, deadline, 1 << 20)
    seen: dict[str, str] = {}
    for line in got["ids"].decode(errors="replace").splitlines():
        path, _, test_id = line.partition("\t")
        if path in codes and "::" in test_id and test_id not in seen and len(seen) < MAX_TESTS:
            seen[test_id] = path
    return seen, got["stdout"]


def _missing_cases(root: str, codes: dict[str, Any], seen: dict[str, str]) -> list[str]:
    """A failed case for each test whose trusted source spells out more parametrized cases than were collected."""
    collected: dict[tuple[str, str], int] = {}
    for test_id, path in seen.items():
        key = (path, _qualname(test_id))
        collected[key] = collected.get(key, 0) + 1
    cases: list[str] = []
    for path in codes:
        with contextlib.suppress(OSError, SyntaxError, ValueError, RecursionError):
            for qual, want in literal_cases(path).items():
                got_n = collected.get((path, qual), 0)
                if got_n and got_n < want:
                    rel = os.path.relpath(path, root)
                    test_id = f"{rel}::{qual.replace('.', '::')}[rlvr-missing-cases]"
                    cases.append(_case(root, path, test_id, "fail", f"rlvr: {got_n} of the {want} parametrized "
                                       "cases the test file writes out were collected", 0.0))
    return cases


def _run_test(args: list[str], test_id: str, path: str, codes: dict[str, Any], trusted: list[Any],
              deadline: float) -> tuple[str, str, bytes]:
    """Run one test in a fresh child of its own; (kind 'pass'/'fail', message, its stdout)."""
    exec_code = _Loader.exec_module.__code__
    expected = _qualnames(codes[path]).get(_qualname(test_id), [])
    pipes = {name: os.pipe() for name in ("junit", "done", "key")}
    child_finder = _Finder(codes)

    def before() -> None:
        os.close(pipes["key"][1])
        key = b""
        while len(key) < 32:
            chunk = os.read(pipes["key"][0], 32 - len(key))
            if not chunk:
                os._exit(71)
            key += chunk
        os.close(pipes["key"][0])
        sys.meta_path.insert(0, child_finder)
        sys.addaudithook(_signer(key, pipes["done"][1], test_id, expected, codes[path]))
        sys.addaudithook(_guard(trusted, exec_code))  # last: from now on no other hook is added
        del key

    keys: list[bytes] = []  # the key is made after the fork: the child's copy of this frame never holds it

    def send_key(_pid: int) -> None:
        keys.append(os.urandom(32))
        with contextlib.suppress(OSError):
            os.write(pipes["key"][1], keys[0])
        os.close(pipes["key"][1])

    child_args = [*args, JUNIT_ARG.format(pipes["junit"][1])]
    key_pipe = {"key": (pipes["key"][0], pipes["key"][1])}
    data, status = _fork_pytest(child_args, _Plugin(keep=test_id, path=path),
                                {"junit": pipes["junit"], "done": pipes["done"], **key_pipe}, before, deadline,
                                MAX_REPORT, after_fork=send_key)
    signed = bool(keys) and hmac.digest(keys.pop(), b"done\x00" + test_id.encode(), "sha256") in data["done"]
    kind, message = _claim(data["junit"])
    code = os.waitstatus_to_exitcode(status) if status is not None and hasattr(os, "waitstatus_to_exitcode") \
        else (status >> 8 if status is not None else None)
    if kind == "pass" and not (signed and code == 0):
        kind, message = "fail", ("rlvr: pytest reported a pass, but the test function did not run to its end in "
                                 "the grader's own code (the code under test interfered with the test run)")
    elif code == DENIED_EXIT:
        kind, message = "fail", data["stderr"].decode(errors="replace").strip().splitlines()[-1:][0] \
            if data["stderr"].strip() else "rlvr: a denied operation ended the test"
    elif not kind:
        why = "timed out" if status is None else f"exit {code}"
        kind, message = "fail", f"rlvr: the test's pytest ended without a report ({why})"
    return kind, message, data["stdout"]


def main(req: dict[str, Any], res_fd: int) -> int:
    r"""Run the request's pytest (`req`: args, site, trusted_root, timeout_s, max_output); the report on `res_fd`.

    Steps: import the grader's pytest, compile the trusted test files, collect the test ids in a
    throwaway child, fail the parametrized cases the trusted source writes out but were not collected,
    run every test in a fresh child of its own, then write one JUnit report.

    Returns:
        The exit status for the runner: 0 when every test passed, 1 when one did not, 5 when
        none was collected, 3 when the grader's pytest cannot be imported (reported as
        `\\x00import-error ...` on `res_fd`).
    """
    start = time.monotonic()
    deadline = start + float(req.get("timeout_s", 60))
    args = [str(a) for a in req["args"]]
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    stdlib = _clean_path(list(req.get("site") or []))
    if not _import_pytest(res_fd):
        return 3
    root = os.path.realpath(str(req.get("trusted_root") or "/tests"))
    codes = _compile_tree(root, res_fd)
    if codes is None:
        return 3
    os.write(res_fd, b"\x00started\n")
    _task_path(stdlib, extra)  # the task's path: after the standard library, before the host's packages
    _subreaper()
    cap = int(req.get("max_output", 1 << 16))
    # the trusted files are compiled (and their asserts rewritten) here: pytest's own rewriting import hook stays off
    args = [*args, "--assert=plain"]
    seen, collect_stdout = _collect_ids(args, codes, deadline)
    out_parts = [collect_stdout.decode(errors="replace")[-cap // 4:]] if not seen else []
    cases = [] if _selects(args) else _missing_cases(root, codes, seen)
    counts = {"pass": 0, "fail": len(cases)}
    trusted = [c for code in codes.values() for c in _all_codes(code)]
    for test_id, path in seen.items():
        if time.monotonic() >= deadline:
            break
        t0 = time.monotonic()
        kind, message, stdout = _run_test(args, test_id, path, codes, trusted, deadline)
        counts["pass" if kind == "pass" else "fail"] += 1
        cases.append(_case(root, path, test_id, kind, message, time.monotonic() - t0))
        text = stdout.decode(errors="replace")
        out_parts.append(f"{'PASSED' if kind == 'pass' else 'FAILED'} {test_id}\n"
                         + ("" if kind == "pass" else text[-max(cap // max(len(seen), 1), 400):]))
    name = _suite_name(args)
    seconds = time.monotonic() - start
    report = (f"<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite name={quoteattr(name)} "
              f"errors=\"0\" failures=\"{counts['fail']}\" skipped=\"0\" tests=\"{len(cases)}\" "
              f"time=\"{seconds:.3f}\">{''.join(cases)}</testsuite></testsuites>")
    os.write(1, ("".join(out_parts)[-cap:] + f"\n{counts['pass']} passed, {counts['fail']} failed in "
                 f"{seconds:.2f}s\n").encode(errors="replace"))
    data_out = report.encode()
    while data_out:
        n = os.write(res_fd, data_out[:65536])
        data_out = data_out[n:]
    if not cases:
        return 5
    return 0 if counts["fail"] == 0 else 1
