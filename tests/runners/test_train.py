"""`rlvr train` (`rlvr.runners.train`): trainer arguments, validation before any output, dry runs, reward curves."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.core.errors import ConfigError
from rlvr.runners.cli import app
from rlvr.runners.train import CURVE_COLUMNS, coerce_trainer_args, curve_row, plot_reward_curve, write_curve_csv

runner = CliRunner()


def test_dry_run_into_a_path_with_spaces_writes_a_runnable_command_and_notes(tmp_path: Path) -> None:
    import importlib.util
    import shlex

    out = tmp_path / "my runs" / "open rlhf"
    result = runner.invoke(app, ["train", "--backend", "openrlhf", "--env", "math/reasoning-gym-v1", "-a", "size=4",
                                 "--dry-run", "--model", str(tmp_path / "no model yet"), "-o", str(out)])
    assert result.exit_code == 2 and "no model yet" in result.output  # a missing --model folder is refused
    result = runner.invoke(app, ["train", "--backend", "openrlhf", "--env", "math/reasoning-gym-v1", "-a", "size=4",
                                 "--dry-run", "-o", str(out)])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    script = (out / "command.sh").read_text().splitlines()
    assert script[0] == "#!/usr/bin/env bash"
    assert shlex.split(script[1]) == run["command"]  # quoted: the folder names hold spaces
    assert str(out / "export" / "train.jsonl") in run["command"]
    assert [f"# note: {n}" for n in run["notes"]] == script[2:]
    if importlib.util.find_spec("openrlhf") is None:
        assert any("lacks openrlhf; pass --backend-python" in n for n in run["notes"])
        assert "lacks openrlhf" in result.output


@pytest.mark.trl
def test_trainer_args_are_coerced_and_checked(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from rlvr.runners.train import build_grpo_config, train_command

    config = build_grpo_config(tmp_path, 3, {"num_generations": "2", "per_device_train_batch_size": "4",
                                             "learning_rate": "3e-6", "gradient_checkpointing": "true"})
    assert (config.num_generations, config.learning_rate, config.max_steps) == (2, 3e-6, 3)
    assert config.activation_checkpointing is True and config.beta == 0.0
    with pytest.raises(ConfigError, match="did you mean num_generations"):
        build_grpo_config(tmp_path, 3, {"num_generation": 4})
    with pytest.raises(ConfigError, match="not 'jax'; supported backends: trl, verl, openrlhf"):
        train_command("jax", "math/reasoning-gym-v1", {}, None, 1, tmp_path, {})
    with pytest.raises(ConfigError, match=r"'max_steps' is set by rlvr train; use --steps"):
        build_grpo_config(tmp_path, 1, {"max_steps": "3"})
    with pytest.raises(ConfigError, match=r"'output_dir' is set by rlvr train; use --output"):
        build_grpo_config(tmp_path, 1, {"output-dir": "/tmp/elsewhere"})
    with pytest.raises(ConfigError, match=r"learning_rate must be a float, got 'abc'"):
        build_grpo_config(tmp_path, 1, {"learning_rate": "abc"})
    with pytest.raises(ConfigError, match=r"per_device_train_batch_size \(8\) must be a multiple of num_generations "
                                          r"\(3\).*per_device_train_batch_size=9"):
        build_grpo_config(tmp_path, 1, {"num_generations": "3"})
    config = build_grpo_config(tmp_path, 1, {"num_generations": "3", "per_device_train_batch_size": "6"})
    assert config.num_generations == 3


@pytest.mark.trl
def test_failed_validation_leaves_no_output_folder(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from rlvr.runners import models
    from rlvr.runners.train import train_command

    out = tmp_path / "run"
    for bad in ("/tmp/does/not/exist/model", "./tyop-model", "~/surely-not-a-model-folder-xyz"):
        with pytest.raises(ConfigError, match=r"model folder not found: .*an existing folder or a Hugging Face id"):
            models.resolve_model(bad)
    with pytest.raises(ConfigError, match="model folder not found"):
        train_command("trl", "math/reasoning-gym-v1", {}, str(tmp_path / "nope"), 1, out, {})
    with pytest.raises(ConfigError, match="num_generations"):
        train_command("trl", "math/reasoning-gym-v1", {}, str(tmp_path), 1, out, {"num_generations": "3"})
    with pytest.raises(ConfigError):
        train_command("trl", "no/such-env-v1", {}, str(tmp_path), 1, out, {})
    assert not out.exists()


@dataclasses.dataclass
class _Config:
    """A trainer config dataclass shaped like GRPOConfig's fields."""

    learning_rate: float = 1e-5
    num_generations: int = 4
    bf16: bool = False
    seed: int | None = 0
    report_to: list[str] | str = "none"
    max_steps: int = -1
    output_dir: str = "out"


def test_cli_strings_are_coerced_to_the_config_field_types() -> None:
    out = coerce_trainer_args(_Config, {"learning-rate": "3e-6", "num_generations": "2", "bf16": "on", "seed": "none",
                                        "report_to": '["wandb"]'})
    assert out == {"learning_rate": 3e-6, "num_generations": 2, "bf16": True, "seed": None, "report_to": ["wandb"]}
    assert coerce_trainer_args(_Config, {"report_to": "tensorboard", "num_generations": 8}) == {
        "report_to": "tensorboard", "num_generations": 8}  # a plain string field value; non-strings pass through
    with pytest.raises(ConfigError, match=r"num_generations must be an int, got 'two'"):
        coerce_trainer_args(_Config, {"num_generations": "two"})
    with pytest.raises(ConfigError, match=r"bf16 must be a bool \(true/false\), got 'maybe'"):
        coerce_trainer_args(_Config, {"bf16": "maybe"})
    with pytest.raises(ConfigError, match=r"unknown _Config field 'num_generation'; did you mean num_generations"):
        coerce_trainer_args(_Config, {"num_generation": "2"})
    for reserved in ("max_steps", "output-dir"):
        with pytest.raises(ConfigError, match="is set by rlvr train"):
            coerce_trainer_args(_Config, {reserved: "1"})


def test_curve_row_reads_the_status_fractions_of_the_named_reward() -> None:
    log = {"step": 3, "reward": 0.5, "reward_std": 0.1, "completions/mean_length": 12.0, "num_tokens": 640.0,
           "rlvr/math/correct": 0.5, "rlvr/math/incorrect": 0.25, "rlvr/format/correct": 1.0,
           "rlvr/format/extra/correct": 0.0}
    row = curve_row(log, 1.234, reward_name="math")
    assert row is not None and set(row) == set(CURVE_COLUMNS)
    assert (row["step"], row["reward"], row["reward_std"], row["completion_length"], row["elapsed_s"],
            row["num_tokens"]) == (3, 0.5, 0.1, 12.0, 1.23, 640.0)
    assert (row["correct"], row["incorrect"], row["error"]) == (0.5, 0.25, None)
    assert (curve_row(log, 0.0, reward_name="format") or {})["correct"] == 1.0
    assert (curve_row(log, 0.0) or {})["correct"] == 0.5  # no name: the first rlvr/<name>/<status> key
    assert curve_row({"step": 1, "loss": 0.1}, 0.0) is None and curve_row({"step": 1, "reward": None}, 0.0) is None


def test_curve_csv_has_the_fixed_columns_then_the_extras_and_is_rewritten_whole(tmp_path: Path) -> None:
    path = tmp_path / "reward_curve.csv"
    rows = [{"step": 1, "reward": 0.5, "not_a_column": "x", "rollout_corr": 0.9}, {"step": 2, "reward": 0.75}]
    write_curve_csv(rows, path, extra=("rollout_corr",))
    with path.open() as fh:
        read = list(csv.DictReader(fh))
    assert list(read[0]) == [*CURVE_COLUMNS, "rollout_corr"]
    assert [(r["step"], r["reward"], r["rollout_corr"]) for r in read] == [("1", "0.5", "0.9"), ("2", "0.75", "")]
    write_curve_csv(rows[:1], path)
    assert path.read_text().splitlines()[0] == ",".join(CURVE_COLUMNS) and len(path.read_text().splitlines()) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reward_curve.csv"]  # no temporary file left


def test_reward_curve_is_plotted_to_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [{"step": s, "reward": s / 10, "reward_std": 0.1, "correct": s / 10 if s > 1 else None} for s in range(1, 7)]
    plot_reward_curve(rows, tmp_path / "curve.png", title="six steps")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

