"""Renamed words keep working: old CLI flags warn on stderr, old keyword arguments and config fields
warn `DeprecationWarning` naming the new name, and files written under the old names still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.core.renames import renamed_keys
from rlvr.runners.cli import app
from rlvr.runners.resumable import RunRecord, meta_path

runner = CliRunner()
ENV = ["--env", "math/reasoning-gym-v1", "-a", "task=basic_arithmetic", "-a", "size=4", "-a", "isolation=inline"]


def test_a_run_record_with_old_key_names_resumes(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    meta_path(out).write_text(json.dumps({"model_engine": "vllm", "env_args": {"model_engine": "vllm"}}))
    RunRecord(out, {"generator": "vllm", "env_args": {"generator": "vllm"}}).check()  # no ConfigError
    assert renamed_keys({"model_engine": "x", "generator": "y"}) == {"generator": "y"}


# -- model engine -> generator ----------------------------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "synth"])
def test_model_engine_flag_warns_and_still_counts(tmp_path: Path, command: str) -> None:
    args = [command, *ENV, "--model", str(tmp_path), "--model-engine", "foo", "-o",
            str(tmp_path / "out"), *(["-n", "1"] if command == "synth" else [])]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "--model-engine was renamed --generator" in result.stderr
    assert "--generator must be 'transformers' or 'vllm', got 'foo'" in result.stderr


def test_model_engine_field_warns_and_still_counts(tmp_path: Path) -> None:
    from rlvr.runners.eval import EvalConfig

    with pytest.warns(DeprecationWarning, match="'model_engine' was renamed 'generator'"):
        config = EvalConfig.build(env="math/gsm8k-v1", output=tmp_path / "o.jsonl", model_engine="vllm")
    assert config.generator == "vllm"
