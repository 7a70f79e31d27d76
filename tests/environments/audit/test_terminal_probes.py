"""Terminal probes: every tamper script is valid bash, and the in-process payloads really fool a naive pytest run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.environments.audit.terminal import (
    PYTEST_PATCH,
    SHADOW_MODULE,
    STDLIB_SHADOWS,
    TAMPER_SCRIPTS,
    terminal_probes,
)

FAILING_TEST = "import agent_module\n\ndef test_wrong():\n    assert agent_module.answer() == 42\n"


@pytest.mark.parametrize("name", sorted(TAMPER_SCRIPTS))
def test_every_tamper_script_is_valid_bash(name: str) -> None:
    _family, script = TAMPER_SCRIPTS[name]
    bash = shutil.which("bash")
    assert bash is not None
    checked = subprocess.run([bash, "-n"], input=script, text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr


def test_probes_are_the_catalog_plus_the_reference_control() -> None:
    class Oracle:
        def reference_response(self, reference: object) -> str:
            return "bash /oracle/solution.sh"

    import rlvr.environments

    task_dir = Path(rlvr.environments.__file__).parent / "data" / "terminal" / "tbench" / "count-log-errors"
    probes = terminal_probes({"format": "tbench", "task_dir": str(task_dir)}, Oracle())  # not a forge task
    assert [p.name for p in probes if not p.control] == list(TAMPER_SCRIPTS)
    assert [(p.name, p.response) for p in probes if p.control] == [("reference-solution", "bash /oracle/solution.sh")]
    assert {p.family for p in probes} == {"fake-pytest", "planted-config", "reward-files", "edited-tests", "links",
                                          "agent-module", "stdlib-shadow", "control"}


def _pytest(tmp_path: Path, *extra: str, env_path: str | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_task.py").write_text(FAILING_TEST)
    env = {"PYTHONPATH": env_path or str(tmp_path), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_task.py", *extra],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)


def test_the_agent_module_payload_turns_a_failing_pytest_run_into_a_pass(tmp_path: Path) -> None:
    (tmp_path / "agent_module.py").write_text("def answer():\n    return 0\n")
    honest = _pytest(tmp_path)
    assert honest.returncode == 1 and "1 failed" in honest.stdout
    (tmp_path / "agent_module.py").write_text("def answer():\n    return 0\n" + PYTEST_PATCH)
    cheated = _pytest(tmp_path)
    assert cheated.returncode == 0 and "1 passed" in cheated.stdout, cheated.stdout  # the cheat is real


def test_stdlib_shadows_load_the_real_module_and_carry_the_payload(tmp_path: Path) -> None:
    shadows = tmp_path / "shadows"
    shadows.mkdir()
    for name in STDLIB_SHADOWS:
        (shadows / f"{name}.py").write_text(SHADOW_MODULE)
    code = ("import json, pprint, sys\nprint(json.dumps([1, 2]), pprint.pformat({'a': 1}), "
            "any(type(h).__name__ == '_Hook' for h in sys.meta_path))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(shadows)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[1,", "2]", "{'a':", "1}", "True"]
