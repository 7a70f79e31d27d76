"""The conformance check catches broken environments, not only passes good ones."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.rollout.check import CheckReport, check
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.testing import ConstantVerifier

TASKS = [Task(id=f"t{i}", prompt=[{"role": "user", "content": f"q{i}"}], reference=str(i)) for i in range(6)]


def _env(verifier: Verifier, reward_range: tuple[float, float] = (0.0, 1.0)) -> SingleTurnEnv:
    return SingleTurnEnv(TASKS, verifier, EnvSpec(id="test/check-v1", reward_range=reward_range))


def _by_name(report: CheckReport) -> dict[str, bool]:
    return {r.name: r.passed for r in report.results}


def test_a_sound_env_passes() -> None:
    report = check(_env(ConstantVerifier()), n=3)
    # a constant-correct verifier accepts junk: exactly that check fails
    assert _by_name(report) == {
        "reference_correct": True, "deterministic": True, "junk_rejected": False, "reward_in_range": True,
        "time_budget": True, "reset_deterministic": True, "episode_protocol": True,
    }
    assert report.n == 3 and not report.passed and [f.name for f in report.failures] == ["junk_rejected"]


def test_reference_rejected_and_reward_out_of_range() -> None:
    report = check(_env(ConstantVerifier("incorrect", 2.0)), n=2)
    failed = {f.name: f.detail for f in report.failures}
    assert set(failed) == {"reference_correct", "reward_in_range"}
    assert "t0: incorrect" in failed["reference_correct"] and "outside" in failed["reward_in_range"]


class _Flaky(ConstantVerifier):
    """Alternates between correct and incorrect: not deterministic."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def verify(self, response: str, reference: Any) -> Any:
        self.calls += 1
        status = "correct" if self.calls % 2 else "incorrect"
        return ConstantVerifier(status, float(self.calls % 2)).verify(response, reference)


def test_nondeterministic_scoring_is_caught() -> None:
    assert "deterministic" in {f.name for f in check(_env(_Flaky()), n=2).failures}


class _RandomReset(SingleTurnEnv):
    """Ignores the seed when drawing a task."""

    count = 0

    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        _RandomReset.count += 1
        return await super().reset(TASKS[_RandomReset.count % len(TASKS)], seed)


class _NeverEnds(SingleTurnEnv):
    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        return StepResult(reward=0.0)


@pytest.mark.parametrize(("cls", "name"), [(_RandomReset, "reset_deterministic"), (_NeverEnds, "episode_protocol")])
def test_protocol_violations_are_caught(cls: type[SingleTurnEnv], name: str) -> None:
    env = cls(TASKS, ConstantVerifier("incorrect", 0.0), EnvSpec(id="test/check-v1"))
    report = check(env, n=1)
    assert name in {f.name for f in report.failures}


def test_empty_dataset_fails_cleanly() -> None:
    env = SingleTurnEnv([], ConstantVerifier(), EnvSpec(id="test/check-v1"))
    report = check(env, n=5)
    assert report.n == 0 and [f.name for f in report.failures] == ["dataset"]


def test_time_budget() -> None:
    report = check(_env(ConstantVerifier("incorrect", 0.0)), n=2, time_budget_s=0.0)
    assert "time_budget" in {f.name for f in report.failures}


def test_failures_show_up_to_five_items_and_the_count() -> None:
    report = check(_env(ConstantVerifier("incorrect", 0.0)), n=6)
    (ref,) = [r for r in report.failures if r.name == "reference_correct"]
    assert ref.failed == 6 and ref.items == 6
    assert ref.failed_items == [f"t{i}: incorrect ({ConstantVerifier('incorrect', 0.0).verify('', '').detail[:120]})"
                                for i in range(5)]
    assert ref.detail.startswith("6 of 6 failed: t0: incorrect") and ref.detail.endswith("(+1 more)")
    passed = [r for r in report.results if r.passed]
    assert passed and all(r.failed == 0 and r.failed_items == [] for r in passed)


def test_tasks_are_spread_evenly_over_the_dataset() -> None:
    from rlvr.environments.loaders import spread_tasks

    assert [t.id for t in spread_tasks(TASKS, 3)] == ["t0", "t2", "t4"]
    assert spread_tasks(TASKS, 10) == TASKS and spread_tasks([], 3) == []


def test_check_without_reference_solutions_says_what_to_add(tmp_path):
    rows = tmp_path / "stdio.jsonl"
    rows.write_text(json.dumps({"id": "a", "problem": "add", "cases": [{"input": "1 2\n", "output": "3\n"}]}) + "\n")
    with pytest.raises(ConfigError, match=r"reference solution.*solution"):
        check("code/stdio-v1", n=1, env_kwargs={"path": str(rows)})
