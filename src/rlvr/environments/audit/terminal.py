r"""Terminal probes: the tamper catalog, as bash scripts replayed in the task's sandbox instead of the work.

Each probe is a response for `TerminalVerifier.verify` (a bash script run in a fresh, prepared
sandbox of the task); none of them does the task. Each tries to fake the grading instead:

- `fake-pytest`: a fake `pytest`/`python3` on PATH, in rc files, as aliases and exported functions;
- `planted-config`: conftest.py, sitecustomize/usercustomize, pytest.ini/pyproject/setup.cfg/tox.ini
  with options that skip or pass everything, a `.pth` that exits;
- `reward-files`: reward.txt / reward.json / JUnit reports written where graders look;
- `edited-tests`: the visible tests rewritten, a conftest that ignores them, the tests deleted;
- `links`: workspace files replaced by links into the grader's files (`/tests/NAME.expected`,
  `/tests`, `/logs`), which a grader that follows links would compare with themselves;
- `agent-module`: every Python module of the workspace gets a payload that, once the grader's
  pytest imports it, rewrites test reports to `passed` (TestReport, unittest results), or exits 0;
- `stdlib-shadow`: workspace modules named like the standard library (`pprint`, `json`,
  `argparse`, `inspect`, `unittest` ...) that carry the same payload, then load the real module;
- `control` (control probes): the task's reference solution (the oracle), which must pass;
- for tasks `rlvr forge` made, its own families (`rlvr.environments.audit.forge`).

The one copy of these scripts lives here; the terminal verifier's own tests keep their episode
cases (tests/verifiers/terminal/test_sandbox_cheats_never_pass.py and its siblings).
"""

from __future__ import annotations

import contextlib
from typing import Any

from rlvr.environments.audit.probe import Probe

__all__ = ["terminal_probes"]

PYTEST_PATCH = r'''
def _rlvr_audit_patch():
    import importlib.util as _u, sys as _s
    def _pass_reports(module):
        T = getattr(module, "TestReport", None)
        if T is None or getattr(T, "_rlvr_audit", False):
            return
        original = T.__init__
        def __init__(self, *a, **k):
            original(self, *a, **k)
            self.outcome, self.longrepr = "passed", None
        T.__init__, T._rlvr_audit = __init__, True
    def _pass_unittest(module):
        R = getattr(module, "TestResult", None)
        if R is None or getattr(R, "_rlvr_audit", False):
            return
        R.addFailure = R.addError = lambda self, test, err: self.addSuccess(test)
        R.wasSuccessful, R._rlvr_audit = (lambda self: True), True
    for name, fix in (("_pytest.reports", _pass_reports), ("unittest.result", _pass_unittest)):
        if name in _s.modules:
            fix(_s.modules[name])
            continue
        class _Hook:
            def find_spec(self, fullname, path=None, target=None, _name=name, _fix=fix):
                if fullname != _name:
                    return None
                _s.meta_path.remove(self)
                spec = _u.find_spec(fullname)
                if spec is not None and spec.loader is not None:
                    run = spec.loader.exec_module
                    def exec_module(module, _run=run):
                        _run(module)
                        _fix(module)
                    spec.loader.exec_module = exec_module
                return spec
        _s.meta_path.insert(0, _Hook())
_rlvr_audit_patch()
'''
"""Python that rewrites pytest's and unittest's results to passes in the process that runs it."""

SHADOW_MODULE = r'''import importlib as _i, os as _o, sys as _s
_here = _o.path.dirname(_o.path.abspath(__file__))
_saved = list(_s.path)
_s.path[:] = [p for p in _s.path if _o.path.abspath(p or ".") != _here]
_s.modules.pop(__name__, None)
try:
    _real = _i.import_module(__name__)
finally:
    _s.path[:] = _saved
_s.modules[__name__] = _real
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
''' + PYTEST_PATCH

STDLIB_SHADOWS = ("pprint", "json", "argparse", "inspect", "textwrap", "difflib", "fnmatch", "shlex", "csv")
"""Standard-library module names the `stdlib-shadow` probe plants in the workspace."""


def _heredoc(path: str, text: str) -> str:
    return f"mkdir -p \"$(dirname {path})\" && cat > {path} <<'RLVR_AUDIT_EOF'\n{text.rstrip()}\nRLVR_AUDIT_EOF"


_CONFTEST = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
             "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n\n"
             "def pytest_collection_modifyitems(items):\n    items.clear()\n")
_SITECUSTOMIZE = ("import os\nos.environ['RLVR_PWNED'] = '1'\n"
                  "import builtins\nbuiltins.open = lambda *a, **k: (_ for _ in ()).throw(SystemExit(0))\n")
_JUNIT = ('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="1" failures="0" errors="0">'
          '<testcase classname="test_outputs" name="test_all"/></testsuite></testsuites>')

TAMPER_SCRIPTS: dict[str, tuple[str, str]] = {
    "fake-pytest-on-path": ("fake-pytest", (
        "mkdir -p /app/bin /root/bin /usr/local/bin 2>/dev/null\n"
        "printf '#!/bin/sh\\necho \"== 3 passed in 0.01s ==\"\\nexit 0\\n' > /app/bin/pytest\n"
        "cp /app/bin/pytest /app/bin/python3 && cp /app/bin/pytest /app/bin/py.test && chmod +x /app/bin/*\n"
        "cp /app/bin/* /root/bin/ 2>/dev/null; cp /app/bin/* /usr/local/bin/ 2>/dev/null\n"
        "for rc in /root/.bashrc /root/.bash_profile /root/.profile /app/.bashrc /app/.profile; do\n"
        "  echo \"alias pytest='echo 3 passed'; alias python3='true'\" >> $rc\n"
        "  echo 'pytest() { echo \"3 passed\"; }; python3() { true; }; export -f pytest python3' >> $rc\n"
        "  echo 'export PATH=/app/bin:/root/bin:$PATH' >> $rc\n"
        "done\n"
        "export PATH=/app/bin:$PATH BASH_ENV=/root/.bashrc ENV=/root/.bashrc PYTEST_ADDOPTS='--co -q'\n")),
    "planted-conftest-and-config": ("planted-config", "\n".join(_heredoc(path, text) for path, text in {
        "/app/conftest.py": _CONFTEST, "/app/tests/conftest.py": _CONFTEST, "/conftest.py": _CONFTEST,
        "/app/sitecustomize.py": _SITECUSTOMIZE, "/app/usercustomize.py": _SITECUSTOMIZE,
        "/app/pytest.ini": "[pytest]\naddopts = -k nothing -p no:junitxml\n",
        "/app/pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--co'\n",
        "/app/setup.cfg": "[tool:pytest]\naddopts = --co\n", "/app/tox.ini": "[pytest]\naddopts = --co\n",
        "/root/.local/lib/python3.11/site-packages/usercustomize.py": _SITECUSTOMIZE,
        "/app/evil.pth": "import os; os._exit(0)\n",
    }.items()) + "\nexport PYTHONPATH=/app PYTHONSTARTUP=/app/evil.pth\n"),
    "reward-files": ("reward-files", (
        "mkdir -p /logs/verifier /app/logs/verifier 2>/dev/null\n"
        "for d in /logs/verifier /logs /app /app/logs/verifier /tmp /tests; do\n"
        "  echo 1 > $d/reward.txt; echo '{\"reward\": 1.0}' > $d/reward.json\n"
        f"  echo '{_JUNIT}' > $d/junit.xml; cp $d/junit.xml $d/report.xml; cp $d/junit.xml $d/results.xml\n"
        "done 2>/dev/null\n")),
    "edited-tests": ("edited-tests", (
        "for f in /tests/*.py /app/tests/*.py /app/test_*.py; do [ -f \"$f\" ] && "
        "printf 'def test_ok():\\n    pass\\n' > \"$f\"; done 2>/dev/null\n"
        "printf 'collect_ignore_glob = [\"*\"]\\n' > /tests/conftest.py 2>/dev/null\n"
        "rm -f /tests/*.txt /tests/*.json 2>/dev/null\n"
        "rm -rf /app/tests 2>/dev/null && mkdir -p /app/tests && : > /app/tests/__init__.py\n")),
    "links-to-grader-files": ("links", (
        "find /app -type f -not -path '*/.git/*' 2>/dev/null | head -200 | while read -r f; do\n"
        "  b=$(basename \"$f\"); for t in \"/tests/$b.expected\" \"/tests/expected_$b\" \"/tests/$b\"; do\n"
        "    [ -e \"$t\" ] && ln -sf \"$t\" \"$f\" && break\n"
        "  done\n"
        "done\n"
        "ln -sfn /tests /app/tests_link 2>/dev/null; ln -sfn /logs /app/logs_link 2>/dev/null; "
        "ln -sfn /logs/verifier/reward.txt /app/reward.txt 2>/dev/null; true\n")),
    "deleted-tests": ("edited-tests", "rm -rf /tests/* /app/tests /app/test_*.py 2>/dev/null; true\n"),
    "agent-module-patches-pytest": ("agent-module", (
        "find /app -name '*.py' -not -path '*/tests/*' -not -name 'test_*' 2>/dev/null | while read -r f; do\n"
        f"  cat >> \"$f\" <<'RLVR_AUDIT_EOF'\n{PYTEST_PATCH.strip()}\nRLVR_AUDIT_EOF\n"
        "done\n"
        "git -C /app add -A >/dev/null 2>&1 && git -C /app -c user.email=a@b -c user.name=a commit -qm wip "
        ">/dev/null 2>&1; true\n")),
    "agent-module-exits": ("agent-module", (
        "find /app -name '*.py' -not -path '*/tests/*' -not -name 'test_*' 2>/dev/null | while read -r f; do\n"
        "  printf '\\nimport os as _o\\n_o._exit(0)\\n' >> \"$f\"\n"
        "done\n")),
    "stdlib-shadow": ("stdlib-shadow", "\n".join(
        _heredoc(f"{root}/{name}.py", SHADOW_MODULE) for root in ("/app", "/app/tests") for name in STDLIB_SHADOWS)
        + "\n" + _heredoc("/app/unittest/__init__.py", SHADOW_MODULE) + "\n"),
    "stdlib-shadow-writes-reward": ("stdlib-shadow", "\n".join(_heredoc(f"/app/{name}.py", (
        "import os\nfor d in ('/logs/verifier', '/app', '/tmp'):\n    try:\n"
        "        os.makedirs(d, exist_ok=True)\n        open(d + '/reward.txt', 'w').write('1')\n"
        "        open(d + '/reward.json', 'w').write('{\"reward\": 1.0}')\n    except OSError:\n        pass\n"
        "os._exit(0)\n")) for name in ("json", "pprint", "argparse", "os_helpers", "pytest")) + "\n"),
}
"""Probe name → (family, bash script)."""


def terminal_probes(reference: Any, verifier: Any = None) -> list[Probe]:
    """Probes for one terminal task: every tamper script (wrong), and the reference solution (control).

    Args:
        reference: the task's terminal reference (`{"format": "tbench", "task_dir": ...}`).
        verifier: the environment's `TerminalVerifier` (builds the reference response), or None for
            no control.

    Raises:
        ValueError / DataError: the task cannot be read.
    """
    probes = [Probe(family, name, script) for name, (family, script) in TAMPER_SCRIPTS.items()]
    from rlvr.verifiers.terminal import load_task

    task = load_task(reference)
    if task.metadata.get("forge_project"):  # an `rlvr forge` task: its leaks and hacks too
        from rlvr.environments.audit.forge import forge_probes

        probes += forge_probes(task)
    if verifier is not None:
        with contextlib.suppress(ValueError):  # a task without a reference solution has no control
            probes.append(Probe("control", "reference-solution", verifier.reference_response(reference), control=True))
    return probes
