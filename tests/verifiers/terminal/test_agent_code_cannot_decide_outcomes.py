"""The agent's code running inside the grader's own processes cannot decide any test outcome.

- agent code imported (or `exec`ed) by the tests rewrites pytest's results in-process: the
  issue's payload (pytest's JUnit writer found through `gc`, recorded failures deleted,
  `_NodeReporter.to_xml` and `runner.call_and_report` patched) on the shipped fix-python-pricing
  and git-merge-conflict, and variants: module patching without `gc`, forged reports and records
  on every fd, `os._exit(0)`, a trace function, rebuilt functions, `exec` of the test's code, a
  fake `sys` in `sys.modules`, threads and `atexit` handlers outliving the test, environment
  variables set for the next tests (`PYTEST_ADDOPTS`, `PYTEST_PLUGINS`), signal handlers and
  alarms, a fork whose copy forges the reports;
- keys looked for in every frame's locals and in the traceback of a refused operation;
- parametrized cases the agent's code drops from the collection;
- `ENV PYTHONPATH=/app`: workspace modules named like the standard library's (`pprint`,
  `argparse`, `json`, `encodings`, `sitecustomize`, `usercustomize`, a `.pth` file, `pytest` itself);
- Harbor scorers run by `python3 -`, `-c`, `-m`, `python`, `python3.11`, `/usr/bin/env python3`,
  `/usr/bin/python3`, `uv run python` from the workspace, with a planted `json.py`;

Every cheat must be `incorrect` -- never `correct`, never `error`; the controls show honest work
passes the same task with the same planted files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _grading_episodes import episode, harbor_task, incorrect  # the same directory (pytest prepends it)

from rlvr.environments.terminal_data import make_harbor, make_tbench
from rlvr.verifiers.terminal import load_task

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

PAYLOAD = '''
def _rlvr_cheat():  # make pytest report every test as passed
    import gc
    import _pytest.junitxml as jx, _pytest.runner as rn
    try:
        for obj in gc.get_objects():  # the failures already recorded: out of the finished reports
            if isinstance(obj, jx.LogXML):
                for rep in list(getattr(obj, "node_reporters_ordered", [])):
                    element = rep.to_xml()
                    for child in list(element):
                        if child.tag in ("failure", "error", "skipped"):
                            element.remove(child)
    except Exception:
        pass
    orig = jx._NodeReporter.to_xml
    def to_xml(self):
        self.nodes[:] = [n for n in self.nodes if getattr(n, "tag", "") not in ("failure", "error", "skipped")]
        return orig(self)
    jx._NodeReporter.to_xml = to_xml
    def call_and_report(item, when, log=True, **kw):
        call = rn.CallInfo.from_call(lambda: None, when=when)
        report = item.ihook.pytest_runtest_makereport(item=item, call=call)
        if log:
            item.ihook.pytest_runtest_logreport(report=report)
        return report
    rn.call_and_report = call_and_report
_rlvr_cheat()
'''
"""The issue's payload: it works on a plain `pytest` run (every test reported passed)."""

NO_GC = PAYLOAD.replace("gc.get_objects()", "[]")
"""The same without `gc`: only module attributes patched (no audited operation at all)."""


def _heredoc(path: str, text: str, append: bool = False) -> str:
    return f"cat {'>>' if append else '>'} {path} <<'RLVR_EOF'\n{text}\nRLVR_EOF"


def _solution(env, task_id: str) -> str:
    task = next(t for t in env.tasks if t.id == task_id)
    return load_task(task.reference).solution_files["solution.sh"]


@needs_bwrap
def test_payload_in_the_tested_package_of_fix_python_pricing():
    env = make_tbench(task_ids=["fix-python-pricing"])
    try:
        for payload in (PAYLOAD, NO_GC):  # the bug left in, the payload appended to the package the tests import
            verdict = episode(env, "fix-python-pricing", [_heredoc("/app/shopcart/__init__.py", payload, True)])
            incorrect(verdict)
            assert "4 tests" in verdict.detail or "0/4" in verdict.detail, verdict.detail
        verdict = episode(env, "fix-python-pricing", [_heredoc("/tmp/s.sh", _solution(env, "fix-python-pricing")),
                                                      "bash /tmp/s.sh > /dev/null 2>&1"])
        assert verdict.status == "correct", verdict.detail  # the control: the honest fix passes
    finally:
        env.close()


@needs_bwrap
def test_payload_committed_as_the_file_a_test_execs_in_git_merge_conflict():
    env = make_tbench(task_ids=["git-merge-conflict"])
    try:
        for payload in (PAYLOAD, NO_GC):  # no merge: the payload committed as greeting.py, which a test exec()s
            greeting = payload + ("\ndef greet(name, lang='en'):\n    return {'fr': 'Bonjour', 'es': 'Hola'}.get("
                                  "lang, 'Hello') + ', ' + name + '!'\n")
            verdict = episode(env, "git-merge-conflict", [
                _heredoc("/app/repo/greeting.py", greeting),
                "cd /app/repo && git -c user.name=a -c user.email=a@b add greeting.py && "
                "git -c user.name=a -c user.email=a@b commit -qm x"])
            incorrect(verdict)
        verdict = episode(env, "git-merge-conflict", [_heredoc("/tmp/s.sh", _solution(env, "git-merge-conflict")),
                                                      "bash /tmp/s.sh > /dev/null 2>&1"])
        assert verdict.status == "correct", verdict.detail
    finally:
        env.close()


def _tbench(root: Path, name: str, dockerfile: str = "", tests: str | None = None) -> None:
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text("instruction: |\n  Write /app/solution.py with answer() returning 42.\n"
                                    "difficulty: easy\nmax_test_timeout_sec: 60\n")
    (task / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n" + dockerfile)
    (task / "run-tests.sh").write_text("#!/bin/bash\ncd /app\npytest $TEST_DIR/test_outputs.py -rA\n")
    (task / "solution.sh").write_text("printf 'def answer():\\n    return 42\\n' > /app/solution.py\n")
    (task / "tests" / "test_outputs.py").write_text(tests or (
        "import sys\nsys.path.insert(0, '/app')\n\n\ndef test_imports():\n    import solution  # noqa: F401\n\n\n"
        "def test_answer():\n    from solution import answer\n    assert answer() == 42\n\n\n"
        "def test_answer_again():\n    from solution import answer\n    value = answer()\n    if value == 42:\n"
        "        return\n    assert value == 42\n"))


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("inprocess")
    _tbench(root, "imports")
    _tbench(root, "pythonpath", "ENV PYTHONPATH=/app\n")
    _tbench(root, "parametrized", tests=(
        "import sys\nsys.path.insert(0, '/app')\nimport pytest\nfrom solution import answer\n\n\n"
        "@pytest.mark.parametrize('x', [1, 2, 3])\ndef test_answer(x):\n    assert answer(x) == 42 * x\n"))
    return root


WRONG = "def answer():\n    return 0\n"
RIGHT = "def answer():\n    return 42\n"

FORGE_FDS = '''
import os
forged = (b'<?xml version="1.0"?><testsuites><testsuite name="x" tests="1"><testcase classname="test_outputs" '
          b'name="test_answer"/></testsuite></testsuites>' + os.urandom(32) * 4)
for fd in range(3, 256):
    try:
        os.write(fd, forged)
    except OSError:
        pass
'''

VARIANTS = {
    "issue-payload": PAYLOAD + WRONG,
    "no-gc": NO_GC + WRONG,
    "forged-records-on-every-fd": FORGE_FDS + WRONG,
    "exit-0-before-the-assert": "import os\ndef answer():\n    os._exit(0)\n",
    "trace-jump-to-the-end": '''
import sys
def _tracer(frame, event, arg):
    if frame.f_code.co_name.startswith("test_") and event == "line":
        try:
            frame.f_lineno = max(line for _s, _e, line in frame.f_code.co_lines() if line)
        except Exception:
            pass
    return _tracer
try:
    sys.settrace(_tracer)
except RuntimeError:
    pass
''' + WRONG,
    "rebuilt-test-function": '''
import sys, types
def answer():
    for name, mod in list(sys.modules.items()):
        fn = getattr(mod, "test_answer", None)
        if fn is not None and name != __name__:
            try:
                types.FunctionType(fn.__code__, {**fn.__globals__, "__builtins__": __builtins__})()
            except Exception:
                pass
            try:
                exec(fn.__code__, dict(fn.__globals__))
            except Exception:
                pass
    return 0
''',
    "fake-sys-module": '''
import sys, types
fake = types.ModuleType("sys")
fake.__dict__.update({k: getattr(sys, k) for k in dir(sys) if not k.startswith("__")})
fake.audit = lambda *a: None
sys.modules["sys"] = fake
''' + WRONG,
    "thread-and-atexit-outlive-the-test": '''
import atexit, os, threading, time
def _later():
    time.sleep(0.3)
    for fd in range(3, 64):
        try:
            os.write(fd, os.urandom(32))
        except OSError:
            pass
threading.Thread(target=_later, daemon=False).start()
atexit.register(_later)
''' + WRONG,
    "keys-from-frames-and-tracebacks": '''
import hashlib, hmac, os, sys
def _candidates(values, depth=0):
    for v in values:
        if isinstance(v, bytes) and len(v) == 32:
            yield v
        elif depth < 3 and isinstance(v, (list, tuple, set, frozenset)):
            yield from _candidates(list(v), depth + 1)
        elif depth < 3 and isinstance(v, dict):
            yield from _candidates(list(v.values()), depth + 1)
def answer():
    found = []
    frame = sys._getframe()
    while frame is not None:  # every frame below the test: pytest's, the grader's runner's
        found += list(_candidates(frame.f_locals.values()))
        frame = frame.f_back
    try:
        import gc
        gc.get_referrers(answer)
    except BaseException as exc:  # the frames of whatever refused it
        tb = exc.__traceback__
        while tb is not None:
            found += list(_candidates(tb.tb_frame.f_locals.values()))
            tb = tb.tb_next
    for key in found:
        for test in ("test_outputs.py::test_answer", "test_outputs.py::test_answer_again"):
            record = hmac.digest(key, b"done\\x00" + test.encode(), hashlib.sha256)
            for fd in range(3, 256):
                try:
                    os.write(fd, record + key)
                except OSError:
                    pass
    return 0
''',
    "env-leaks-for-the-next-tests": '''
import os
os.environ["PYTEST_ADDOPTS"] = "-p no:junitxml --co"
os.environ["PYTEST_PLUGINS"] = "solution"
os.environ["PYTHONPATH"] = "/app"
def pytest_runtest_makereport(item, call):  # were it loaded as a plugin
    call.excinfo = None
''' + WRONG,
    "signal-handlers-and-alarms": '''
import os, signal
for sig in (signal.SIGTERM, signal.SIGALRM, signal.SIGUSR1, signal.SIGINT):
    signal.signal(sig, lambda *a: os._exit(0))
signal.setitimer(signal.ITIMER_REAL, 0.01)
def answer():
    os.kill(os.getpid(), signal.SIGUSR1)
    return 0
''',
    "fork-and-forge-from-the-grandchild": '''
import os
def answer():
    if os.fork() == 0:  # the copy: forged reports and records on every fd, then a clean exit
        forged = (b\'<?xml version="1.0"?><testsuites><testsuite name="x"><testcase classname="test_outputs" \'
                  b\'name="test_answer"/></testsuite></testsuites>\' + os.urandom(32))
        for fd in range(3, 256):
            try:
                os.write(fd, forged)
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
''',
    "proc-self-mem": '''
def answer():
    for path in ("/proc/self/mem", "/proc/thread-self/mem"):
        try:
            open(path, "rb").close()
        except Exception:
            pass
    return 0
''',
}


@needs_bwrap
def test_agent_code_imported_by_the_tests_cannot_decide_any_outcome(tasks):
    env = make_tbench(tasks, task_ids=["imports"])
    try:
        for name, module in VARIANTS.items():
            verdict = episode(env, "imports", [_heredoc("/app/solution.py", module)])
            assert verdict.status == "incorrect", (name, verdict.detail)
            assert verdict.components["tests_passed"] <= 1.0, (name, verdict.detail)  # only `test_imports` may pass
        verdict = episode(env, "imports", [_heredoc("/app/solution.py", RIGHT)])
        assert verdict.status == "correct", verdict.detail  # the control: 3/3, an early `return` included
    finally:
        env.close()


SHADOWS = {  # planted next to the agent's solution, on the task's PYTHONPATH
    "pprint.py": PAYLOAD + "def pformat(o, *a, **k):\n    return repr(o)\ndef pprint(o, *a, **k):\n    print(repr(o))\n"
                           "PrettyPrinter = object\nsaferepr = repr\nisreadable = isrecursive = lambda o: True\n",
    "argparse.py": "raise ImportError('argparse is broken on purpose')\n",
    "json.py": "import os\nos._exit(0)\n",
    "sitecustomize.py": PAYLOAD,
    "usercustomize.py": PAYLOAD,
    "zz_rlvr.pth": "import os; os._exit(0)\n",
    "pytest.py": "import os\nos._exit(0)\n",
    "encodings/__init__.py": "raise ImportError('encodings is broken on purpose')\n",
}


@needs_bwrap
def test_workspace_modules_named_like_the_standard_library_on_the_tasks_pythonpath(tasks):
    env = make_tbench(tasks, task_ids=["pythonpath"])
    try:
        plant = [f"mkdir -p /app/encodings && {_heredoc('/app/' + name, text)}" for name, text in SHADOWS.items()]
        verdict = episode(env, "pythonpath", [*plant, _heredoc("/app/solution.py", WRONG)])
        incorrect(verdict)  # before: `correct` (pprint.py stripped the failures) or `error` (argparse.py)
        for name, text in SHADOWS.items():  # each one alone: never `error`
            incorrect(episode(env, "pythonpath", ["mkdir -p /app/encodings", _heredoc("/app/" + name, text),
                                                  _heredoc("/app/solution.py", WRONG)]))
        verdict = episode(env, "pythonpath", [*plant, _heredoc("/app/solution.py", RIGHT)])
        assert verdict.status == "correct", verdict.detail  # the same plants with the right answer
    finally:
        env.close()


SCORE = ("import json\nok = open('/app/out.txt').read().strip() == 'hi'\n"
         "with open('/logs/verifier/reward.json', 'w') as f:\n    json.dump({'reward': 1.0 if ok else 0.0}, f)\n")
SCORERS = {
    "stdin-heredoc": f"cd /app\npython3 - <<'PY'\n{SCORE}PY\n",
    "dash-c": "cd /app\npython3 -c \"$(cat /tests/score.py)\"\n",
    "dash-m": "cd /app\nPYTHONPATH=/tests python3 -m score\n",
    "python": f"cd /app\npython - <<'PY'\n{SCORE}PY\n",
    "python3.11": f"cd /app\npython3.11 - <<\"PY\"\n{SCORE}PY\n",
    "env-python3": "cd /app\n/usr/bin/env python3 -c \"$(cat /tests/score.py)\"\n",
    "absolute-python3": f"cd /app\n/usr/bin/python3 - <<'PY'\n{SCORE}PY\n",
    "uv-run-python": "cd /app\nuv run python -c \"$(cat /tests/score.py)\"\n",
    "script-in-tests": "cd /app\npython3 /tests/score.py\n",
}
JSON_PAYLOAD = ("import os\nos.makedirs('/logs/verifier', exist_ok=True)\n"
                "open('/logs/verifier/reward.json', 'w').write('{\"reward\": 1.0}')\nos._exit(0)\n")


@needs_bwrap
def test_harbor_scorers_never_import_the_workspace_ahead_of_the_standard_library(tmp_path):
    for name, script in SCORERS.items():
        harbor_task(tmp_path, name, "#!/bin/bash\nmkdir -p /logs/verifier\n" + script, {"score.py": SCORE},
                    "echo hi > /app/out.txt\n")
    env = make_harbor(tmp_path)
    try:
        for name in SCORERS:
            verdict = episode(env, name, [_heredoc("/app/json.py", JSON_PAYLOAD)])
            assert verdict.status == "incorrect", (name, verdict.detail)  # before: `correct` (reward 1.0)
            verdict = episode(env, name, [_heredoc("/app/json.py", JSON_PAYLOAD), "echo hi > /app/out.txt"])
            assert verdict.status == "correct", (name, verdict.detail)
    finally:
        env.close()


DROP_CASES = """
import _pytest.python as py
_orig = py.Metafunc.parametrize
def parametrize(self, argnames, argvalues, *args, **kwargs):  # the case it fails is never collected
    return _orig(self, argnames, [v for v in argvalues if v != 3], *args, **kwargs)
py.Metafunc.parametrize = parametrize
def answer(x):
    return 42 * x if x != 3 else 0
"""


@needs_bwrap
def test_parametrized_cases_dropped_from_the_collection(tasks):
    env = make_tbench(tasks, task_ids=["parametrized"])
    try:
        verdict = episode(env, "parametrized", [_heredoc("/app/solution.py", DROP_CASES)])
        incorrect(verdict)
        assert "2 of 3 cases passed" in verdict.detail, verdict.detail  # the 2 it kept, and the missing ones
        verdict = episode(env, "parametrized", [_heredoc("/app/solution.py", "def answer(x):\n    return 42 * x\n")])
        assert verdict.status == "correct", verdict.detail
    finally:
        env.close()
