"""A test the task's test script names (`pytest /tests/f.py::test`) must run: one that vanishes fails.

A selective run counts what ran; a named test whose file the code under test keeps from being
collected (an import error, a module-level exit of the collection) would otherwise vanish, and
the remaining named tests decide alone. `rlvr forge` tasks name their FAIL_TO_PASS and
PASS_TO_PASS tests this way, so this is the hack a policy would find first: break the import of
the file holding the failing test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rlvr.verifiers.terminal import TerminalVerifier

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

TEST_SH = ("#!/bin/bash\ncd /app\npytest /tests/test_a.py::test_one /tests/test_b.py::TestB::test_two "
           "/tests/test_b.py::test_cases\n"
           "if [ $? -eq 0 ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n"
             "  echo 0 > /logs/verifier/reward.txt\nfi\n")


def _task(root: Path) -> Path:
    task = root / "named-tests"
    for sub in ("environment/app", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    (task / "instruction.md").write_text("Make app_b.VALUE equal 1.\n")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 60.0\n")
    (task / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /app\nCOPY app/ /app/\n"
                                                     "ENV PYTHONPATH=/app\n")
    (task / "environment" / "app" / "app_a.py").write_text("OK = True\n")
    (task / "environment" / "app" / "app_b.py").write_text("VALUE = 2\n")
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "tests" / "test_a.py").write_text("import app_a\n\n\ndef test_one():\n    assert app_a.OK\n")
    (task / "tests" / "test_b.py").write_text(
        "import pytest\n\nimport app_b\n\n\nclass TestB:\n    def test_two(self):\n"
        "        assert app_b.VALUE == 1\n\n\n"
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_cases(x):\n    assert app_b.VALUE == 1\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'VALUE = 1' > /app/app_b.py\n")
    return task


@pytest.mark.parametrize("cheat", [
    "echo 'raise ImportError(\"no\")' > /app/app_b.py",
    "printf 'import sys\\nif any(\"test_b\" in m for m in sys.modules):\\n    raise ImportError(\"hidden\")\\n"
    "VALUE = 2\\n' > /app/app_b.py",
], ids=["import-error", "import-error-only-for-the-failing-file"])
def test_a_named_test_kept_from_collection_fails_the_task(tmp_path: Path, cheat: str) -> None:
    task = _task(tmp_path)
    verifier = TerminalVerifier()
    reference = {"format": "harbor", "task_dir": str(task)}
    verdict = verifier.verify(cheat, reference)
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.detail  # before: correct (test_one alone)
    assert "test_b.py::TestB::test_two (not run)" in verdict.detail
    oracle = verifier.verify(verifier.reference_response(reference), reference)
    assert oracle.status == "correct", oracle.detail



def test_the_task_is_graded_in_pytest_mode(tmp_path: Path) -> None:
    from rlvr.verifiers.terminal import load_harbor

    plan = load_harbor(_task(tmp_path)).tests
    assert plan is not None and plan.mode == "pytest" and plan.selective


def test_only_the_named_tests_of_a_file_run(tmp_path: Path) -> None:
    task = _task(tmp_path)
    with (task / "tests" / "test_a.py").open("a") as f:  # a test the script does not name: it never runs
        f.write("\n\ndef test_not_named():\n    raise AssertionError('this test is not part of the task')\n")
    verifier = TerminalVerifier()
    reference = {"format": "harbor", "task_dir": str(task)}
    oracle = verifier.verify(verifier.reference_response(reference), reference)
    assert oracle.status == "correct", oracle.detail  # before: incorrect (the whole file ran)
    assert oracle.components["tests_total"] == 4.0 and "test_not_named" not in oracle.detail
