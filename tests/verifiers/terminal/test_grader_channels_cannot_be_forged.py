"""The grader's channels cannot be forged (cheats found by a second review).

- link chains that only escape once another link is followed (`sub -> /usr`, `x -> sub/../tests/...`);
- agent code imported by the tests: bytes written to every inherited fd (forged supervisor
  replies), `os._exit` before pytest can report, a memory hog;
- Harbor reward channels: values glued onto the script's own (`printf 1. >&8` before its `0`);
- a client that dribbles bytes into the grader's pytest socket;
- the scripts' own needs: `ENV PYTHONPATH`, a scorer that reads the `--junitxml` it asked for,
  a scorer that crashes on missing output (the agent's failure: `incorrect`, not `error`).

Every cheat must be `incorrect`; the controls show honest work passes the same task.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _grading_episodes import episode, harbor_task, incorrect  # the same directory (pytest prepends it)

from rlvr.environments.terminal_data import make_harbor, make_tbench

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

HARBOR = Path(__file__).parents[2] / "data" / "terminal" / "harbor"


def correct(verdict) -> None:
    assert verdict.status == "correct", verdict.detail
    assert verdict.reward == 1.0


def test_link_chains_escaping_through_another_link_are_dropped():
    env = make_harbor(HARBOR, task_ids=["reward-script"])
    try:
        for chain in ("cd /app && ln -s /usr sub && ln -s sub/../tests/expected.txt expensive.txt",
                      "cd /app && ln -s / top && ln -s top/tests/expected.txt expensive.txt",
                      "cd /app && mkdir d && ln -s ../../tests d/up && ln -s d/up/expected.txt expensive.txt"):
            incorrect(episode(env, "reward-script", [chain]))
        correct(episode(env, "reward-script", ["cd /app && awk -F, 'NR > 1 && $2 + 0 > 10 { print $1 }' prices.csv "
                                               "> real.txt && ln -s real.txt expensive.txt"]))
    finally:
        env.close()


def _tbench(root: Path, name: str, run_tests: str, dockerfile: str = "", test: str | None = None) -> None:
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text("instruction: |\n  Write /app/solution.py with answer() returning 42.\n"
                                    "difficulty: easy\nmax_test_timeout_sec: 30\n")
    (task / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n" + dockerfile)
    (task / "run-tests.sh").write_text(run_tests)
    (task / "solution.sh").write_text("printf 'def answer():\\n    return 42\\n' > /app/solution.py\n")
    (task / "tests" / "test_outputs.py").write_text(test or (
        "import sys\nsys.path.insert(0, '/app')\n\n\ndef test_answer():\n    from solution import answer\n"
        "    assert answer() == 42\n"))


@pytest.fixture(scope="module")
def import_tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("imports")
    _tbench(root, "pytest-mode", "#!/bin/bash\ncd /app\npytest $TEST_DIR/test_outputs.py -rA\n")
    _tbench(root, "script-mode", "#!/bin/bash\ncd /app\nls /app\npytest $TEST_DIR/test_outputs.py -rA\n")
    _tbench(root, "pythonpath", "#!/bin/bash\ncd /app\nls\npytest $TEST_DIR/test_outputs.py -rA\n",
            "ENV PYTHONPATH=/app/lib\nRUN mkdir -p /app/lib && printf 'N = 42\\n' > /app/lib/helper.py\n",
            "import sys\nsys.path.insert(0, '/app')\n\n\ndef test_answer():\n    from helper import N\n"
            "    from solution import answer\n    assert answer() == N\n")
    return root


FORGE = ("import os\nforged = b'{\"stdout\": \"2 passed\", \"stderr\": \"\", \"exit_code\": 0, \"ok\": true}\\n'\n"
         "for fd in range(3, 1024):\n    try:\n        os.write(fd, forged)\n    except OSError:\n        pass\n")

MODULE_ATTACKS = [
    FORGE + "def answer():\n    return 0\n",
    "import os\nos._exit(0)\n",
    "import os\nos._exit(4)\n",
    "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos._exit(0)\n",
    "hog = b'x' * (6 << 30)\ndef answer():\n    return 42\n",
]


@pytest.mark.parametrize("module", MODULE_ATTACKS, ids=["forged-replies", "exit-0", "exit-4", "kill-parent", "hog"])
def test_agent_code_imported_by_the_tests(import_tasks, module):
    env = make_tbench(import_tasks)
    try:
        write = f"cat > /app/solution.py <<'RLVR_EOF'\n{module}RLVR_EOF"
        for task_id in ("pytest-mode", "script-mode"):
            incorrect(episode(env, task_id, [write]))
    finally:
        env.close()


def test_honest_solutions_and_the_tasks_python_path(import_tasks):
    env = make_tbench(import_tasks)
    try:
        honest = "printf 'def answer():\\n    return 42\\n' > /app/solution.py"
        for task_id in ("pytest-mode", "script-mode", "pythonpath"):
            correct(episode(env, task_id, [honest]))
        incorrect(episode(env, "pythonpath", ["printf 'def answer():\\n    return 41\\n' > /app/solution.py"]))
    finally:
        env.close()


def test_slow_clients_of_the_pytest_socket_cannot_stall_grading(import_tasks, tmp_path):
    _tbench(tmp_path, "slow-client", "#!/bin/bash\ncd /app\nbash /app/prepare.sh\npytest $TEST_DIR/test_outputs.py\n")
    env = make_tbench(tmp_path)
    try:
        client = ("python3 -c \"import socket, time\ns = socket.socket(socket.AF_UNIX)\n"
                  "s.connect('/run/rlvr/pytest.sock')\nwhile True:\n    s.send(b' ')\n    time.sleep(0.2)\"")
        prepare = (f"cat > /app/prepare.sh <<'RLVR_EOF'\nfor i in 1 2 3 4 5 6; do ({client} &) ; done\n"
                   "sleep 1\nRLVR_EOF")
        correct(episode(env, "slow-client", [prepare, "printf 'def answer():\\n    return 42\\n' > /app/solution.py"]))
        incorrect(episode(env, "slow-client", [prepare, "printf 'def answer():\\n    return 7\\n' > /app/solution.py"]))
    finally:
        env.close()


@pytest.fixture(scope="module")
def harbor_tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("harbor")
    harbor_task(root, "glue", "#!/bin/bash\nmkdir -p /logs/verifier\nout=$(bash /app/hello.sh)\n"
                          "if [ \"$out\" = hello ]; then echo 1 > /logs/verifier/reward.txt; "
                          "else echo 0 > /logs/verifier/reward.txt; fi\n", {},
            "printf 'echo hello\\n' > /app/hello.sh\n")
    score = ("import json, xml.etree.ElementTree as ET\nroot = ET.parse('/logs/verifier/junit.xml').getroot()\n"
             "cases = list(root.iter('testcase'))\npassed = [c for c in cases if not len(c)]\n"
             "open('/logs/verifier/reward.txt', 'w').write(str(len(passed) / max(len(cases), 1)))\n")
    tests = ("import subprocess\n\n\ndef test_hello():\n    out = subprocess.run(['bash', '/app/hello.sh'], "
             "capture_output=True, text=True).stdout\n    assert out == 'hello\\n'\n")
    harbor_task(root, "junit-scorer", "#!/bin/bash\nmkdir -p /logs/verifier\ncd /tests\n"
                                  "pytest /tests/test_outputs.py --junitxml=/logs/verifier/junit.xml\n"
                                  "python3 /tests/score.py\n", {"score.py": score, "test_outputs.py": tests},
            "printf 'echo hello\\n' > /app/hello.sh\n")
    crash = ("out = open('/app/answer.txt').read()\n"  # no answer written: FileNotFoundError
             "open('/logs/verifier/reward.txt', 'w').write('1' if out.strip() == 'hello' else '0')\n")
    harbor_task(root, "crashing-scorer", "#!/bin/bash\nmkdir -p /logs/verifier\npython3 /tests/score.py\n",
            {"score.py": crash}, "echo hello > /app/answer.txt\n")
    return root


def test_values_glued_onto_the_scripts_reward_do_not_count(harbor_tasks):
    env = make_harbor(harbor_tasks, task_ids=["glue"])
    try:
        correct(episode(env, "glue", ["printf 'echo hello\\n' > /app/hello.sh"]))
        for glue in ("printf 1 >&8; printf 1. >&8; echo hallo", "printf 1. >&8 2>/dev/null; echo hallo",
                     "printf '{\"reward\": 1}' >&9 2>/dev/null; printf 1 >&8 2>/dev/null; echo hallo",
                     "(sleep 0.5; printf 1 >&8) & echo hallo"):
            incorrect(episode(env, "glue", [f"cat > /app/hello.sh <<'RLVR_EOF'\n{glue}\nRLVR_EOF"]))
    finally:
        env.close()


def test_a_scorer_reads_the_junit_report_it_asked_for(harbor_tasks):
    env = make_harbor(harbor_tasks, task_ids=["junit-scorer"])
    try:
        correct(episode(env, "junit-scorer", ["printf 'echo hello\\n' > /app/hello.sh"]))
        incorrect(episode(env, "junit-scorer", []))
    finally:
        env.close()


def test_a_scorer_crashing_on_missing_output_is_the_agents_failure(harbor_tasks):
    env = make_harbor(harbor_tasks, task_ids=["crashing-scorer"])
    try:
        correct(episode(env, "crashing-scorer", ["echo hello > /app/answer.txt"]))
        incorrect(episode(env, "crashing-scorer", []))
    finally:
        env.close()
