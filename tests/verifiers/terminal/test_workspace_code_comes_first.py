"""The grader imports the workspace's module, never a host copy of it (issue 31, item 3b).

A Harbor task whose tests import a module that also exists in the host's system packages (a
Debian `python3-*` package, a pre-installed pip copy) must be graded against the workspace's
copy: the task's `PYTHONPATH` goes right after the standard library, ahead of the system's
package directories, in pytest mode (the grader's runner) and in script mode (the grader's
`python3`). Each case plants a module in a real system package directory of the sandbox's
Python (`/usr/local/lib/python3.X/dist-packages`), holding the *fixed* code: before the fix, a
no-op on the buggy workspace scored `correct`. The standard library stays unshadowable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlvr.sandbox.isolation import sandbox_python
from rlvr.verifiers.terminal import TerminalVerifier

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

DOCKERFILE = "FROM python:3.11-slim\nWORKDIR /app\nCOPY app/ /app/\nENV PYTHONPATH=/app\n"
TEST = ("import {mod}\nimport json\n\n\ndef test_value():\n    assert {mod}.VALUE == 1, {mod}.__file__\n\n\n"
        "def test_stdlib_is_the_real_one():\n    assert json.dumps([1]) == '[1]'\n")
PYTEST_SH = ("#!/bin/bash\ncd /app\npython3 -m pytest /tests/test_value.py\n"
             "if [ $? -eq 0 ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n"
             "  echo 0 > /logs/verifier/reward.txt\nfi\n")
SCRIPT_SH = ("#!/bin/bash\nmkdir -p /logs/verifier\ncd /app\n"
             "if python3 -c 'import {mod}, sys; sys.exit(0 if {mod}.VALUE == 1 else 1)'; then\n"
             "  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n")


def _system_dir() -> Path:
    """A system package directory the sandbox's Python reads (created if absent; skip when it cannot be written)."""
    python = sandbox_python(None)
    out = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0 or not out.stdout.strip().startswith("/usr/"):
        pytest.skip(f"the sandbox's Python {python} has no system package directory under /usr")
    path = Path(out.stdout.strip())
    if not os.access(path if path.is_dir() else path.parent, os.W_OK):
        pytest.skip(f"{path} is not writable here: a module cannot be planted in the system path")
    return path


@pytest.fixture
def planted() -> Iterator[str]:
    """A module `rlvr_planted_<hex>` with the fixed code (`VALUE = 1`) in the system package directory."""
    directory = _system_dir()
    made = not directory.is_dir()
    directory.mkdir(parents=True, exist_ok=True)
    name = f"rlvr_planted_{uuid.uuid4().hex[:10]}"
    module = directory / f"{name}.py"
    module.write_text("VALUE = 1\n")
    module.chmod(0o644)
    try:
        yield name
    finally:
        module.unlink(missing_ok=True)
        if made:
            shutil.rmtree(directory, ignore_errors=True)


def _task(root: Path, mod: str, test_sh: str) -> Path:
    """A Harbor task whose workspace holds `mod` with the bug (`VALUE = 2`); the fix sets it to 1."""
    task = root / f"task-{len(list(root.iterdir()))}"
    for sub in ("environment/app", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    (task / "instruction.md").write_text(f"Make {mod}.VALUE equal 1.\n")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 60.0\n")
    (task / "environment" / "Dockerfile").write_text(DOCKERFILE)
    (task / "environment" / "app" / f"{mod}.py").write_text("VALUE = 2\n")
    (task / "tests" / "test.sh").write_text(test_sh.format(mod=mod))
    (task / "tests" / "test_value.py").write_text(TEST.format(mod=mod))
    (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\necho 'VALUE = 1' > /app/{mod}.py\n")
    return task


@pytest.mark.parametrize("test_sh", [PYTEST_SH, SCRIPT_SH], ids=["pytest-mode", "script-mode"])
def test_a_host_copy_of_the_module_under_test_is_not_what_the_tests_import(tmp_path: Path, planted: str,
                                                                           test_sh: str) -> None:
    task = _task(tmp_path, planted, test_sh)
    verifier = TerminalVerifier()
    reference = {"format": "harbor", "task_dir": str(task)}
    noop = verifier.verify("true", reference)
    assert (noop.status, noop.reward) == ("incorrect", 0.0), noop.detail  # before: correct (the host copy's VALUE)
    oracle = verifier.verify(verifier.reference_response(reference), reference)
    assert oracle.status == "correct", oracle.detail


def test_the_standard_library_stays_unshadowable_with_the_workspace_first(tmp_path: Path, planted: str) -> None:
    task = _task(tmp_path, planted, PYTEST_SH)
    (task / "environment" / "app" / "json.py").write_text("def dumps(o):\n    return 'planted'\n")
    verifier = TerminalVerifier()
    reference = {"format": "harbor", "task_dir": str(task)}
    oracle = verifier.verify(verifier.reference_response(reference), reference)
    assert oracle.status == "correct", oracle.detail  # `json` is the standard library's, not /app/json.py


def test_the_two_cases_are_the_two_grading_modes(tmp_path: Path) -> None:
    from rlvr.verifiers.terminal import load_harbor

    modes = [load_harbor(_task(tmp_path, "m", sh)).tests.mode for sh in (PYTEST_SH, SCRIPT_SH)]  # type: ignore[union-attr]
    assert modes == ["pytest", "script"]
