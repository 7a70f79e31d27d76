"""Reading task sources: Terminal-Bench and Harbor directories, Dockerfiles, test scripts, placement."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rlvr.core.errors import DataError
from rlvr.environments.terminal_data import TBENCH_SUITE
from rlvr.verifiers.terminal import find_task_dirs, load_harbor, load_task, load_tbench, parse_response
from rlvr.verifiers.terminal.testscript import plan_tests

HARBOR = Path(__file__).resolve().parents[2] / "data" / "terminal" / "harbor"
TB_TEMPLATE_TESTS = """#!/bin/bash

# Install curl
apt-get update
apt-get install -y curl

# Install uv
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh

source $HOME/.local/bin/env

# Check if we're in a valid working directory
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi

uv init
uv add pytest==8.4.1

uv run pytest $TEST_DIR/test_outputs.py -rA
"""


def make_tbench_task(root: Path, name: str, dockerfile: str, *, run_tests: str = "pytest $TEST_DIR/test_outputs.py -rA",
                     yaml_extra: str = "", compose: str | None = None, files: dict[str, str] | None = None) -> Path:
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text(f"instruction: |\n  Make /app/out.txt say hi.\ndifficulty: easy\n{yaml_extra}")
    (task / "Dockerfile").write_text(textwrap.dedent(dockerfile))
    (task / "run-tests.sh").write_text(f"#!/bin/bash\n{run_tests}\n")
    (task / "solution.sh").write_text("echo hi > /app/out.txt\n")
    (task / "tests" / "test_outputs.py").write_text(
        "from pathlib import Path\n\ndef test_out():\n    assert Path('/app/out.txt').read_text() == 'hi\\n'\n")
    if compose is not None:
        (task / "docker-compose.yaml").write_text(compose)
    for rel, text in (files or {}).items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    return task


def test_shipped_suite_reads_and_runs_locally():
    dirs = find_task_dirs(TBENCH_SUITE)
    assert len(dirs) >= 15
    tasks = [load_tbench(d) for d in dirs]
    assert all(t.placement == "local" and t.tests is not None and t.tests.mode == "pytest" for t in tasks)
    assert all(t.has_solution and t.workdir == "/app" for t in tasks)
    assert {t.task_id for t in tasks} >= {"long-running-build", "fix-python-pricing", "git-merge-conflict",
                                          "fix-topfiles-script", "cron-backup-job"}
    templated = [t for t in tasks if any("uv add" in n for n in t.tests.notes)]
    assert templated, "some shipped tasks use Terminal-Bench's full uv template"


def test_terminal_bench_template_becomes_a_direct_pytest_run(tmp_path):
    plan = plan_tests(TB_TEMPLATE_TESTS, _tests_dir(tmp_path), cwd="/app", env={})
    assert plan.mode == "pytest" and plan.test_files == ("test_outputs.py",) and not plan.selective
    assert sum("install" in n for n in plan.notes) == 6 and any("-rA" in n for n in plan.notes)


def test_harbor_template_drops_installs_ctrf_and_reward_bookkeeping():
    task = load_harbor(HARBOR / "word-count")
    plan = task.tests
    assert plan is not None and plan.mode == "pytest" and plan.test_files == ("test_outputs.py",)
    assert any("reward" in n for n in plan.notes) and any("--ctrf" in n for n in plan.notes)
    assert task.solution_entry == "solve.sh" and task.solution_dir == "/solution" and task.test_timeout_s == 60


def test_scripts_with_other_steps_run_as_scripts_without_installs(tmp_path):
    plan = plan_tests("apt-get install -y jq\ncd /app && make check\npytest /tests\n", _tests_dir(tmp_path),
                      cwd="/app", env={})
    assert plan.mode == "script" and plan.script is not None
    assert "apt-get" not in plan.script.split("\n")[0] and "make check" in plan.script
    assert load_harbor(HARBOR / "reward-script").tests.mode == "script"


def test_selection_options_are_kept_and_tests_outside_tests_are_refused(tmp_path):
    tests = _tests_dir(tmp_path)
    plan = plan_tests('cd $TEST_DIR && python3 -m pytest -k "not slow" test_outputs.py -v', tests, cwd="/app", env={})
    assert plan.mode == "pytest" and plan.cwd == "/tests" and plan.pytest_args == ("-k", "not slow") and plan.selective
    with pytest.raises(DataError, match="outside /tests"):
        plan_tests("pytest /app/tests", tests, cwd="/app", env={})


@pytest.mark.parametrize(("dockerfile", "reason"), [
    ("FROM node:20-bookworm\nWORKDIR /app\n", "not a stock distribution"),
    ("FROM ubuntu:24.04\nWORKDIR /app\nRUN apt-get update && apt-get install -y rlvr-no-such-package-xyz\n",
     "rlvr-no-such-package-xyz"),
    ("FROM ubuntu:24.04\nWORKDIR /app\nCOPY tool /usr/local/bin/tool\n", "outside the working directory"),
    ("FROM ubuntu:24.04\nWORKDIR /app\nRUN useradd bob\nUSER bob\n", "USER bob"),
    ("FROM python:3.13 AS build\nFROM ubuntu:24.04\nWORKDIR /app\n", "multi-stage"),
    ("FROM ubuntu:24.04\nWORKDIR /app\nRUN curl -L https://example.com/x.tgz | tar xz\n", "downloads"),
    ("FROM ubuntu:24.04\nWORKDIR /app\nRUN pip install rlvr-no-such-distribution-xyz==1.0\n", "pip"),
])
def test_environments_that_need_a_container(tmp_path, dockerfile, reason):
    task = load_tbench(make_tbench_task(tmp_path, "t", dockerfile, files={"tool": "#!/bin/sh\n"}))
    assert task.placement == "container" and reason in task.placement_reason


def test_other_reasons_for_a_container_or_no_local_grading(tmp_path):
    compose = "services:\n  client:\n    build: .\n  db:\n    image: postgres:16\n"
    two = load_tbench(make_tbench_task(tmp_path, "two", "FROM ubuntu:24.04\nWORKDIR /app\n", compose=compose))
    assert two.placement == "container" and "2 services" in two.placement_reason
    same = load_tbench(make_tbench_task(tmp_path, "same", "FROM ubuntu:24.04\nWORKDIR /app\n",
                                        yaml_extra="run_tests_in_same_shell: true\n"))
    assert same.placement == "container" and "same_shell" in same.placement_reason


def test_dockerfile_steps_in_order(tmp_path):
    dockerfile = """\
        FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624
        ARG NAME=data
        WORKDIR /app
        ENV GREETING="hello world" MODE=fast
        COPY ${NAME}.txt /app/
        COPY src/ ./src
        ADD pack.tar.gz /app/unpacked/
        RUN apt-get update && apt-get install -y git && rm -rf /var/lib/apt/lists/* && echo built > built.txt
        WORKDIR /app/src
        """
    root = make_tbench_task(tmp_path, "steps", dockerfile, files={"data.txt": "d\n", "src/a.py": "x = 1\n"})
    import tarfile

    with tarfile.open(root / "pack.tar.gz", "w:gz") as tar:
        tar.add(root / "data.txt", arcname="inner.txt")
    task = load_tbench(root)
    assert task.placement == "local", task.placement_reason
    assert (task.workdir, task.start_dir) == ("/app", "/app/src")
    assert task.env == {"GREETING": "hello world", "MODE": "fast"}
    kinds = [(s.kind, s.dest or s.command or s.name) for s in task.setup]
    assert kinds == [("env", "GREETING"), ("env", "MODE"), ("copy", "/app/data.txt"), ("copy", "/app/src"),
                     ("copy", "/app/unpacked"), ("run", "echo built > built.txt")]
    assert task.setup[4].extract and any("git" in n for n in task.metadata["setup_notes"])


def test_bad_task_sources_name_the_problem(tmp_path):
    with pytest.raises(DataError, match="no Terminal-Bench"):
        find_task_dirs(tmp_path, "tbench")
    bad = make_tbench_task(tmp_path, "bad", "FROM ubuntu:24.04\nWORKDIR /app\nCOPY missing.txt /app/\n")
    with pytest.raises(DataError, match=r"missing\.txt"):
        load_tbench(bad)
    with pytest.raises(DataError, match="task_dir"):
        load_task({"format": "tbench"})


def test_parse_response():
    task = load_tbench(TBENCH_SUITE / "dedupe-emails")
    fence = "`" * 3
    assert parse_response("echo a\necho b", task) == (["echo a\necho b"], "")
    fenced = f"first\n{fence}bash\nls\n{fence}\nthen\n{fence}sh\npwd\n{fence}"
    assert parse_response(fenced, task) == (["ls\n", "pwd\n"], "")
    assert parse_response('{"commands": ["ls", "pwd"], "answer": "3"}', task) == (["ls", "pwd"], "3")
    assert parse_response("  ", task) == ([], "")


def _tests_dir(tmp_path: Path) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "test_outputs.py").write_text("def test_a():\n    pass\n")
    return tests


def test_environment_arguments_and_broken_tasks(tmp_path):
    from rlvr.core.errors import ConfigError
    from rlvr.environments.terminal_data import make_tbench

    env = make_tbench(task_ids="csv-to-json, dedupe-emails")
    assert sorted(t.id for t in env.tasks) == ["csv-to-json", "dedupe-emails"]
    with pytest.raises(ConfigError, match=r"unknown argument.*tasksdir"):
        make_tbench(tasksdir=str(tmp_path))
    with pytest.raises(ConfigError, match=r"the tasks are: .*csv-to-json"):
        make_tbench(task_ids=["csv-to-jsn"])
    make_tbench_task(tmp_path, "good", "FROM ubuntu:24.04\nWORKDIR /app\n")
    make_tbench_task(tmp_path, "broken", "FROM ubuntu:24.04\nWORKDIR /app\nCOPY nothere.txt /app/\n")
    mixed = make_tbench(tmp_path)
    assert [t.id for t in mixed.tasks] == ["good"]
    name, why = mixed.skipped[0]
    assert name == "broken" and "unreadable" in why and "nothere.txt" in why


def test_observations_are_clean_text():
    from rlvr.environments.terminal import render_result
    from rlvr.sandbox.session import CommandResult

    text = render_result(CommandResult(stdout="\x1b[31mred\x1b[0m and\x00 nul\x07\n", stderr="  \n", exit_code=0))
    assert text == "[exit code 0]\nred and nul\n"
    assert render_result(CommandResult(exit_code=-1, notes=("the shell exited",))).startswith("[the shell was killed]")
