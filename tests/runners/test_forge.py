"""`rlvr forge` end to end (`rlvr.runners.forge.forge`): Harbor tasks the terminal grader agrees with, resumable.

Uses the session's `tinycalc_forged` output (three tasks from the tiny project the tests write),
the real bubblewrap sandbox and rlvr's own terminal grader.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlvr.core.errors import ConfigError
from rlvr.environments.terminal_data import make_harbor
from rlvr.verifiers.terminal import TerminalVerifier, load_harbor

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing")]


def _rows(out: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]


def test_tasks_are_harbor_directories_with_hidden_tests_and_the_reverse_patch(tinycalc_forged: Path) -> None:
    rows = _rows(tinycalc_forged)
    assert len(rows) == 3 and len({r["diff_hash"] for r in rows}) == 3
    for row in rows:
        root = tinycalc_forged / row["task_id"]
        task = load_harbor(root)
        assert task.placement == "local" and task.tests is not None and task.tests.mode == "pytest"
        assert task.tests.selective and task.env["PYTHONPATH"] == "/app"
        workspace = root / "environment" / "workspace"
        assert (workspace / "tinycalc" / "core.py").is_file() and not (workspace / "tests").exists()
        assert not list(workspace.rglob("*.egg-info")) and not list(workspace.rglob("__pycache__"))
        assert (root / "tests" / "test_core.py").is_file()
        instruction = (root / "instruction.md").read_text()
        for test_id in row["fail_to_pass"][:10]:
            assert f"tests/{test_id}" in instruction
        patch = (root / "solution" / "fix.patch").read_text()
        assert patch.startswith("--- a/tinycalc/core.py\n+++ b/tinycalc/core.py\n")
        removed = [line[1:].strip() for line in patch.splitlines()[2:] if line.startswith("-")]
        assert not any(line and line in instruction for line in removed)  # the buggy line is not quoted
        assert len(row["fail_to_pass"]) >= 1 and len(row["fail_to_pass"]) + len(row["pass_to_pass"]) <= 6


def test_the_terminal_grader_passes_the_oracle_and_fails_a_noop(tinycalc_forged: Path) -> None:
    verifier = TerminalVerifier()
    for row in _rows(tinycalc_forged)[:2]:
        reference = {"format": "harbor", "task_dir": str(tinycalc_forged / row["task_id"])}
        oracle = verifier.verify(verifier.reference_response(reference), reference)
        noop = verifier.verify("", reference)
        assert oracle.status == "correct", oracle.detail
        assert (noop.status, noop.reward) == ("incorrect", 0.0), noop.detail
        assert oracle.components["tests_total"] == len(row["fail_to_pass"]) + len(row["pass_to_pass"])


def test_terminal_harbor_v1_runs_the_tasks(tinycalc_forged: Path) -> None:
    env = make_harbor(tinycalc_forged)
    assert len(env.tasks) == 3 and not env.skipped


def test_a_rerun_resumes_and_another_configuration_is_refused(tinycalc_forged: Path) -> None:
    from rlvr.runners.forge import forge

    project = next(tinycalc_forged.parent.glob("src/tinycalc"))
    again = forge([str(project)], out=tinycalc_forged, n=3, seed=1, max_tests=6).projects[0]
    assert (again.validated, again.tried, again.tasks_total, again.error) == (0, 0, 3, "")
    with pytest.raises(ConfigError, match="seed: 1 → 2"):
        forge([str(project)], out=tinycalc_forged, n=3, seed=2, max_tests=6)


def test_a_bad_project_is_reported_and_the_run_goes_on(tinycalc_forged: Path, tmp_path: Path) -> None:
    from rlvr.runners.forge import forge

    bad = tmp_path / "notests"
    (bad / "pkg").mkdir(parents=True)
    (bad / "pyproject.toml").write_text('[project]\nname = "notests"\nversion = "0.1"\n')
    (bad / "pkg" / "__init__.py").write_text("")
    project = next(tinycalc_forged.parent.glob("src/tinycalc"))
    seen = []
    report = forge([str(bad), str(project)], out=tinycalc_forged, n=3, seed=1, max_tests=6, on_project=seen.append)
    assert [p.project for p in report.projects] == ["notests==0.1", "tinycalc==1.0"]
    assert report.projects[0].error.startswith("no tests") and report.projects[1].tasks_total == 3
    assert seen == report.projects


def test_an_output_the_sandbox_can_read_is_refused() -> None:
    from rlvr.runners.forge import forge

    with pytest.raises(ConfigError, match="every sandbox can read"):
        forge(["x"], out="/usr/share/rlvr-forge-test-never-created")


def test_an_issue_writer_rewrites_the_statement_and_its_failure_falls_back(tinycalc: Path, tmp_path: Path) -> None:
    from rlvr.runners.forge import forge
    from rlvr.verifiers.judge.testing import JudgeServer, Reply

    with JudgeServer() as server:
        server.reply = lambda body: Reply("# clamp() returns the wrong bound\n\nSeen in CI.")
        out = tmp_path / "issues"
        report = forge([str(tinycalc)], out=out, n=1, seed=1, max_tests=4, mutators="comparison-flip",
                       issue_writer=server.url, issue_model="writer")
        assert report.validated == 1 and server.requests and server.requests[0]["model"] == "writer"
    row = _rows(out)[0]
    instruction = (out / row["task_id"] / "instruction.md").read_text()
    assert instruction.startswith("# clamp() returns the wrong bound") and row["statement"] == "issue"
    assert f"tests/{row['fail_to_pass'][0]}" in instruction
    assert load_harbor(out / row["task_id"]).metadata["forge_statement"] == "issue"
    down = forge([str(tinycalc)], out=tmp_path / "down", n=1, seed=1, max_tests=4, mutators="comparison-flip",
                 issue_writer="http://127.0.0.1:9/v1")
    fallback = _rows(tmp_path / "down")[0]
    assert down.validated == 1 and fallback["statement"] == "ci-report" and "failed" in fallback["statement_note"]
    assert (tmp_path / "down" / fallback["task_id"] / "instruction.md").read_text().startswith("# Failing tests")


def test_a_project_vendored_on_the_host_is_refused(tinycalc: Path, tmp_path: Path) -> None:
    from forge_projects import vendored_copy
    from rlvr.runners.forge import forge

    files = {f"app/third_party/tinycalc/{name}": (tinycalc / "tinycalc" / name).read_text()
             for name in ("__init__.py", "core.py")}
    with vendored_copy(files) as root:
        report = forge([str(tinycalc)], out=tmp_path / "out", n=1)
    error = report.projects[0].error
    assert error.startswith("its source is readable in the sandbox") and str(root) in error


@pytest.mark.extras
def test_the_ray_engine_makes_the_same_tasks_as_the_local_one(tinycalc: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from rlvr.runners.forge import forge

    local = forge([str(tinycalc)], out=tmp_path / "local", n=2, seed=1, max_tests=4)
    ray = forge([str(tinycalc)], out=tmp_path / "ray", n=2, seed=1, max_tests=4, engine="ray", workers=2)
    assert local.validated == ray.validated == 2
    assert [r["task_id"] for r in _rows(tmp_path / "local")] == [r["task_id"] for r in _rows(tmp_path / "ray")]


def test_the_forge_command_resumes_a_run_and_prints_its_projects(tinycalc_forged: Path) -> None:
    from typer.testing import CliRunner

    from rlvr.runners.cli import app

    project = next(tinycalc_forged.parent.glob("src/tinycalc"))
    result = CliRunner().invoke(app, ["forge", "--source", str(project), "-o", str(tinycalc_forged), "-n", "3",
                                      "--seed", "1", "--max-tests", "6"])
    assert result.exit_code == 0, result.output
    assert "tinycalc" in result.output and "rlvr forge" in result.output


def test_the_forge_command_names_a_bad_option(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rlvr.runners.cli import app

    result = CliRunner().invoke(app, ["forge", "--source", str(tmp_path), "-o", str(tmp_path / "out"),
                                      "--mutators", "no-such-family"])
    assert result.exit_code == 2 and "unknown mutator(s) no-such-family" in result.output, result.output
    missing = CliRunner().invoke(app, ["forge", "-o", str(tmp_path / "out")])
    assert missing.exit_code == 2 and "--source PATH or --package" in missing.output, missing.output
