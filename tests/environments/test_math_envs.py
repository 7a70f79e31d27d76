"""Math environments: GSM8K, MATH and reasoning-gym factories, episodes, format rewards, check."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import rlvr
from rlvr import check
from rlvr.core.errors import ConfigError, DataError
from rlvr.environments.math import (
    EASY_ARITHMETIC,
    gsm8k_answer,
    make_easy_arithmetic,
    make_gsm8k,
    make_math,
    make_reasoning_gym,
)
from rlvr.runners.args import parse_env_args
from rlvr.verifiers.reasoning_gym import ReasoningGymVerifier
from rlvr.verifiers.testing import ConstantVerifier
from rlvr.verifiers.wrappers import FormatReward

INLINE = {"scoring": "inline"}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("solution", "answer"),
    [
        ("so 3+4=7\n#### 7", "7"), ("#### 1,234", "1234"), ("x #### 1 #### -5 ", "-5"), ("no marker", None),
        ("####  ", None),
    ],
    ids=["plain", "commas", "last-marker", "none", "empty"],
)
def test_gsm8k_answer(solution: str, answer: str | None) -> None:
    assert gsm8k_answer(solution) == answer


def test_gsm8k_from_shared_file(gsm8k_path: Path) -> None:
    env = make_gsm8k(path=gsm8k_path, limit=5, **INLINE)
    assert len(env.tasks) == 5 and env.spec.id == "math/gsm8k-v1"
    task = env.tasks[0]
    assert task.reference == "18" and "#### 18" in task.metadata["solution"]
    assert task.id == "gsm8k-test-0" and task.metadata["source"].endswith("gsm8k_test.jsonl:1")
    assert [m.role for m in task.prompt] == ["system", "user"] and "\\boxed" in task.prompt[0].content


def test_gsm8k_bad_row_names_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", [{"question": "q", "answer": "#### 1"}, {"question": "q", "answer": "7"}])
    with pytest.raises(DataError, match=r"g\.jsonl:2: field 'answer' has no '#### <number>'"):
        make_gsm8k(path=path)
    path = _write(tmp_path / "h.jsonl", [{"question": "q"}])
    with pytest.raises(DataError, match=r"h\.jsonl:1: missing field 'answer'"):
        make_gsm8k(path=path)


def test_math_answer_or_boxed_solution(tmp_path: Path) -> None:
    rows = [
        {"problem": "p1", "answer": "\\frac{1}{2}", "level": 3},
        {"problem": "p2", "solution": "so $x=\\boxed{\\frac{3}{4}}$."},
        {"problem": "p3", "answer": 5},
    ]
    env = make_math(path=_write(tmp_path / "m.jsonl", rows), **INLINE)
    assert [t.reference for t in env.tasks] == ["\\frac{1}{2}", "\\frac{3}{4}", "5"]
    assert env.tasks[0].metadata["level"] == 3
    bad = _write(tmp_path / "bad.jsonl", [{"problem": "p", "solution": "no box"}])
    with pytest.raises(DataError, match=r"bad\.jsonl:1: .*solution.* has no \\boxed"):
        make_math(path=bad)


def test_math_from_shared_file(math500_path: Path) -> None:
    env = make_math(path=math500_path, limit=3, **INLINE)
    assert env.tasks[0].reference == "\\left( 3, \\frac{\\pi}{2} \\right)"
    assert env.score(env.tasks[0], "The answer is $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}$").is_correct


def test_reasoning_gym_is_seeded_and_lazy() -> None:
    a = make_reasoning_gym(size=50, seed=3, config=EASY_ARITHMETIC, **INLINE)
    b = make_reasoning_gym(size=50, seed=3, config=json.dumps(EASY_ARITHMETIC), **INLINE)
    c = make_reasoning_gym(size=50, seed=4, config=EASY_ARITHMETIC, **INLINE)
    assert a.spec.seeding == "procedural" and len(a.tasks) == 50
    assert [t.prompt for t in a.tasks[:10]] == [t.prompt for t in b.tasks[:10]]
    assert [t.prompt for t in a.tasks[:10]] != [t.prompt for t in c.tasks[:10]]
    task = a.tasks[0]
    assert isinstance(task.reference, str) and task.metadata["entry"]["num_terms"] == 2
    json.dumps(task.model_dump(mode="json"))  # JSON-serialisable


def test_reasoning_gym_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown reasoning-gym task"):
        make_reasoning_gym(task="no_such_generator")
    with pytest.raises(ConfigError, match=r"config fields: .*min_terms"):
        make_reasoning_gym(config={"min_termz": 2})
    with pytest.raises(ConfigError, match="rejected config"):
        make_reasoning_gym(config={"min_terms": 3, "max_terms": 2})
    with pytest.raises(ConfigError, match="JSON object"):
        make_reasoning_gym(config="{not json")
    with pytest.raises(ConfigError, match="pass seed="):
        make_reasoning_gym(config={"seed": 1})


def _questions(env: object) -> list[str]:
    return [t.prompt[-1].content for t in env.tasks]  # type: ignore[attr-defined]


@pytest.mark.parametrize("seeds", [(0, 12345), (7, 7), (3, 99)])
def test_reasoning_gym_splits_are_disjoint_and_free_of_repeats(seeds: tuple[int, int]) -> None:
    train = make_reasoning_gym(size=150, seed=seeds[0], config=EASY_ARITHMETIC, split="train", **INLINE)
    held = {split: make_reasoning_gym(size=size, seed=seeds[1], config=EASY_ARITHMETIC, split=split, **INLINE)
            for split, size in (("validation", 15), ("test", 25))}
    sets = {"train": set(_questions(train)), **{k: set(_questions(v)) for k, v in held.items()}}
    assert len(sets["train"]) == 150 and len(sets["validation"]) == 15 and len(sets["test"]) == 25  # no repeats
    assert not sets["train"] & sets["test"] and not sets["train"] & sets["validation"]
    assert not sets["validation"] & sets["test"]
    # the key is the expression: one problem is never in two splits under two phrasings
    keys = {k: {t.metadata["entry"]["expression"] for t in env.tasks} for k, env in (("train", train), *held.items())}
    assert not keys["train"] & keys["test"] and not keys["train"] & keys["validation"]
    assert all(t.metadata["split"] == "test" for t in held["test"].tasks)
    assert "split=test" in held["test"].spec.dataset and "size=25" in held["test"].spec.dataset


def test_reasoning_gym_split_is_reproducible_and_scored() -> None:
    a = make_reasoning_gym(size=20, seed=5, config=EASY_ARITHMETIC, split="test", **INLINE)
    b = make_reasoning_gym(size=20, seed=5, config=EASY_ARITHMETIC, split="test", **INLINE)
    assert [t.id for t in a.tasks] == [t.id for t in b.tasks]
    task = a.tasks[3]
    assert a.score(task, f"\\boxed{{{task.reference}}}").is_correct
    words = make_reasoning_gym(task="spell_backward", size=4, split="validation", **INLINE)  # index-keyed grader
    task = words.tasks[2]
    assert words.score(task, f"<answer>{task.reference['answer']}</answer>").is_correct
    assert not words.score(task, "<answer>wrong</answer>").is_correct


def test_reasoning_gym_split_errors_name_the_fix() -> None:
    with pytest.raises(ConfigError, match="split must be one of train, validation, test"):
        make_reasoning_gym(size=5, config=EASY_ARITHMETIC, split="dev")
    with pytest.raises(ConfigError, match=r"split 'test' holds only \d+ distinct problems.*lower size"):
        make_reasoning_gym(size=100, config=EASY_ARITHMETIC, split="test")


def test_reasoning_gym_non_math_task_uses_its_own_grader() -> None:
    env = make_reasoning_gym(task="spell_backward", size=5, **INLINE)
    assert isinstance(env.verifier, ReasoningGymVerifier)
    task = env.tasks[1]
    assert task.reference["index"] == 1 and "<answer>" in task.prompt[0].content
    assert env.score(task, f"thinking...\n<answer>{task.reference['answer']}</answer>").is_correct
    assert not env.score(task, "<answer>wrong</answer>").is_correct


def test_episode_protocol_async_and_sync() -> None:
    env = make_easy_arithmetic(size=20, **INLINE)

    async def episode() -> tuple[float, str]:
        messages, info = await env.reset(seed=1)
        assert messages[-1].role == "user" and info["task_id"].startswith("rg-basic_arithmetic-0-")
        assert env.task is not None
        result = await env.step(f"\\boxed{{{env.task.reference}}}")
        assert result.terminated and result.verdict is not None
        return result.reward, result.verdict.status

    assert asyncio.run(episode()) == (1.0, "correct")
    env.reset_sync(seed=1)
    result = env.step_sync("The answer is \\boxed{12345}")
    assert result.terminated and result.reward == 0.0 and result.verdict is not None
    assert result.verdict.status == "incorrect"


def test_format_weight_wraps_the_verifier() -> None:
    env = make_easy_arithmetic(size=5, format_weight=0.25, **INLINE)
    assert isinstance(env.verifier, FormatReward) and env.spec.reward_range == (0.0, 1.25)
    ref = env.tasks[0].reference
    boxed = env.score(env.tasks[0], f"\\boxed{{{ref}}}")
    assert boxed.reward == 1.25 and boxed.components["format"] == 1.0
    bare = env.score(env.tasks[0], f"It is {ref}")
    assert bare.status == "correct" and bare.reward == 1.0
    gamed = env.score(env.tasks[0], "\\boxed{ }")
    assert gamed.reward == 0.0 and gamed.components["format"] == 0.0


def test_factory_arguments_from_cli_strings(gsm8k_path: Path) -> None:
    kwargs = parse_env_args([f"path={gsm8k_path}", "limit=3", "format_weight=0.5", "timeout_s=7", "scoring=inline"])
    env = rlvr.make("math/gsm8k-v1", **kwargs)
    assert len(env.tasks) == 3 and env.verifier.config.timeout_s == 7
    kwargs = parse_env_args(["size=4", "config.max_terms=2", "config.min_terms=2", "scoring=inline"])
    assert len(rlvr.make("math/reasoning-gym-v1", **kwargs).tasks) == 4
    with pytest.raises(ConfigError, match="rejected its configuration"):
        make_easy_arithmetic(no_such_option=1)
    with pytest.raises(ConfigError, match="configure the instance"):
        make_easy_arithmetic(verifier=ConstantVerifier(), timeout_s=3)


def test_check_gsm8k(gsm8k_path: Path) -> None:
    report = check("math/gsm8k-v1", n=5, env_kwargs={"path": str(gsm8k_path)})
    assert report.passed, report.failures


def test_check_math(math500_path: Path) -> None:
    report = check(make_math(path=math500_path), n=8)
    assert report.passed, report.failures


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"config": EASY_ARITHMETIC, "format_weight": 0.1}, {"task": "spell_backward"}],
    ids=["default", "easy-format", "spell-backward"],
)
def test_check_reasoning_gym(kwargs: dict[str, object]) -> None:
    report = check("math/reasoning-gym-v1", n=5, env_kwargs={"size": 50, **kwargs})
    assert report.passed, report.failures


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": "ten"}, r"size must be a positive int, got 'ten' \(str\); e\.g\. size=1000"),
        ({"size": -1}, r"size must be a positive int, got -1 \(int\)"),
        ({"size": 0}, "size must be a positive int"),
        ({"size": True}, "size must be a positive int"),
        ({"seed": "a"}, r"seed must be an int, got 'a' \(str\)"),
        ({"seed": 1.5}, "seed must be an int"),
        ({"format_weight": "x"}, "format_weight must be a number >= 0"),
        ({"format_weight": -1}, "format_weight must be a number >= 0"),
        ({"system_prompt": 3}, "system_prompt must be a string"),
        ({"task": 5}, "task must be a non-empty string"),
        ({"verifier": 1}, "verifier must be a Verifier"),
    ],
)
def test_reasoning_gym_factory_args_are_validated(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        rlvr.make("math/reasoning-gym-v1", **kwargs)


@pytest.mark.parametrize("env_id", ["math/gsm8k-v1", "math/math-v1"])
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": "five"}, r"limit must be a positive int, got 'five' \(str\); e\.g\. limit=100"),
        ({"limit": -1}, "limit must be a positive int"),
        ({"limit": 0}, "limit must be a positive int"),
        ({"path": 3}, "path must be a file path"),
        ({"split": ""}, "split must be a non-empty string"),
        ({"format_weight": "big"}, "format_weight must be a number"),
        ({"hf_config": 2}, "hf_config must be a non-empty string"),
    ],
)
def test_dataset_factory_args_are_validated_before_loading(env_id: str, kwargs: dict[str, object],
                                                           message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        rlvr.make(env_id, **kwargs)


def test_easy_arithmetic_validates_size() -> None:
    with pytest.raises(ConfigError, match="size must be a positive int"):
        make_easy_arithmetic(size=-3)


def test_step_protocol_errors() -> None:
    env = make_easy_arithmetic(size=5, scoring="inline")
    with pytest.raises(ConfigError, match=r"call env\.reset\(\) \(or env\.reset_sync\(\)\) first"):
        env.step_sync("\\boxed{1}")
    env.reset_sync(seed=0)
    env.step_sync("\\boxed{1}")
    assert env.done
    with pytest.raises(ConfigError, match=r"episode is over; call reset\(\)"):
        env.step_sync("\\boxed{1}")
    env.reset_sync(seed=0)
    assert env.step_sync("\\boxed{1}").terminated  # a new episode
