"""The round trip: an rlvr env served by `rlvr serve`'s server, played through `openenv/remote-v1`, gives the
same task ids, step rewards and verdicts as the env in-process (a math env, a tool env, a broken grader)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import doc_blocks
import rlvr
from rlvr.core.types import EnvSpec, Message, Task, Trajectory
from rlvr.environments.base import Environment
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.rollout.batch import clone_factory, rollout_sync
from rlvr.rollout.policies import ScriptPolicy
from rlvr.verifiers.testing import ConstantVerifier

pytestmark = pytest.mark.extras


def _math() -> Environment:
    return rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=4, seed=3, scoring="inline")


def _tool() -> Environment:
    return rlvr.make("math/reasoning-gym-tool-v1", task="basic_arithmetic", size=3, seed=5)


def _broken() -> Environment:
    task = Task(id="t0", prompt=(Message(role="user", content="2+2?"),), reference="4")
    return SingleTurnEnv([task], ConstantVerifier("error", None), EnvSpec(id="test/broken-v1"))


def _script(env: Environment, path: Path) -> ScriptPolicy:
    """Sample 0 replays each task's reference actions (when it has them), sample 1 answers wrongly."""
    rows = []
    for task in env.tasks:
        actions = env.reference_actions(task) or [Message(role="assistant", content="4")]
        rows.append({"task_id": task.id, "sample": 0, "actions": [a.to_openai() for a in actions]})
        rows.append({"task_id": task.id, "sample": 1, "actions": ["The answer is \\boxed{-12345}."]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ScriptPolicy(path)


def _outcome(trajectories: list[Trajectory]) -> list[tuple[Any, ...]]:
    out = []
    for t in trajectories:
        v = t.verdict
        assert v is not None and t.error is None, t.error
        out.append((t.task_id, t.info["sample"], [round(r, 9) for r in t.rewards], v.status, v.reward,
                     {k: round(x, 9) for k, x in v.components.items()}))
    return sorted(out, key=lambda row: (row[0], row[1]))


@pytest.mark.parametrize("build", [_math, _tool, _broken], ids=["math", "tool", "broken-grader"])
def test_remote_play_matches_the_env_in_process(build: Callable[[], Environment], serve_rlvr: Any,
                                                tmp_path: Path) -> None:
    env = build()
    try:
        policy = _script(env, tmp_path / "script.jsonl")
        local = rollout_sync(clone_factory(env), policy, list(env.tasks), n=2, concurrency=2)
        with serve_rlvr(env) as (url, _host):
            remote = rlvr.make("openenv/remote-v1", base_url=url)
            try:
                assert [t.id for t in remote.tasks] == [t.id for t in env.tasks]
                assert [t.prompt for t in remote.tasks] == [t.prompt for t in env.tasks]
                assert remote.spec.tools == env.spec.tools
                assert (remote.spec.max_turns, remote.spec.reward_range) == (env.spec.max_turns, env.spec.reward_range)
                assert remote.reference_actions(remote.tasks[0]) is None  # no reference leaves the server
                played = rollout_sync(clone_factory(remote), policy, list(remote.tasks), n=2, concurrency=2)
                assert not remote.sessions.open
            finally:
                remote.close()
        assert _outcome(played) == _outcome(local)
        statuses = {row[3] for row in _outcome(local)}
        assert statuses == ({"error"} if build is _broken else {"correct", "incorrect"})
    finally:
        env.close()


def test_the_readme_example_runs_against_a_served_env(serve_rlvr: Any, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = [b.code for b in doc_blocks.page_blocks(doc_blocks.DOCS / "openenv.md")
              if b.lang == "python" and '"openenv/remote-v1"' in b.code]
    assert len(blocks) == 1
    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=8)
    try:
        with serve_rlvr(env) as (url, _host):
            exec(compile(blocks[0].replace("http://127.0.0.1:8000", url), "docs/openenv.md", "exec"), {})
    finally:
        env.close()
    task_id, status, reward = capsys.readouterr().out.split()
    assert task_id == env.tasks[0].id and status in ("correct", "incorrect") and float(reward) in (0.0, 1.0)
