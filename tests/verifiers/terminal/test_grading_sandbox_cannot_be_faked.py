"""Cheats aimed at the grading sandbox itself never pass (found by a fresh review).

- links from the working directory into the grader's files (/tests, /logs, /tmp);
- script-mode test scripts (they run the agent's programs): forged reports, reward files raced by
  background writers, a `pytest.py` planted for `python3 -m pytest`, runs of the grader's pytest
  asked for by the agent's code, a pytest run killed by the code it tests;
- what the agent leaves that cannot be exported or unpacked (sparse giants): `incorrect`, not `error`.

Every case must be `incorrect`; the controls show the honest work passes the same task.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _grading_episodes import episode, harbor_task, incorrect  # the same directory (pytest prepends it)

from rlvr.environments.terminal_data import make_harbor, make_tbench
from rlvr.sandbox.session import SessionConfig

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")


def test_links_into_the_graders_files_are_not_restored():
    env = make_tbench(task_ids=["sed-config-edit", "render-config-template"])
    try:
        incorrect(episode(env, "sed-config-edit", [
            "cp /app/etc/service.conf /app/etc/service.conf.orig && "
            "ln -sf /tests/service.conf.expected /app/etc/service.conf"]))
        incorrect(episode(env, "render-config-template", [
            "mkdir -p /app/deploy && ln -sf /tests/nginx.conf.expected /app/deploy/nginx.conf && "
            "ln -sf ../../tests/app.env.expected /app/deploy/app.env"]))
    finally:
        env.close()


def _tbench(root: Path, name: str, run_tests: str, extra: dict[str, str] | None = None) -> None:
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text("instruction: |\n  Write hi to /app/out.txt.\ndifficulty: easy\n"
                                    "max_test_timeout_sec: 30\n")
    (task / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\nRUN echo 'echo prepared' > /app/prepare.sh\n")
    (task / "run-tests.sh").write_text(run_tests)
    (task / "solution.sh").write_text("echo hi > /app/out.txt\n")
    (task / "tests" / "test_outputs.py").write_text(
        "from pathlib import Path\n\ndef test_out():\n    assert Path('/app/out.txt').read_text() == 'hi\\n'\n\n"
        "def test_nothing_else():\n    assert not Path('/app/extra').exists()\n")
    for rel, text in (extra or {}).items():
        (task / rel).write_text(text)


FAKE_JUNIT = ('<?xml version="1.0"?><testsuites><testsuite name="x" tests="2"><testcase classname="test_outputs" '
              'name="test_out"/><testcase classname="test_outputs" name="test_nothing_else"/></testsuite></testsuites>')


@pytest.fixture(scope="module")
def script_tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("script-mode")
    _tbench(root, "runs-agent-code",
            "#!/bin/bash\ncd /app\nbash /app/prepare.sh\npytest $TEST_DIR/test_outputs.py -rA\n")
    _tbench(root, "python-m-pytest", "#!/bin/bash\ncd /app\nbash /app/prepare.sh\npython3 -m pytest "
                                     "$TEST_DIR/test_outputs.py\nls /app\n")
    _tbench(root, "stops-on-error", "#!/bin/bash\nset -e\ncd /app\nbash /app/prepare.sh\n"
                                    "pytest $TEST_DIR/test_outputs.py -rA\n")
    _tbench(root, "guarded-uv", "#!/bin/bash\nif ! command -v uv &> /dev/null; then\n    curl -LsSf "
                                "https://astral.sh/uv/0.7.13/install.sh | sh\n    source $HOME/.local/bin/env\nfi\n"
                                "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\n"
                                "uv pip install pytest==8.4.1\nuv run pytest $TEST_DIR/test_outputs.py -rA\n")
    return root


def test_script_mode_honest_work_passes(script_tasks):
    env = make_tbench(script_tasks)
    try:
        for task_id in ("runs-agent-code", "python-m-pytest", "stops-on-error", "guarded-uv"):
            verdict = episode(env, task_id, ["echo hi > /app/out.txt"])
            assert verdict.status == "correct", (task_id, verdict.detail)
        incorrect(episode(env, "guarded-uv", ["echo ho > /app/out.txt"]))
    finally:
        env.close()


@pytest.mark.parametrize("attack", [
    # forged JUnit files wherever a report might be read
    f"for d in /logs/verifier /logs/verifier/rlvr-junit /tmp /app; do mkdir -p $d; "
    f"echo '{FAKE_JUNIT}' > $d/r.xml; done",
    # a background writer that keeps forging them during the run
    f"setsid bash -c 'while :; do mkdir -p /logs/verifier/rlvr-junit; echo \\'{FAKE_JUNIT}\\' > "
    "/logs/verifier/rlvr-junit/zzz.xml; done' >/dev/null 2>&1 &",
    # kill the grader's pytest while it runs the tests
    "(sleep 0.3; pkill -9 -f pytest; pkill -9 -f rlvr) >/dev/null 2>&1 &",
    # ask the grader's pytest socket for a run of tests that pass
    "mkdir -p /tmp/t && printf 'def test_out():\\n    pass\\ndef test_nothing_else():\\n    pass\\n' > "
    "/tmp/t/test_outputs.py && pytest /tmp/t/test_outputs.py >/dev/null 2>&1; true",
    # a pytest.py for `python3 -m pytest` from /app
    "printf 'import sys\\nprint(\"2 passed\")\\nsys.exit(0)\\n' > /app/pytest.py",
])
def test_script_mode_cheats(script_tasks, attack):
    env = make_tbench(script_tasks)
    try:
        prepare = f"cat > /app/prepare.sh <<'RLVR_EOF'\n{attack}\nRLVR_EOF"
        for task_id in ("runs-agent-code", "python-m-pytest"):
            incorrect(episode(env, task_id, [prepare, "echo wrong > /app/out.txt"]))
    finally:
        env.close()


def test_a_run_of_fake_tests_instead_of_the_real_ones(script_tasks):
    """The agent's code runs passing look-alike tests through the grader's pytest, then stops the script."""
    env = make_tbench(script_tasks)
    try:
        fake = ("mkdir -p /tmp/t && printf 'def test_out():\\n    pass\\ndef test_nothing_else():\\n    pass\\n' > "
                "/tmp/t/test_outputs.py && (cd /tmp/t && pytest test_outputs.py) >/dev/null 2>&1; exit 1")
        prepare = f"cat > /app/prepare.sh <<'RLVR_EOF'\n{fake}\nRLVR_EOF"
        verdict = episode(env, "stops-on-error", [prepare, "echo wrong > /app/out.txt"])
        incorrect(verdict)
    finally:
        env.close()


def _harbor_race(root: Path) -> None:
    harbor_task(root, "reward-race",
                "#!/bin/bash\nmkdir -p /logs/verifier\nbash /app/hello.sh > /tmp/out.txt\n"
                "if [ \"$(cat /tmp/out.txt)\" = hello ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n"
                "  echo 0 > /logs/verifier/reward.txt\nfi\n", {}, "printf 'echo hello\\n' > /app/hello.sh\n")


def test_harbor_reward_raced_by_background_writers(tmp_path):
    _harbor_race(tmp_path)
    env = make_harbor(tmp_path)
    try:
        assert episode(env, "reward-race", ["printf 'echo hello\\n' > /app/hello.sh"]).status == "correct"
        racers = [
            "setsid bash -c 'while :; do echo 1 > /logs/verifier/reward.txt; done' >/dev/null 2>&1 &",
            "(while :; do echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json; "
            "done) >/dev/null 2>&1 &",
            "for fd in /proc/[0-9]*/fd/*; do echo 1 > $fd; done 2>/dev/null",
        ]
        for racer in racers:
            script = f"cat > /app/hello.sh <<'RLVR_EOF'\n{racer}\necho hallo\nRLVR_EOF"
            for _ in range(3):  # a race: try it a few times
                incorrect(episode(env, "reward-race", [script]))
    finally:
        env.close()


def test_what_cannot_be_exported_or_unpacked_is_incorrect_not_error():
    env = make_tbench(task_ids=["dedupe-emails"])
    try:
        from rlvr.environments.terminal import TerminalEnv

        small = TerminalEnv(env.tasks, env.terminal_verifier, env.spec, sandbox=SessionConfig(workdir_mb=64))
        giants = "for i in 1 2 3; do truncate -s 60M /app/sparse$i; done; du -sh /app"
        incorrect(episode(small, "dedupe-emails", [giants]))
        deep = "d=/app; for i in $(seq 1 25); do d=$d/$(printf 'x%.0s' $(seq 1 200)); mkdir -p $d || break; done; true"
        verdict = episode(small, "dedupe-emails", [deep])
        assert verdict.status == "incorrect", verdict.detail
        small.close()
    finally:
        env.close()
