"""The grader's bin directory in a grading sandbox: `pytest`, `python3` and `uv` as the grader's own.

A test script (Terminal-Bench `run-tests.sh`, Harbor `tests/test.sh`) runs with `GRADER_DIR/bin` first
on its PATH: its `pytest` is a client of the session supervisor's pytest socket (the tests run as the
grader's process, its report over the grader's channel), its interpreters start isolated with the
standard library ahead of the workspace, and `uv`/`uvx` run their command with the grader's tools
without installing anything. The wrappers are shell scripts around small Python sources
(`_CLIENT`, `_UV`, `_PYTHON_BOOT`), standard library only: they run inside the sandbox. Internal to
`rlvr.verifiers.terminal.grade` (no names for users).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

GRADER_DIR = "/run/rlvr/grader"
"""Where the grading sandbox sees the grader's read-only files (its `bin`, the workspace tar, the test script)."""

PYTEST_SOCKET = "/run/rlvr/pytest.sock"
"""Where the supervisor serves a test script's pytest runs (script mode)."""

_CLIENT = """
import json, os, socket, sys
drop = {"--junitxml", "--junit-xml", "--ctrf", "--json-report-file", "--html", "--result-log"}
args, skip, junit = [], None, None
for a in sys.argv[1:]:
    if skip is not None:
        junit = a if skip in ("--junitxml", "--junit-xml") else junit
        skip = None
        continue
    name, _, value = a.partition("=")
    if name in drop or name == "--json-report":
        if value and name in ("--junitxml", "--junit-xml"):
            junit = value
        skip = name if not value and name != "--json-report" else None
        continue
    args.append(a)
s = socket.socket(socket.AF_UNIX)
s.connect(SOCKET)
s.sendall(json.dumps({"args": args + ["-p", "no:cacheprovider"], "cwd": os.getcwd(), "junitxml": junit,
                      "env": dict(os.environ)}).encode() + b"\\n")
data = b""
while True:
    chunk = s.recv(1 << 16)
    if not chunk:
        break
    data += chunk
try:
    reply = json.loads(data)
except ValueError:
    sys.exit(3)
sys.stdout.write(reply.get("stdout") or "")
sys.stderr.write(reply.get("stderr") or "")
code = reply.get("exit_code")
sys.exit(code if isinstance(code, int) else 1)
"""


_UV = """
import os, sys
# uv at grading time: `uv run [opts] CMD`, `uv tool run [opts] CMD` and `uvx [opts] CMD` run CMD with the
# grader's pytest and python; installs (init, add, venv, pip, sync, lock, tool install) are not run
me, args = os.path.basename(sys.argv[1]), sys.argv[2:]
if me == "uv":
    if args[:1] == ["run"]:
        args = args[1:]
    elif args[:2] == ["tool", "run"]:
        args = args[2:]
    else:
        sys.stderr.write("rlvr: `uv %s` is not run at grading time (nothing is installed then)\\n" % " ".join(args))
        sys.exit(0)
value = {"-p", "--python", "-w", "--with", "--from", "--with-requirements", "--project", "--directory", "--group",
         "--extra", "--index-url", "--extra-index-url", "--env-file"}
while args and args[0].startswith("-"):
    args = args[2:] if args[0] in value else args[1:]
if not args:
    sys.exit(0)
tool = args[0] if args[0] not in ("python", "python3") or args[1:2] != ["-m"] else args[2]
rest = args[1:] if tool == args[0] else args[3:]
if tool in ("pytest", "py.test"):
    os.execv(BIN + "/pytest", [BIN + "/pytest", *rest])
os.environ["PATH"] = BIN + ":" + os.environ.get("PATH", "")  # `uv run python`: the grader's wrapper, not the bare one
os.execvp(args[0], args)
"""


_PYTHON_BOOT = """
import os, site, sys
# a scorer's python3 at grading time: the standard library first, the workspace never ahead of it. `-c`, `-m`, `-`
# and stdin put the working directory last (python would put it first), PYTHONPATH goes right after the standard
# library, ahead of the grader's site and the system's packages (a host copy of the task's module is never the one
# imported); a script's own directory stays first, as python has it (the script lives there)
real, argv, i, mode, rest = sys.executable, sys.argv[1:], 0, None, []
while i < len(argv):
    a = argv[i]
    if a in ("-c", "-m") or (a[:2] in ("-c", "-m") and len(a) > 2):
        value = a[2:] if len(a) > 2 else (argv[i + 1] if i + 1 < len(argv) else None)
        if value is None:
            os.execv(real, [real] + argv)
        mode, rest = (a[1], value), argv[i + (1 if len(a) > 2 else 2):]
        break
    if a == "-":
        mode, rest = ("-", None), argv[i + 1:]
        break
    if a == "--":
        mode, rest = (("s", argv[i + 1]), argv[i + 2:]) if i + 1 < len(argv) else (("-", None), [])
        break
    if a.startswith("--") or a in ("-h", "-V", "-i", "-?"):  # --version, --help, interactive: run as asked
        os.execv(real, [real] + argv)
    if a.startswith("-") and len(a) > 1:
        takes = a[1:2] in ("W", "X")
        if takes and len(a) == 2:
            value = argv[i + 1] if i + 1 < len(argv) else ""
            i += 1
        else:
            value = a[2:] if takes else ""
        if a[1:2] == "W":
            sys.warnoptions.append(value)
        for flag in ("" if takes else a[1:]):
            if flag == "u":
                for stream in (sys.stdout, sys.stderr):
                    stream.reconfigure(write_through=True)
            elif flag == "B":
                sys.dont_write_bytecode = True
        i += 1
        continue
    mode, rest = ("s", a), argv[i + 1:]
    break
if mode is None:
    mode = ("-", None)
if os.environ.get("PYTHONDONTWRITEBYTECODE"):  # -I ignores the PYTHON* variables: the two a scorer relies on
    sys.dont_write_bytecode = True
if os.environ.get("PYTHONUNBUFFERED"):
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(write_through=True)
extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
system = set(site.getsitepackages()) | {p for p in sys.path if p.endswith(("/site-packages", "/dist-packages"))}
std = [p for p in sys.path if p and p not in system]
path = std + [p for p in extra + SITE if p not in std] + [p for p in sys.path if p in system]
path = list(dict.fromkeys(path))
if mode[0] == "s":
    path.insert(0, os.path.dirname(os.path.realpath(mode[1])))
if mode[0] != "s":
    path.append(os.getcwd())
sys.path[:] = path
if sys.warnoptions:
    import warnings
    warnings._processoptions(sys.warnoptions)
import runpy, types
if mode[0] == "m":
    sys.argv = [mode[1]] + rest
    runpy._run_module_as_main(mode[1], alter_argv=True)
elif mode[0] == "s":
    sys.argv = [mode[1]] + rest
    runpy.run_path(mode[1], run_name="__main__")
else:
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    source, name = (mode[1], "<string>") if mode[0] == "c" else (sys.stdin.read(), "<stdin>")
    sys.argv = (["-c"] if mode[0] == "c" else ["-"]) + rest
    exec(compile(source, name, "exec"), main.__dict__)
"""

PYTHON_NAMES = ("python", "python3", *(f"python3.{minor}" for minor in range(6, 15)))
"""The interpreter names a test script's commands find as the grader's wrappers (`write_grader_bin`)."""

_ABSOLUTE_PYTHON = re.compile(r"(?<![\w./-])/(?:usr/(?:local/)?)?bin/(python(?:3(?:\.\d+)?)?)(?![\w./-])")


def wrap_absolute_python(script: str) -> str:
    """`/usr/bin/python3 ...` (or `/usr/local/bin/`, `/bin/`) in a test script: the grader's wrapper of that name."""
    return _ABSOLUTE_PYTHON.sub(lambda m: f"{GRADER_DIR}/bin/{m.group(1)}", script)


def write_grader_bin(stage: Path, python: str, site: tuple[str, ...]) -> None:
    """`pytest`, `py.test`, `python3` (every name of `PYTHON_NAMES`), `uv`, `uvx` in the grader's bin (script mode).

    `pytest` (and `python3 -m pytest`) is a client of the supervisor's pytest socket: the tests run
    as the grader's own process, never as a child of the script. The interpreters start isolated
    (`-I`) and lay out `sys.path` themselves (`_PYTHON_BOOT`): a planted `json.py` in the working
    directory, or in the task's PYTHONPATH, never shadows the standard library of a scorer.
    """
    bindir = stage / "bin"
    bindir.mkdir()
    client = _CLIENT.replace("SOCKET", repr(PYTEST_SOCKET))
    # the interpreter is looked up without this directory on PATH: `python3` here is the wrapper itself
    unwrap = f"PATH=${{PATH#{GRADER_DIR}/bin:}} "
    pytest = f"#!/bin/sh\n{unwrap}exec {shlex.quote(python)} -I -S -c {shlex.quote(client)} \"$@\"\n"
    boot = shlex.quote(_PYTHON_BOOT.replace("SITE", repr(list(site))))
    uv_source = _UV.replace("BIN", repr(f"{GRADER_DIR}/bin"))
    uv = f"#!/bin/sh\n{unwrap}exec {shlex.quote(python)} -I -S -c {shlex.quote(uv_source)} \"$0\" \"$@\"\n"
    scripts = {"pytest": pytest, "py.test": pytest, "uv": uv, "uvx": uv}
    for name in PYTHON_NAMES:  # python/python3: the grader's interpreter; python3.N: that version, where it exists
        real = shlex.quote(python) if name in ("python", "python3") else name
        scripts[name] = (f"#!/bin/sh\n[ \"$1\" = -m ] && [ \"$2\" = pytest ] && shift 2 && "
                         f"exec {GRADER_DIR}/bin/pytest \"$@\"\n{unwrap}exec {real} -I -c {boot} \"$@\"\n")
    for name, text in scripts.items():
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
