"""`swe/forge-v1`: episodes over forge tasks (shell + `edit_file`), graded by the hidden tests; the audit's families.

Uses the session's `tinycalc_forged` output, the real bubblewrap sandbox and rlvr's terminal grader.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import rlvr
from forge_projects import fix_hunk
from rlvr.core.errors import DataError
from rlvr.environments.audit import audit
from rlvr.environments.forge.env import ForgeEnv, forge_task_dirs
from rlvr.environments.multi_turn import tool_call_message

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing")]


def _episode(env: ForgeEnv, task_id: str, calls: list[tuple[str, dict]]):  # type: ignore[no-untyped-def,type-arg]
    env.reset_sync(next(t for t in env.tasks if t.id == task_id))
    observations = []
    for i, (name, args) in enumerate(calls):
        step = env.step_sync(tool_call_message(name, args, call_id=f"c{i}"))
        observations.append(step.messages[0].content if step.messages else "")
        assert not step.terminated
    final = env.step_sync(tool_call_message("submit", {"answer": ""}, call_id="s"))
    assert final.verdict is not None
    return final.verdict, observations


def test_the_env_is_registered_and_offers_edit_file(tinycalc_forged: Path) -> None:
    env = rlvr.make("swe/forge-v1", tasks_dir=str(tinycalc_forged))
    assert isinstance(env, ForgeEnv) and len(env.tasks) == 3
    assert list(env.tools) == ["run", "edit_file", "submit"] and env.spec.id == "swe/forge-v1"
    assert "/app" in env.tasks[0].prompt[-1].content and "hidden" in env.tasks[0].prompt[0].content
    with pytest.raises(DataError, match="no rlvr forge tasks"):
        forge_task_dirs(Path(__file__).resolve().parents[2] / "data" / "terminal" / "harbor")


def test_fixing_the_bug_with_edit_file_scores_correct_and_doing_nothing_does_not(tinycalc_forged: Path) -> None:
    env = rlvr.make("swe/forge-v1", tasks_dir=str(tinycalc_forged))
    task = env.tasks[0]
    path, old, new = fix_hunk(tinycalc_forged / task.id)
    verdict, seen = _episode(env, task.id, [("run", {"command": "git status --short && git log --oneline | wc -l"}),
                                            ("edit_file", {"path": path, "old_text": old, "new_text": new})])
    assert "[exit code 0]\n1" in seen[0]  # a clean tree, one commit
    assert f"edited /app/{path}" in seen[1]
    assert verdict.status == "correct", verdict.detail
    nothing, _ = _episode(env, task.id, [])
    assert (nothing.status, nothing.reward) == ("incorrect", 0.0)
    wrong, seen = _episode(env, task.id, [("edit_file", {"path": path, "old_text": "no such text", "new_text": ""})])
    assert "occurs 0 times" in seen[0] and wrong.status == "incorrect"


def test_the_oracle_actions_score_correct(tinycalc_forged: Path) -> None:
    env = rlvr.make("swe/forge-v1", tasks_dir=str(tinycalc_forged))
    task = env.tasks[1]
    actions = env.reference_actions(task)
    assert actions is not None
    env.reset_sync(task)
    result = None
    for action in actions:
        result = env.step_sync(action)
    assert result is not None and result.verdict is not None and result.verdict.status == "correct"


def test_the_adversarial_audit_finds_no_false_pass(tinycalc_forged: Path) -> None:
    env = rlvr.make("swe/forge-v1", tasks_dir=str(tinycalc_forged))
    report = audit(env, n=1)
    assert report.domain == "terminal" and not report.skipped
    forge_families = {"original-source", "test-tamper", "skip-or-exit", "collection-break", "patched-pytest",
                      "no-op"}
    assert forge_families <= set(report.families), sorted(report.families)
    assert report.false_passes == 0, json.dumps(report.to_json()["families"], indent=1)[:3000]
    assert report.controls.tried == 1 and report.controls_failed == 0, report.controls.examples


def test_the_audit_finds_an_original_the_sandbox_can_read(tinycalc_forged: Path) -> None:
    """The `original-source` probe is no formality: with the original planted where the sandbox reads it, it passes."""
    from forge_projects import vendored_copy
    from rlvr.environments.audit.forge import forge_probes
    from rlvr.verifiers.terminal import TerminalVerifier, load_task

    task_dir = next(p.parent for p in sorted(tinycalc_forged.glob("*/task.toml")))
    project = next(tinycalc_forged.parent.glob("src/tinycalc"))
    reference = {"format": "harbor", "task_dir": str(task_dir)}
    probe = next(p for p in forge_probes(load_task(reference)) if p.family == "original-source")
    verifier = TerminalVerifier()
    assert verifier.verify(probe.response, reference).status == "incorrect"  # nothing to find
    with vendored_copy({"vendor/tinycalc/core.py": (project / "tinycalc" / "core.py").read_text()}):
        found = verifier.verify(probe.response, reference)
    assert found.status == "correct", found.detail  # the probe restored the original: forge must never allow this
