"""Child side of the unit-test verifier: runs inside the sandbox, standard library only.

The parent sends this file's source followed by `main(JOB)`. It executes the candidate and the
(instrumented) tests and writes JSON lines to the result channel (fd `$RLVR_RESULT_FD`):

- `{"s": site, "v": [encoded operand or null, ...]}` for every executed assert probe,
  `{"s": site, "u": "TypeName"}` when an operand is not a plain value;
- `{"value": encoded}` for a call-based case;
- `{"exception": "Type: message"}` if the program raised;
- `{"nonce": nonce}` once the last test ran.

The child never decides pass or fail: it only reports values, encoded strictly (exact built-in
types, no subclasses, so an object whose `__eq__` always returns True cannot be encoded). The
parent compares them with expected values that never enter the sandbox.
"""

import base64
import contextlib
import json
import math
import os
import sys
from typing import Any

_dumps = json.dumps
_write = os.write
_type = type
_len = len
_isinstance = isinstance
_repr = repr
_list = list
_str = str
_sorted = sorted
_HOLE = object()


class Unencodable(Exception):
    """A value that is not made of plain built-in types."""


def encode(x: Any, depth: int = 0) -> Any:
    """Tagged, type-exact JSON encoding of a plain Python value."""
    if depth > 100:
        raise Unencodable("nesting deeper than 100")
    t = _type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x if -(2**63) < x < 2**63 else {"$i": _str(x)}
    if t is float:
        return x if math.isfinite(x) else {"$f": _repr(x)}
    if t is list:
        return [encode(v, depth + 1) for v in x]
    if t is tuple:
        return {"$t": [encode(v, depth + 1) for v in x]}
    if t is dict:
        return {"$d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {"$s" if t is set else "$fs": [encode(v, depth + 1) for v in x]}
    if t is bytes:
        return {"$b": base64.b64encode(x).decode()}
    if t is complex:
        return {"$c": [_repr(x.real), _repr(x.imag)]}
    return _encode_stdlib(x, t, depth)


def _encode_stdlib(x: Any, t: type, depth: int) -> Any:
    import collections
    import decimal
    import fractions

    if t is collections.OrderedDict or t is collections.defaultdict or t is collections.Counter:
        return {"$o": t.__name__, "v": encode(dict(x), depth + 1)}
    if t is collections.deque:
        return {"$o": "deque", "v": encode(_list(x), depth + 1)}
    if t is decimal.Decimal or t is fractions.Fraction:
        return {"$o": t.__name__, "v": _str(x)}
    raise Unencodable(t.__module__ + "." + t.__qualname__)


class _Channel:
    def __init__(self) -> None:
        self.fd = int(os.environ.get("RLVR_RESULT_FD", "3"))

    def send(self, obj: Any) -> None:
        data = (_dumps(obj) + "\n").encode()
        while data:
            n = _write(self.fd, data)
            data = data[n:]


def _probe_factory(channel: _Channel, guard: Any = None) -> Any:
    def probe(site: int, operands: Any) -> None:
        if guard is not None and (guard.tainted or guard.changed()):  # candidate code ran outside a call
            guard.tainted = False
            guard.settle()
            channel.send({"s": site, "u": "the interpreter state changed while the assert was evaluated"})
            return
        try:
            values = [None if v is _HOLE else encode(v) for v in operands]
        except (Unencodable, RecursionError, ValueError) as exc:
            channel.send({"s": site, "u": _str(exc)[:200]})
            return
        finally:  # encoding runs no candidate code, but may import a standard module: not the candidate's change
            if guard is not None and guard.changed():
                guard.settle()
        channel.send({"s": site, "v": values})

    return probe


def _exception_text(exc: BaseException) -> str:
    return (_type(exc).__name__ + ": " + _str(exc))[:500]


def _names(code: Any) -> set[str]:
    """Global names a code object (and the functions it defines) may load."""
    found = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            found |= _names(const)
    return found


class _Pristine:
    """The interpreter state the tests rely on, saved before the candidate runs and put back after it.

    Covers `builtins`, every imported module's attributes (`math.isclose = ...`) and `sys.modules`
    entries (`sys.modules["math"] = fake`), so a candidate cannot change what the tests' own
    expressions compute (`abs(f(x) - y) < 1e-6`, `math.isclose(f(x), y)`).
    """

    def __init__(self, imports: Any) -> None:
        for name in imports:  # modules the tests import: imported (and saved) before the candidate runs
            with contextlib.suppress(Exception):
                __import__(name)
        self.sys_modules = sys.modules
        self.modules_version = _version(sys.modules)
        if self.modules_version is not None and self.modules_version == _BASE_VERSION:
            # `sys.modules` not written since the base snapshot: use it as is (no module object touched)
            self.modules, self.attrs, self.versions = _BASE_MODULES, _BASE_ATTRS, _BASE_VERSIONS
            return
        self.modules = {name: mod for name, mod in _list(sys.modules.items()) if mod is not None}
        self.attrs = {}
        for name, mod in self.modules.items():  # modules already in the base snapshot are not copied again
            same = _BASE_MODULES.get(name) is mod
            self.attrs[name] = _BASE_ATTRS[name] if same else dict(getattr(mod, "__dict__", {}))
        self.versions = {name: _version(getattr(mod, "__dict__", None)) for name, mod in self.modules.items()}

    def restore(self, namespace: dict[str, Any], test_names: set[str], module_refs: Any = ()) -> None:
        sys_dict = self.modules["sys"].__dict__
        if sys_dict.get("modules") is not self.sys_modules:
            sys_dict["modules"] = self.sys_modules
        modules = self.sys_modules
        if self.modules_version is None or _version(modules) != self.modules_version:
            for name, mod in self.modules.items():
                if dict.get(modules, name) is not mod:
                    dict.__setitem__(modules, name, mod)
        for name, mod in self.modules.items():
            current = getattr(mod, "__dict__", None)
            if current is None:
                continue
            version = self.versions[name]
            if version is not None and _version(current) == version:
                continue  # not written since the snapshot: nothing to put back (and no page touched)
            for key, value in self.attrs[name].items():
                if key not in current or current[key] is not value:
                    current[key] = value
        namespace["__builtins__"] = self.modules["builtins"]
        for name in test_names:  # a module name the tests use, rebound by the candidate to a fake: not a function,
            value = namespace.get(name, self)  # or anything where the tests use it as a module (`math.isclose`)
            if name in self.modules and value is not self and value is not self.modules[name] and \
                    (_type(value) is not _type(_names) or name in module_refs):
                namespace[name] = self.modules[name]


def _version_reader() -> Any:
    """A reader of a dict's `ma_version_tag` (CPython >= 3.6, PEP 509), or None where it cannot be trusted.

    CPython bumps a dict's version tag on every write to it, so an unchanged tag proves the dict was
    not written. Reading it (a plain memory read) does not touch the dict's values, which matters in
    a forked child: visiting every module attribute would copy-on-write most of the heap. The
    layout (`ob_refcnt`, `ob_type`, `ma_used`, `ma_version_tag`) is checked on live dicts first.
    """
    if sys.implementation.name != "cpython" or not (3, 6) <= sys.version_info[:2] <= (3, 13):
        return None
    try:
        import ctypes

        word = ctypes.sizeof(ctypes.c_void_p)
        used_at, tag_at = 2 * word, 3 * word

        def read(d: Any) -> int:
            return int(ctypes.c_uint64.from_address(id(d) + tag_at).value)

        def cell(d: Any) -> Any:  # a live view of the tag (keep `d` alive while it is used)
            return ctypes.c_uint64.from_address(id(d) + tag_at)

        read.cell = cell  # type: ignore[attr-defined]

        probe: dict[str, int] = {"a": 1}
        before = read(probe)
        unchanged = read(probe) == before
        probe["b"] = 2
        changed = read(probe) != before
        sized = all(ctypes.c_ssize_t.from_address(id(d) + used_at).value == _len(d) for d in (probe, sys.modules, {}))
        return read if unchanged and changed and sized else None
    except Exception:
        return None


_READ_VERSION = _version_reader() if __name__ == "__main__" else None  # only the sandbox prelude restores modules


def _version(d: Any) -> Any:
    """The dict's version tag, or None (unknown: compare the values instead)."""
    if _READ_VERSION is None or _type(d) is not dict:
        return None
    return _READ_VERSION(d)


def _snapshot() -> tuple[Any, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(`sys.modules` version, modules, copies of their attributes, their dicts' versions), taken now."""
    version = _version(sys.modules)
    modules = {name: mod for name, mod in _list(sys.modules.items()) if mod is not None}
    attrs = {name: dict(getattr(mod, "__dict__", {})) for name, mod in modules.items()}
    return version, modules, attrs, {name: _version(getattr(mod, "__dict__", None)) for name, mod in modules.items()}


_BASE_VERSION, _BASE_MODULES, _BASE_ATTRS, _BASE_VERSIONS = (
    _snapshot() if __name__ == "__main__" else (None, {}, {}, {}))
"""Module attributes when this file runs as the sandbox prelude. In a pre-started sandbox worker that
is once, before any job is forked (the worker runs its prelude once), so jobs inherit the copies
instead of making them: a forked child that copies every module dict touches (and so copy-on-write
faults) most of its heap, 6-8 ms per job (measured on the HumanEval canonical solutions). Imported
as a module (the parent's `decode`, hardened pytest files) it stays empty."""


_BLOCKED_EVENTS = frozenset({
    "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile",
    "sys.addaudithook", "gc.get_objects", "gc.get_referrers", "gc.get_referents", "_thread.start_new_thread",
    "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system", "subprocess.Popen",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "ctypes.addressof", "ctypes.call_function",
    "ctypes.PyObj_FromPtr", "ctypes.string_at", "ctypes.wstring_at", "ctypes.create_string_buffer",
    "code.__new__", "function.__new__", "signal.pthread_kill",
})
"""Audit events refused while candidate code can run: ways to reach the grader's own objects
(frames, the garbage collector's object lists, raw memory), run code outside the tests' calls
(threads, processes, trace hooks) or remove this refusal."""

_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "gi_code"})


class _Guard:
    """Keeps candidate code away from what the tests compute, at every call the tests make.

    The candidate's top level runs in a namespace of its own; the tests get its functions copied
    into theirs (only the entry point when there is one), plus the task's own prompt helpers. Every
    call in the test code goes through `call`, which after the callee returns (or raises) puts
    back builtins, imported modules' attributes and `sys.modules` (`_Pristine`), stops timers and
    garbage-collector callbacks, and keeps the garbage collector off (no `__del__` of candidate
    objects at an arbitrary point). An audit hook (PEP 578) refuses, for the whole job, the ways
    to reach the grader's objects or to run code outside those calls (`_BLOCKED_EVENTS`).
    """

    def __init__(self, pristine: _Pristine) -> None:
        self.pristine = pristine
        self.trusted = [True]
        self.watch: list[tuple[Any, Any]] = []  # (dict, ctypes view of its version tag); empty: no tags here
        self.saved: list[int] = []
        self.tainted = False
        self.test_names: set[str] = set()
        self.module_refs: set[str] = set()
        self.namespace: dict[str, Any] = {}
        import signal

        self._signal = signal
        trusted = self.trusted
        blocked, frames = _BLOCKED_EVENTS, _FRAME_ATTRS

        def hook(event: str, args: Any) -> None:
            if trusted[0]:
                return
            if event in blocked or (event == "object.__getattr__" and _len(args) > 1 and args[1] in frames):
                raise RuntimeError("refused in the grader's sandbox: " + event)

        sys.addaudithook(hook)
        for name in ("_PRELUDES", "_PRELUDE_KEYS"):  # the supervisor's caches hold this harness's namespace
            cache = getattr(sys.modules.get("__main__"), name, None)
            if _type(cache) is dict:
                cache.clear()

    def untrusted(self) -> None:
        """From now on candidate code may run (until `settle`)."""
        import gc

        gc.disable()
        self.trusted[0] = False

    def settle(self) -> None:
        """Undo what candidate code may have changed since `untrusted`; then watch for the next change."""
        self.trusted[0] = True
        import gc

        gc.disable()
        if gc.callbacks:
            gc.callbacks.clear()
        sig = self._signal
        for timer in (sig.ITIMER_REAL, sig.ITIMER_VIRTUAL, sig.ITIMER_PROF):
            if sig.getitimer(timer)[0]:
                sig.setitimer(timer, 0)
        pristine = self.pristine
        if not self.watch or self.changed():
            pristine.restore(self.namespace, self.test_names, self.module_refs)
            mods = [pristine.sys_modules, *(getattr(m, "__dict__", None) for m in pristine.modules.values())]
            cell = getattr(_READ_VERSION, "cell", None)
            dicts = [d for d in mods if _type(d) is dict]
            # one ctypes view per dict's version tag, made once: reading `.value` is a plain load
            self.watch = [(d, cell(d)) for d in dicts] if cell is not None else []
            self.saved = [c.value for _d, c in self.watch]
        self.trusted[0] = False

    def changed(self) -> bool:
        """Whether a watched dict (builtins, a module, `sys.modules`) was written since the last `settle`.

        Checked by every probe too: a write between the last call and the probe (a finalizer of an
        argument, a property of a returned object) means the assert's operands may be forged.
        """
        return [c.value for _d, c in self.watch] != self.saved

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)`, then `settle` (the test code's calls are rewritten into this).

        A change found before the call (candidate code ran between two calls: a finalizer, a
        property read by the test's expression) taints the next probe, which then fails.
        """
        if self.watch and self.changed():
            self.tainted = True
        try:
            return fn(*args, **kwargs)
        finally:
            self.settle()


def _run_assert(job: dict[str, Any], channel: _Channel) -> None:
    candidate = compile(job["code"], "solution.py", "exec")
    setup = compile(job.get("setup") or "", "setup.py", "exec")
    tests = compile(job["tests"], "tests.py", "exec")
    helpers = compile(job.get("helpers") or "", "prompt.py", "exec")
    pristine = _Pristine(job.get("imports") or ())
    guard = _Guard(pristine)
    own: dict[str, Any] = {"__name__": "__main__"}
    guard.untrusted()
    exec(candidate, own)
    entry = job.get("entry_point")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    test_names = _names(setup) | _names(tests) | _names(helpers)
    # the names the parent chose (the task's functions and classes the tests use); a builtin only where the
    # reference solution defines it (MBPP 126 `sum`), judged by this interpreter's builtins too
    builtin_names = set(dir(pristine.modules["builtins"])) - set(job.get("builtins_taken") or ())
    wanted = {n for n in job.get("names") or () if n not in builtin_names or n == entry}
    namespace.update((k, v) for k, v in _list(own.items()) if _type(k) is str and k in wanted)
    guard.namespace, guard.test_names, guard.module_refs = namespace, test_names, set(job.get("module_refs") or ())
    guard.settle()
    exec(helpers, namespace)  # the task's own helpers (`encode_cyclic`), whatever the candidate redefined
    namespace.update(__rlvr_probe__=_probe_factory(channel, guard), __rlvr_hole__=_HOLE, __rlvr_call__=guard.call)
    guard.trusted[0] = False
    exec(setup, namespace)
    exec(tests, namespace)
    if entry:
        guard.call(namespace["check"], namespace[entry])


def _resolve(namespace: dict[str, Any], name: str) -> Any:
    head, _, rest = name.partition(".")
    obj = namespace[head]
    if rest:
        if _isinstance(obj, type):
            obj = obj()
        for part in rest.split("."):
            obj = getattr(obj, part)
    return obj


def _run_call(job: dict[str, Any], channel: _Channel) -> None:
    candidate = compile(job["code"], "solution.py", "exec")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(candidate, namespace)
    fn = _resolve(namespace, job["fn"])
    value = fn(*job["args"], **job["kwargs"])
    try:
        channel.send({"value": encode(value)})
    except (Unencodable, RecursionError, ValueError) as exc:
        channel.send({"unencodable": _str(exc)[:200]})


def main(job: dict[str, Any]) -> None:
    """Run one job (`kind` 'assert' or 'call') and report on the result channel."""
    channel = _Channel()
    if job["kind"] == "call":
        job["args"] = [decode(a) for a in job["args"]]
        job["kwargs"] = {k: decode(v) for k, v in job["kwargs"].items()}
    try:
        (_run_call if job["kind"] == "call" else _run_assert)(job, channel)
    except BaseException as exc:  # SystemExit too: exiting early is a failure, not a pass
        channel.send({"exception": _exception_text(exc)})
        sys.stdout.flush()
        os._exit(1)
    channel.send({"nonce": job["nonce"]})
    sys.stdout.flush()
    os._exit(0)


def decode(x: Any) -> Any:
    """Inverse of `encode` for call arguments (the parent encodes them the same way)."""
    if _isinstance(x, _list):
        return [decode(v) for v in x]
    if not _isinstance(x, dict):
        return x
    if "$t" in x:
        return tuple(decode(v) for v in x["$t"])
    if "$d" in x:
        return {decode(k): decode(v) for k, v in x["$d"]}
    if "$s" in x:
        return {decode(v) for v in x["$s"]}
    if "$fs" in x:
        return frozenset(decode(v) for v in x["$fs"])
    if "$b" in x:
        return base64.b64decode(x["$b"])
    if "$c" in x:
        return complex(float(x["$c"][0]), float(x["$c"][1]))
    if "$f" in x:
        return float(x["$f"])
    if "$i" in x:
        return int(x["$i"])
    return _decode_stdlib(x)


_CMP: dict[str, Any] = {
    "Eq": lambda a, b: a == b, "NotEq": lambda a, b: a != b, "Lt": lambda a, b: a < b, "LtE": lambda a, b: a <= b,
    "Gt": lambda a, b: a > b, "GtE": lambda a, b: a >= b, "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b,
    "Is": lambda a, b: a is b, "IsNot": lambda a, b: a is not b,
}


def strict_compare(ops: Any, operands: Any) -> bool:
    """A comparison chain on plain copies of its operands (pytest files are rewritten to call this).

    Raises:
        Unencodable: an operand is not a plain built-in value (e.g. an always-equal object).
    """
    plain = [decode(encode(v)) if not (v is None or _type(v) is bool) else v for v in operands]
    return all(_CMP[op](plain[i], plain[i + 1]) for i, op in enumerate(ops))


def strict_truth(value: Any) -> bool:
    """The truth value of a plain copy of `value` (raises Unencodable for foreign objects)."""
    return bool(decode(encode(value)))


def _decode_stdlib(x: Any) -> Any:
    import collections
    import decimal
    import fractions

    kinds: dict[str, Any] = {"OrderedDict": collections.OrderedDict, "Counter": collections.Counter,
                             "deque": collections.deque,
             "defaultdict": dict, "Decimal": decimal.Decimal, "Fraction": fractions.Fraction}
    kind = kinds[x["$o"]]
    value = x["v"]
    return kind(value) if _isinstance(value, _str) else kind(decode(value))
