"""Regressions from the fresh-user walkthrough: clear errors instead of tracebacks or silent masks."""

from __future__ import annotations

import importlib.util
import json
import shutil
import time

import pytest

from rlvr.core.errors import ConfigError, MissingExtraError
from rlvr.environments.check import check
from rlvr.environments.registry import make


def test_missing_factory_argument_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match=r"code/stdio-v1.*'path'.*--env-arg"):
        make("code/stdio-v1")


def test_check_without_reference_solutions_says_what_to_add(tmp_path):
    rows = tmp_path / "stdio.jsonl"
    rows.write_text(json.dumps({"id": "a", "problem": "add", "cases": [{"input": "1 2\n", "output": "3\n"}]}) + "\n")
    with pytest.raises(ConfigError, match=r"reference solution.*solution"):
        check("code/stdio-v1", n=1, env_kwargs={"path": str(rows)})


def test_bad_model_engine_names_the_option(tmp_path):
    from rlvr.runners.eval import build_policy

    with pytest.raises(ConfigError, match="--generator"):
        build_policy(policy=None, model=str(tmp_path), base_url=None, generator="foo")


@pytest.mark.skipif(importlib.util.find_spec("e2b") is not None, reason="e2b installed")
def test_e2b_backend_without_the_extra_fails_at_start_up():
    from rlvr.verifiers.code import UnitTestVerifier

    with pytest.raises(MissingExtraError, match=r"rlvr\[e2b\]"):
        UnitTestVerifier(provider="e2b")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_assert_program_has_the_per_test_limit_not_the_overall_one():
    from rlvr.verifiers.code import UnitTestVerifier

    with UnitTestVerifier(test_timeout_s=1.0, timeout_s=30.0) as verifier:
        verifier.verify("def f():\n    return 1\n", {"format": "assert", "tests": "assert f() == 1"})  # warm-up
        start = time.monotonic()
        verdict = verifier.verify("while True:\n    pass\n", {"format": "assert", "tests": "assert f() == 1"})
    assert verdict.status == "timeout"
    assert time.monotonic() - start < 15  # would be ~30 s with the overall limit
