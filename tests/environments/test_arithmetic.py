"""Arithmetic that needs a calculator: `rlvr.environments.arithmetic` and `math/calculator-arithmetic-v1`."""

from __future__ import annotations

import json

import pytest

import rlvr
from rlvr.core.errors import ConfigError
from rlvr.environments.arithmetic import FORMS, SPLITS, generate, split_of
from rlvr.environments.calculator import evaluate
from rlvr.environments.math_tool import CalculatorEnv, make_calculator_arithmetic
from rlvr.rollout.check import check

INLINE = {"scoring": "inline"}


def test_answers_are_the_calculators_values() -> None:
    for problem in generate("train", 200, 3):
        assert evaluate(problem.expression) == str(problem.answer), problem
        assert problem.expression in problem.question
        assert all(100 <= x <= 999 for x in problem.operands)


def test_splits_are_disjoint_whatever_the_seeds() -> None:
    keys = {split: {p.key for seed in range(3) for p in generate(split, 300, seed)} for split in SPLITS}
    assert not keys["train"] & keys["test"] and not keys["train"] & keys["validation"]
    assert not keys["validation"] & keys["test"]
    for split, found in keys.items():
        assert {split_of(k) for k in found} == {split}
    # the key ignores the order of the operands: a * b and b * a are one problem
    assert generate("test", 1, 0, ["product"])[0].key == "product:" + ",".join(
        str(x) for x in sorted(generate("test", 1, 0, ["product"])[0].operands))


def test_split_shares_follow_the_buckets() -> None:
    counts = {name: 0 for name in SPLITS}
    for a in range(100, 400):
        counts[split_of(f"product:{a},{a + 7}")] += 1
    assert 0.7 < counts["train"] / 300 < 0.9 and counts["test"] > 10 and counts["validation"] > 10


def test_reproducible_distinct_and_a_prefix_of_larger_sizes() -> None:
    small, large = generate("test", 20, 5), generate("test", 60, 5)
    assert small == large[:20] == generate("test", 20, 5)
    assert len({p.key for p in large}) == 60
    assert generate("test", 20, 6) != small
    mixed = generate("train", 400, 0)
    assert {p.form for p in mixed} == set(FORMS)
    assert {p.form for p in generate("train", 50, 0, ["product", "sum_times"])} == {"product", "sum_times"}


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(ConfigError, match="split must be one of"):
        generate("dev", 3, 0)
    with pytest.raises(ConfigError, match="unknown forms"):
        generate("train", 3, 0, ["division"])
    with pytest.raises(ConfigError, match="forms must be a non-empty list"):
        generate("train", 3, 0, "product")
    with pytest.raises(ConfigError, match="size must be an int >= 1"):
        generate("train", 0, 0)
    with pytest.raises(ConfigError, match="fewer than 5000 distinct problems"):
        generate("test", 5000, 0, ["product"], digits=2)


def test_env_oracle_calls_the_calculator_and_answers_boxed() -> None:
    env = rlvr.make("math/calculator-arithmetic-v1", split="test", size=12, seed=1, **INLINE)
    assert isinstance(env, CalculatorEnv) and env.spec.id == "math/calculator-arithmetic-v1"
    assert env.spec.seeding == "procedural" and [t["function"]["name"] for t in env.spec.tools] == ["calculator"]
    for task in env.tasks:
        assert task.id.startswith("calc-test-1-") and task.metadata["split"] == "test"
        call, final = env.reference_actions(task) or []
        assert call.tool_calls is not None
        assert json.loads(call.tool_calls[0].arguments) == {"expression": task.metadata["expression"]}
        assert final.content == f"The final answer is \\boxed{{{task.reference}}}."
        env.reset_sync(task)
        assert env.step_sync(call).messages[0].content == task.reference
        verdict = env.step_sync(final).verdict
        assert verdict is not None and verdict.status == "correct"
    report = check(env, n=6)
    assert report.passed, report.failures


def test_env_forms_and_answer_without_the_tool() -> None:
    env = make_calculator_arithmetic(split="validation", size=4, forms=["product"], **INLINE)
    assert all(t.metadata["form"] == "product" and t.id.startswith("calc-validation-0-") for t in env.tasks)
    task = env.tasks[0]
    env.reset_sync(task)
    wrong = env.step_sync(f"\\boxed{{{int(task.reference) + 1}}}")
    assert wrong.terminated and wrong.verdict is not None and wrong.verdict.status == "incorrect"
    with pytest.raises(ConfigError, match="answer_template must be a string containing"):
        CalculatorEnv(env.tasks, env.verifier, env.spec, answer_template="no placeholder")


def test_restating_the_expression_is_not_an_answer() -> None:
    env = make_calculator_arithmetic(split="test", size=2, seed=1, **INLINE)
    task = env.tasks[0]
    expression = task.metadata["expression"]
    for response, status in [(f"So, the final answer is: {expression}", "incorrect"),
                             (f"\\boxed{{{expression}}}", "incorrect"),
                             (f"The final answer is \\boxed{{{task.reference}}}.", "correct"),
                             (f"The answer is {int(task.reference):,}.", "correct"),
                             ("I don't know.", "no_answer")]:
        env.reset_sync(task)
        verdict = env.step_sync(response).verdict
        assert verdict is not None and verdict.status == status, (response, verdict)
    assert env.verifier.name == "math+integer"
