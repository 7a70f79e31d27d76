"""`rlvr train --backend trl` on `swe/forge-v1`: two GRPO steps through TRL's environment_factory (CPU).

The tasks are the session's `tinycalc_forged` output (real forge tasks, the real bubblewrap sandbox and
terminal grader); the policy is the tiny random Llama with SmolLM2's tokenizer (`tiny_dir`). It will not
fix a bug; the path must work: the `run`/`edit_file`/`submit` tools offered to TRL, every episode graded.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from forge_projects import fix_hunk

pytestmark = [pytest.mark.trl, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing")]
pytest.importorskip("trl")
pytest.importorskip("datasets")

TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_cli_train_forge_two_steps_through_environment_factory(tiny_dir: Path, tinycalc_forged: Path,
                                                                tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rlvr.runners.cli import app

    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "train", "--backend", "trl", "--env", "swe/forge-v1", "-a", f"tasks_dir={tinycalc_forged}",
        "-a", "max_turns=2", "--model", str(tiny_dir), "--steps", "2", "-o", str(out),
        "--trainer-arg", "max_completion_length=16", "--trainer-arg", "num_generations=2",
        "--trainer-arg", "per_device_train_batch_size=2"])
    assert result.exit_code == 0, result.output
    assert "training it through TRL's environment_factory" in result.output
    rows = list(csv.DictReader((out / "reward_curve.csv").read_text().splitlines()))
    assert [r["step"] for r in rows] == ["1", "2"], rows
    assert all(r["correct"] != "" for r in rows), rows  # every step's episodes were graded
    assert (out / "model" / "model.safetensors").is_file()


def test_environment_factory_offers_run_edit_file_and_submit_and_grades_the_fix(tinycalc_forged: Path) -> None:
    """The class TRL instantiates per rollout: one method per forge tool (the schema TRL derives from it is the
    env's), the methods act in the episode's sandbox, and the episode's end is graded by the hidden tests."""
    from transformers.utils import get_json_schema

    from rlvr.adapters.trl.agent import environment_factory, environment_tools
    from rlvr.adapters.trl.data import to_dataset
    from rlvr.environments.tools import Tool

    cls = environment_factory("swe/forge-v1", tasks_dir=str(tinycalc_forged), max_turns=4)
    proto = cls._rlvr_prototype
    try:
        tools = environment_tools(cls)
        assert [getattr(t, "name", None) for t in tools] == ["run", "edit_file", "submit"]
        for tool in tools:
            assert isinstance(tool, Tool)
            derived = get_json_schema(getattr(cls, tool.name))["function"]["parameters"]
            assert set(derived["properties"]) == set(tool.parameters["properties"])
            assert set(derived.get("required", [])) == set(tool.parameters.get("required", []))
        row = next(iter(to_dataset(proto, limit=1)))
        path, old, new = fix_hunk(tinycalc_forged / row["task_id"])
        instance = cls()
        instance.reset(**row)
        assert "[exit code 0]" in instance.run(command="git log --oneline | wc -l")
        assert f"edited /app/{path}" in instance.edit_file(path=path, old_text=old, new_text=new)
        verdict = instance._finish("Fixed.")
        assert verdict.status == "correct", verdict.detail
        instance.reset(**row)  # the next rollout of the same task starts from the buggy tree again
        assert instance._finish("Nothing to do.").status == "incorrect"
    finally:
        proto.close()
