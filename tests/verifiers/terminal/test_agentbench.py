"""AgentBench-OS tasks shipped in the PyPI package inspect-evals: the self-contained ones run locally.

In `.venvs/extras` (inspect-evals installed with --no-deps: rlvr reads its data files only).
"""

from __future__ import annotations

import collections
import importlib.util
import shutil

import pytest

from rlvr.core.errors import MissingExtraError

pytestmark = [pytest.mark.extras,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)"),
              pytest.mark.skipif(importlib.util.find_spec("inspect_evals") is None,
                                 reason="inspect-evals is not installed (pip install --no-deps inspect-evals)")]


@pytest.fixture(scope="module")
def records():
    from rlvr.verifiers.terminal.agentbench import load_agentbench

    try:
        return load_agentbench("all")
    except MissingExtraError as exc:
        pytest.skip(str(exc))


def test_how_many_run_locally_and_why_the_rest_do_not(records):
    assert len(records) == 145  # 26 dev + 119 test in inspect-evals 0.28.0
    local = [r for r in records if r.runs_locally]
    reasons = collections.Counter(r.why_not.split(":")[0] for r in records if not r.runs_locally)
    assert len(local) == 96 and sum(reasons.values()) == 49
    assert set(reasons) <= {"init-file-not-shipped", "needs-other-users", "needs-packages-or-sudo",
                            "writes-system-paths", "command-on-system-path", "counts-processes",
                            "reads-unguaranteed-host-paths", "answer-fixed-to-inspect-image", "unscorable"}
    assert {r.evaluation for r in local} == {"match", "compare", "state"}


def test_env_lists_the_local_tasks_and_the_skipped_with_reasons():
    import rlvr

    env = rlvr.make("terminal/agentbench-os-v1")
    try:
        assert len(env.tasks) == 96 and len(env.skipped) == 49
        assert "96 tasks run locally" in env.placement_summary()
        assert all(why for _tid, why in env.skipped)
        assert env.tasks[0].prompt[-1].content  # the question
    finally:
        env.close()


def test_oracle_correct_and_noop_incorrect_on_every_local_task(tmp_path):
    from typer.testing import CliRunner

    from rlvr.runners.cli import app

    runner = CliRunner()
    for policy, want in (("oracle", {"correct"}), ("noop", {"incorrect"})):
        out = tmp_path / f"{policy}.jsonl"
        result = runner.invoke(app, ["eval", "--env", "terminal/agentbench-os-v1", "--policy", policy,
                                     "-o", str(out), "--concurrency", "8"])
        assert result.exit_code == 0, result.output
        import json

        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == 96
        bad = {r["task_id"]: r["verdict"]["detail"][:200] for r in rows if r["verdict"]["status"] not in want}
        assert not bad, (policy, bad)


def test_deleting_what_a_question_asks_about_does_not_make_a_wrong_answer_fit():
    """A question's expected answer is fixed before the agent acts: changing the files to fit does not pass."""
    import rlvr
    from rlvr.environments.multi_turn import tool_call_message

    env = rlvr.make("terminal/agentbench-os-v1", split="dev")
    try:
        task = next(t for t in env.tasks if t.metadata.get("evaluation") == "compare")
        env.reset_sync(task)
        wipe = "rm -rf /home/agent/* /home/agent/.[!.]* 2>/dev/null; ls -A"
        env.step_sync(tool_call_message("run", {"command": wipe}))
        final = env.step_sync(tool_call_message("submit", {"answer": "0"}, call_id="s"))
        assert final.verdict is not None and final.verdict.status == "incorrect", final.verdict
    finally:
        env.close()
