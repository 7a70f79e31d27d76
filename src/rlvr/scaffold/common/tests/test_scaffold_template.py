"""scaffold/template-v1 through rlvr, as every trainer will see it: found by id, conformant, hard to fool.

Run with `pytest` after `pip install -e .` (the tests build the environment from its registered id,
so they also prove the entry point in pyproject.toml works).
"""

from __future__ import annotations

import rlvr
from rlvr.environments.audit import audit
from rlvr.rollout.batch import rollout_sync
from rlvr.rollout.policies import NoopPolicy, OraclePolicy
from rlvr.verifiers.testing import ConstantVerifier

ENV_ID = "scaffold/template-v1"


def test_is_registered() -> None:
    """`pip install -e .` registered the environment under its id."""
    assert ENV_ID in rlvr.registry.ids()


def test_conformance() -> None:
    """The conformance check (`rlvr check`): reference correct, junk rejected, deterministic, episodes end right."""
    report = rlvr.check(ENV_ID, n=8)
    assert report.passed, [f"{r.name}: {r.detail}" for r in report.failures]


def test_the_oracle_scores_1_and_a_policy_that_gives_up_scores_0() -> None:
    """The scripted test policies rlvr ships: the oracle replays the reference actions, noop gives up."""
    env = rlvr.make(ENV_ID, size=6)
    try:
        tasks = list(env.tasks)
        oracle = rollout_sync(env.episode_copy, OraclePolicy(), tasks)
        noop = rollout_sync(env.episode_copy, NoopPolicy(), tasks)
    finally:
        env.close()
    assert [t.reward for t in oracle] == [1.0] * len(tasks)
    assert [t.reward for t in noop] == [0.0] * len(tasks)


def test_no_wrong_response_scores_correct() -> None:
    """`rlvr check --adversarial`: empty, echoed, format-only and guessed answers never score correct."""
    report = audit(ENV_ID, n=8)
    assert report.tried > 0 and report.false_passes == 0, report.to_json()["families"]
    assert report.controls_failed == 0


def test_the_checks_catch_a_verifier_that_passes_everything() -> None:
    """The checks can fail: with rlvr's ConstantVerifier test double (always correct) in place of the verifier."""
    env = rlvr.make(ENV_ID, size=4)
    env.verifier = ConstantVerifier("correct", 1.0)
    try:
        assert not rlvr.check(env, n=4).passed
        assert audit(env, n=4).false_passes > 0
    finally:
        env.close()
