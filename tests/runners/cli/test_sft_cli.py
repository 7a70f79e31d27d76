"""`rlvr sft` through typer's CliRunner: options onto `SftConfig`, the table, bad rows, resume, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.runners.cli import app

pytestmark = pytest.mark.trl

runner = CliRunner()


@pytest.fixture(scope="module")
def sft_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6 oracle demonstrations of math/calculator-arithmetic-v1 (written by `rlvr synth`), then one bad row."""
    out = tmp_path_factory.mktemp("synth")
    result = runner.invoke(app, ["synth", "--env", "math/calculator-arithmetic-v1", "-a", "split=train", "-a", "size=6",
                                 "-a", "scoring=inline", "--policy", "oracle", "-n", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = out / "sft.jsonl"
    rows = data.read_text().splitlines()
    assert len(rows) == 6
    prompt_only = json.loads(rows[0])
    prompt_only["messages"] = prompt_only["messages"][:2]
    data.write_text("\n".join([*rows, json.dumps(prompt_only)]) + "\n")
    return data


def _sft(data: Path, model: Path, out: Path, *options: str) -> list[str]:
    return ["sft", "--data", str(data), "--model", str(model), "-o", str(out), "--batch-size", "3", "--lr", "1e-3",
            "--save-steps", "1", *options]


def test_sft_command_trains_reports_and_resumes(sft_jsonl: Path, tiny_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    result = runner.invoke(app, _sft(sft_jsonl, tiny_dir, out, "--max-steps", "2", "--lr-scheduler", "constant"),
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "skipped 1 bad row" in result.output and "sft.jsonl:7: no assistant turn" in result.output
    assert "6 / 1" in result.output  # rows trained on / skipped
    record = json.loads((out / "sft_run.json").read_text())
    assert record["steps"] == 2 and record["bad_rows"] == 1
    config = record["config"]
    assert (config["max_steps"], config["batch_size"], config["learning_rate"], config["lr_scheduler_type"],
            config["save_steps"], config["model"]) == (2, 3, 1e-3, "constant", 1, str(tiny_dir))
    assert (out / "config.json").is_file() and (out / "checkpoints" / "checkpoint-2").is_dir()
    again = runner.invoke(app, _sft(sft_jsonl, tiny_dir, out, "--max-steps", "2", "--lr-scheduler", "constant"),
                          terminal_width=200)
    assert again.exit_code == 0, again.output
    assert "checkpoint-2" in again.output  # resumed from the finished run's last checkpoint
    other = runner.invoke(app, _sft(sft_jsonl, tiny_dir, out, "--max-steps", "3"), terminal_width=200)
    assert other.exit_code == 2
    assert "another configuration (changed: lr_scheduler_type, max_steps)" in other.output
    assert "--overwrite" in other.output


def test_sft_command_refuses_bad_options_and_data(sft_jsonl: Path, tiny_dir: Path, tmp_path: Path) -> None:
    zero = runner.invoke(app, _sft(sft_jsonl, tiny_dir, tmp_path / "a", "--epochs", "0"), terminal_width=200)
    assert zero.exit_code == 2 and "epochs: Input should be greater than 0" in zero.output
    missing = runner.invoke(app, _sft(tmp_path / "none.jsonl", tiny_dir, tmp_path / "b"), terminal_width=200)
    assert missing.exit_code == 2 and "none.jsonl' is not a file" in missing.output
    template = runner.invoke(app, _sft(sft_jsonl, tiny_dir, tmp_path / "c", "--chat-template",
                                       str(tmp_path / "none.jinja")), terminal_width=200)
    assert template.exit_code == 2 and "--chat-template" in template.output and "cannot be read" in template.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n{oops\n')
    empty = runner.invoke(app, _sft(bad, tiny_dir, tmp_path / "d"), terminal_width=200)
    assert empty.exit_code == 2 and "no usable row (2 bad)" in empty.output
    assert "bad.jsonl:1: no assistant turn" in empty.output and "bad.jsonl:2: not JSON" in empty.output
    assert not (tmp_path / "d").exists()  # nothing written for a run that cannot start
