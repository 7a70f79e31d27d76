"""Tasks whose environment needs an image run through the container provider (podman or docker).

The task image is built from a Terminal-Bench Dockerfile `FROM` the registry-free base image
(tests/conftest.py) with a tool installed outside the working directory, which the
local (bubblewrap) provider cannot provide. Skips cleanly without a working container runtime.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.core.errors import ConfigError
from rlvr.environments.multi_turn import tool_call_message
from rlvr.environments.terminal_data import make_tbench
from rlvr.rollout.batch import clone_factory, rollout_sync
from rlvr.rollout.policies import NoopPolicy, OraclePolicy
from rlvr.verifiers.terminal import TerminalVerifier, load_tbench

pytestmark = pytest.mark.slow


def _task(root: Path, base_image: str) -> Path:
    task = root / "greet-everyone"
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text("instruction: |\n  For each name in /app/names.txt, in order, run `greet NAME` and "
                                    "write its output lines to /app/greetings.txt.\ndifficulty: easy\n"
                                    "max_agent_timeout_sec: 60\nmax_test_timeout_sec: 30\n")
    (task / "Dockerfile").write_text(
        f"FROM {base_image}\n"
        "RUN printf '#!/bin/bash\\necho \"greetings, $1!\"\\n' > /usr/local/bin/greet && "
        "chmod 755 /usr/local/bin/greet\n"
        "WORKDIR /app\nCOPY names.txt /app/names.txt\n")
    (task / "names.txt").write_text("ada\ngrace\nlinus\n")
    (task / "run-tests.sh").write_text("#!/bin/bash\npytest $TEST_DIR/test_outputs.py -rA\n")
    (task / "solution.sh").write_text("while read -r n; do greet \"$n\"; done < /app/names.txt > /app/greetings.txt\n")
    (task / "tests" / "test_outputs.py").write_text(
        "import subprocess\nfrom pathlib import Path\n\n\n"
        "def test_tool_is_the_images():\n    assert Path('/usr/local/bin/greet').is_file()\n\n\n"
        "def test_greetings():\n    names = Path('/app/names.txt').read_text().split()\n"
        "    want = [subprocess.run(['greet', n], capture_output=True, text=True).stdout.strip() for n in names]\n"
        "    assert Path('/app/greetings.txt').read_text().splitlines() == want\n")
    return task


@pytest.fixture(scope="module")
def tasks_dir(base_image, tmp_path_factory):
    root = tmp_path_factory.mktemp("container-tasks")
    _task(root, base_image)
    return root


def test_placement_is_container(tasks_dir):
    task = load_tbench(tasks_dir / "greet-everyone")
    assert task.placement == "container"
    assert "not a stock distribution" in task.placement_reason and "/usr/local/bin" in task.placement_reason


def test_local_provider_leaves_it_out_and_the_container_provider_runs_it(tasks_dir):
    local = make_tbench(tasks_dir, provider="local")
    assert not local.tasks and local.skipped[0][0] == "greet-everyone"
    assert [t.id for t in make_tbench(tasks_dir).tasks] == ["greet-everyone"]  # auto: its base image is here
    env = make_tbench(tasks_dir, provider="container")
    try:
        assert [t.id for t in env.tasks] == ["greet-everyone"]
        for policy, want in ((OraclePolicy(), "correct"), (NoopPolicy(), "incorrect")):
            [trajectory] = rollout_sync(clone_factory(env), policy, env.tasks, n=1, layout=None)
            assert trajectory.error is None, trajectory.error
            assert trajectory.verdict is not None and trajectory.verdict.status == want, trajectory.verdict.detail
        task = env.tasks[0]
        env.reset_sync(task)
        cheat = "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && alias pytest=true && echo x > " \
                "/app/greetings.txt"
        env.step_sync(tool_call_message("run", {"command": cheat}))
        final = env.step_sync(tool_call_message("submit", {"answer": ""}, call_id="s"))
        assert final.verdict is not None and final.verdict.status == "incorrect", final.verdict.detail
    finally:
        env.close()


def test_replayed_reference_through_the_verifier(tasks_dir):
    ref = {"format": "tbench", "task_dir": str(tasks_dir / "greet-everyone")}
    verifier = TerminalVerifier()
    assert verifier.verify(verifier.reference_response(ref), ref).status == "correct"
    assert verifier.verify("echo nothing", ref).status == "incorrect"


def test_auto_leaves_out_a_task_whose_base_image_is_absent(tmp_path):
    from tests.verifiers.terminal.test_tasks import make_tbench_task

    make_tbench_task(tmp_path, "needs-node", "FROM node:20-rlvr-absent\nWORKDIR /app\n")
    env = make_tbench(tmp_path)
    assert not env.tasks and "not in" in env.skipped[0][1] and "pull it first" in env.skipped[0][1]


def test_bad_provider_names_the_choices(tasks_dir):
    with pytest.raises(ConfigError, match="provider must be"):
        make_tbench(tasks_dir, provider="docker-compose")  # type: ignore[arg-type]
