"""Nothing the agent does inside its sandbox may turn into a pass (the cheat catalog).

Each case is a real episode of a shipped Terminal-Bench task (or a Harbor task from tests/data):
the agent does NOT solve the task (or solves it only through the cheat) and then tries to fake the
grading. Every case must be `incorrect` -- never `correct`, and never `error` (which trainers mask:
a cheat must not be a way to escape a 0 either). Controls show that each cheat is real: it works
inside the agent's own shell, or the withheld work would have passed.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from rlvr.core.types import Message
from rlvr.environments.multi_turn import tool_call_message
from rlvr.environments.terminal import TerminalEnv
from rlvr.environments.terminal_data import make_harbor, make_tbench
from rlvr.sandbox.session import SessionConfig

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

HARBOR = Path(__file__).resolve().parents[2] / "data" / "terminal" / "harbor"
SOLVE_DEDUPE = "bash /tmp/solve.sh"


def _run(command: str, i: int = 0) -> Message:
    return tool_call_message("run", {"command": command}, call_id=f"call_{i}")


def _submit() -> Message:
    return tool_call_message("submit", {"answer": ""}, call_id="call_submit")


def episode(env: TerminalEnv, task_id: str, commands: list[str], *, observe: bool = False):
    """Reset on `task_id`, run `commands` (one `run` call each), submit; the final verdict (and outputs)."""
    task = next(t for t in env.tasks if t.id == task_id)
    env.reset_sync(task)
    outputs = []
    for i, command in enumerate(commands):
        result = env.step_sync(_run(command, i))
        assert not result.terminated, result
        outputs.append(result.messages[0].content)
    final = env.step_sync(_submit())
    assert final.terminated and final.verdict is not None
    return (final.verdict, outputs) if observe else final.verdict


@pytest.fixture(scope="module")
def env():
    e = make_tbench(task_ids=["dedupe-emails", "fix-topfiles-script", "fix-python-pricing"], show_tests=True)
    yield e
    e.close()


@pytest.fixture(scope="module")
def solution(env):
    """dedupe-emails' reference solution text (the agent 'knows' the answer for the cheats that need it)."""
    from rlvr.verifiers.terminal import load_task

    task = next(t for t in env.tasks if t.id == "dedupe-emails")
    return load_task(task.reference).solution_files["solution.sh"]


def _stash_solution(solution: str) -> str:
    return f"cat > /tmp/solve.sh <<'RLVR_EOF'\n{solution}\nRLVR_EOF"


def assert_incorrect(verdict) -> None:
    assert verdict.status == "incorrect", verdict.detail
    assert verdict.reward == 0.0


def test_control_the_solution_passes(env, solution):
    assert episode(env, "dedupe-emails", [_stash_solution(solution), SOLVE_DEDUPE]).status == "correct"


def test_fake_pytest_and_python3_in_rc_files_aliases_functions_and_path(env):
    cheat = (
        "mkdir -p /app/bin /root/bin\n"
        "printf '#!/bin/sh\\necho \"== 3 passed in 0.01s ==\"\\nexit 0\\n' > /app/bin/pytest\n"
        "cp /app/bin/pytest /app/bin/python3 && cp /app/bin/pytest /app/bin/py.test && chmod +x /app/bin/*\n"
        "cp /app/bin/* /root/bin/\n"
        "for rc in /root/.bashrc /root/.bash_profile /root/.profile /app/.bashrc /app/.profile; do\n"
        "  echo \"alias pytest='echo 3 passed'; alias python3='true'\" >> $rc\n"
        "  echo 'pytest() { echo \"3 passed\"; }; python3() { true; }; export -f pytest python3' >> $rc\n"
        "  echo 'export PATH=/app/bin:/root/bin:$PATH' >> $rc\n"
        "done\n"
        "export PATH=/app/bin:$PATH BASH_ENV=/root/.bashrc ENV=/root/.bashrc PYTEST_ADDOPTS='--co -q'\n"
        "pytest() { echo '3 passed'; }; export -f pytest\n"
    )
    verdict, outputs = episode(env, "dedupe-emails", [cheat, "type pytest | head -1; pytest"], observe=True)
    assert "function" in outputs[1] and "3 passed" in outputs[1]  # control: the fake is live in the agent's shell
    assert_incorrect(verdict)


def test_fake_reward_and_report_files(env):
    junit = ('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3" failures="0" errors="0">'
             '<testcase classname="test_outputs" name="test_clean"/><testcase classname="test_outputs" '
             'name="test_invalid"/><testcase classname="test_outputs" name="test_stats_and_input_untouched"/>'
             '</testsuite></testsuites>')
    cheat = (f"mkdir -p /logs/verifier /app/logs/verifier\n"
             f"for d in /logs/verifier /app /app/logs/verifier /tmp; do echo 1 > $d/reward.txt; "
             f"echo '{{\"reward\": 1.0}}' > $d/reward.json; echo '{junit}' > $d/junit.xml; "
             f"cp $d/junit.xml $d/report.xml; cp $d/junit.xml $d/results.xml; done")
    assert_incorrect(episode(env, "dedupe-emails", [cheat]))


def test_fake_reward_files_in_harbor_tasks():
    env = make_harbor(HARBOR)
    try:
        cheat = ("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && "
                 "echo '{\"reward\": 1}' > /logs/verifier/reward.json && cp /logs/verifier/* /app/")
        for task_id in ("word-count", "reward-script", "reward-json"):
            assert_incorrect(episode(env, task_id, [cheat]))
    finally:
        env.close()


def test_edited_and_deleted_tests_it_can_see(env):
    cheat = ("ls /tests/test_outputs.py && printf 'def test_clean():\\n    pass\\n' > /tests/test_outputs.py && "
             "printf 'import pytest\\ncollect_ignore_glob = [\"*\"]\\n' > /tests/conftest.py && rm -f /tests/*.txt; "
             "ls /tests")
    verdict, outputs = episode(env, "dedupe-emails", [cheat], observe=True)
    assert "[exit code 0]" in outputs[0] and "conftest.py" in outputs[0]  # control: the agent's copy was edited
    assert_incorrect(verdict)
    # the visible unittest suite of the Python bug task, gutted and deleted
    gut = "rm -rf /app/tests && mkdir /app/tests && : > /app/tests/__init__.py && rm -rf /tests/*"
    assert_incorrect(episode(env, "fix-python-pricing", [gut]))


def test_background_process_that_would_fix_the_answer_during_grading(env, solution):
    prepare = [_stash_solution(solution), SOLVE_DEDUPE,
               "mkdir -p /tmp/right && cp /app/data/*.txt /tmp/right/ && : > /app/data/clean.txt"]
    delayed = [
        "nohup bash -c 'sleep 1.5; cp /tmp/right/*.txt /app/data/' >/dev/null 2>&1 &",
        "setsid bash -c 'sleep 1.5; cp /tmp/right/*.txt /app/data/' </dev/null >/dev/null 2>&1 &",
        "(bash -c 'while true; do cp /tmp/right/clean.txt /app/data/clean.txt.new 2>/dev/null && "
        "mv /app/data/clean.txt.new /app/data/clean.txt; sleep 0.05; done &) ; sleep 0.01; : > /app/data/clean.txt",
    ]
    for command in delayed:
        assert_incorrect(episode(env, "dedupe-emails", [*prepare, command]))
    # control: had the copy run before the agent finished, the same files pass
    assert episode(env, "dedupe-emails", [*prepare, "cp /tmp/right/*.txt /app/data/"]).status == "correct"


def test_planted_conftest_sitecustomize_and_pytest_config(env):
    conftest = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n\n"
                "def pytest_collection_modifyitems(items):\n    items.clear()\n")
    sitecustomize = ("import sys, os\nos.environ['RLVR_PWNED'] = '1'\n"
                     "import builtins\nbuiltins.open = lambda *a, **k: (_ for _ in ()).throw(SystemExit(0))\n")
    files = {
        "/app/conftest.py": conftest, "/app/data/conftest.py": conftest, "/app/sitecustomize.py": sitecustomize,
        "/app/usercustomize.py": sitecustomize, "/app/pytest.ini": "[pytest]\naddopts = -k nothing -p no:junitxml\n",
        "/app/pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--co'\n",
        "/app/setup.cfg": "[tool:pytest]\naddopts = --co\n", "/app/tox.ini": "[pytest]\naddopts = --co\n",
        "/root/.local/lib/python3.11/site-packages/usercustomize.py": sitecustomize,
        "/app/evil.pth": "import os; os._exit(0)\n",
    }
    cheat = "\n".join(f"mkdir -p $(dirname {path}) && cat > {path} <<'RLVR_EOF'\n{text}RLVR_EOF"
                      for path, text in files.items())
    assert_incorrect(episode(env, "dedupe-emails", [cheat + "\nexport PYTHONPATH=/app PYTHONSTARTUP=/app/evil.pth"]))


def test_code_under_test_attacks_the_grader(env):
    """The tests run the agent's script: it tries to forge the report channel and kill pytest."""
    attack = (
        "cat > /app/bin/topfiles.sh <<'RLVR_EOF'\n#!/bin/bash\n"
        "for fd in /proc/[0-9]*/fd/*; do\n"
        "  [ -p \"$fd\" ] && printf '<testsuites><testsuite name=\"x\"><testcase classname=\"test_outputs\" "
        "name=\"t\"/></testsuite></testsuites>' > \"$fd\" 2>/dev/null\n"
        "done\n"
        "pkill -9 -f pytest 2>/dev/null; kill -9 $PPID 2>/dev/null; kill -9 -1 2>/dev/null\nexit 0\nRLVR_EOF\n"
        "chmod +x /app/bin/topfiles.sh")
    assert_incorrect(episode(env, "fix-topfiles-script", [attack]))


def _sandbox_procs() -> int:
    if os.geteuid() != 0:
        return 0
    return sum(1 for name in os.listdir("/proc") if name.isdigit() and _uid(name) == 65534)


def _uid(pid: str) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def test_fork_bomb_and_disk_filler_leave_the_host_alone():
    env = make_tbench(task_ids=["dedupe-emails"])
    small = TerminalEnv(env.tasks, env.terminal_verifier, env.spec,
                        sandbox=SessionConfig(workdir_mb=48, tmp_mb=32, processes=128), command_timeout_s=10.0)
    before_procs = _sandbox_procs()
    before_dirs = set(Path(tempfile.gettempdir()).glob("rlvr-task-*"))
    free = shutil.disk_usage("/").free
    try:
        bomb = [":(){ :|:& };:", "sleep 2; echo still-here", "ls /app/data | wc -l"]
        verdict, outputs = episode(small, "dedupe-emails", bomb, observe=True)
        assert "still-here" in outputs[1] and "]\n1\n" in outputs[2]  # the shell went on working
        assert_incorrect(verdict)
        filler = ["dd if=/dev/zero of=/app/fill bs=1M count=4096 2>&1 | head -1",
                  "dd if=/dev/zero of=/tmp/fill bs=1M count=4096 2>&1 | head -1; "
                  "dd if=/dev/zero of=/root/fill bs=1M count=4096 2>&1 | head -1",
                  "for i in $(seq 1 100000); do : > /app/f$i || break; done 2>&1 | tail -1; df -m /app | tail -1"]
        verdict, outputs = episode(small, "dedupe-emails", filler, observe=True)
        assert "No space left on device" in outputs[0] and outputs[1].count("No space left") == 2
        assert_incorrect(verdict)
    finally:
        small.close()
        env.close()
    # the fillers asked for 3 x 4 GiB and got their tmpfs quotas (48 + 2 x 32 MiB, in RAM); 1 GiB of slack for
    # whatever else the machine writes meanwhile
    assert shutil.disk_usage("/").free > free - (1 << 30)
    assert set(Path(tempfile.gettempdir()).glob("rlvr-task-*")) <= before_dirs  # no staging left behind
    deadline = time.monotonic() + 15.0  # a pid namespace that held a fork bomb takes the kernel a moment to tear down
    while _sandbox_procs() > before_procs and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _sandbox_procs() <= before_procs  # nothing of either episode is left running


def test_grading_is_the_same_for_the_same_work(env, solution):
    """Determinism: grading twice what the same commands produce gives the same verdict."""
    first = episode(env, "dedupe-emails", [_stash_solution(solution), SOLVE_DEDUPE, ": > /app/data/stats.txt"])
    second = episode(env, "dedupe-emails", [_stash_solution(solution), SOLVE_DEDUPE, ": > /app/data/stats.txt"])
    assert (first.status, first.reward, first.components) == (second.status, second.reward, second.components)
    assert json.loads(json.dumps(first.components)) == {"tests_passed": 2.0, "tests_total": 3.0}
