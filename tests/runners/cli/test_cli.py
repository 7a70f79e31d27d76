"""The `rlvr` CLI through typer's CliRunner: verify, check, envs, sample, train."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from rlvr.runners.cli import app

runner = CliRunner()


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_sample_then_verify(tmp_path: Path) -> None:
    sample = tmp_path / "sample.jsonl"
    result = runner.invoke(app, ["sample", "--env", "math/reasoning-gym-v1", "-a", "size=20", "-a",
                                 "config.max_digits=2", "-n", "5", "-o", str(sample)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in sample.read_text().splitlines()]
    assert len(rows) == 20 and {"prompt", "response", "reference", "expected"} <= set(rows[0])
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["verify", str(sample), "-o", str(out), "--verifier-arg", "scoring=inline"])
    assert result.exit_code == 0, result.output
    assert "matches expected" in result.output and "20/20" in result.output
    assert len(out.read_text().splitlines()) == 20


def test_verify_bad_rows_and_strict(tmp_path: Path) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"response": "\\boxed{2}", "reference": 2}, "{bad", {"reference": "1"}])
    out = tmp_path / "out.jsonl"
    args = ["verify", str(inp), "-o", str(out), "--verifier-arg", "scoring=inline"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "line 2: not valid JSON" in result.output and "line 3: missing key 'response'" in result.output
    assert "of which bad rows" in result.output
    assert len(out.read_text().splitlines()) == 3
    strict = runner.invoke(app, [*args, "--strict"])  # resumes: nothing redone, still exits 1
    assert strict.exit_code == 1 and "3 / 0" in strict.output
    fresh = runner.invoke(app, [*args, "--overwrite"])
    assert fresh.exit_code == 0 and "0 / 3" in fresh.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--verifier", "maths"], "Did you mean 'math'"),
        (["--verifier-arg", "timout_s=1"], "unknown option"),
        (["--verifier-arg", "noequals"], "KEY=VALUE"),
    ],
    ids=["unknown-verifier", "unknown-option", "malformed-arg"],
)
def test_verify_usage_errors_exit_2(tmp_path: Path, extra: list[str], message: str) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"response": "1", "reference": "1"}])
    result = runner.invoke(app, ["verify", str(inp), "-o", str(tmp_path / "o.jsonl"), *extra])
    assert result.exit_code == 2 and message in result.output


def test_verify_missing_input_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_custom_keys(tmp_path: Path) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"completion": "\\boxed{5}", "gold": "5"}])
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["verify", str(inp), "-o", str(out), "--response-key", "completion",
                                 "--reference-key", "gold", "--verifier-arg", "scoring=inline"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["verdict"]["status"] == "correct"


def test_check_passes_and_fails() -> None:
    ok = runner.invoke(app, ["check", "math/reasoning-gym-v1", "-a", "size=20", "-a", "scoring=inline", "-n", "3"])
    assert ok.exit_code == 0, ok.output
    assert "reference_correct" in ok.output and "FAIL" not in ok.output
    bad = runner.invoke(app, ["check", "math/reasoning-gym-v1", "-a", "size=20", "-a", "verifier=constant", "-n", "2"])
    assert bad.exit_code == 1 and "junk_rejected" in bad.output and "FAIL" in bad.output
    unknown = runner.invoke(app, ["check", "math/nope-v1"])
    assert unknown.exit_code == 2 and "unknown environment" in unknown.output


def test_envs_lists_ids() -> None:
    result = runner.invoke(app, ["envs"])
    assert result.exit_code == 0
    for env_id in ("math/gsm8k-v1", "math/math-v1", "math/reasoning-gym-v1"):
        assert env_id in result.output


def test_train_is_a_thin_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    fake = types.ModuleType("rlvr.runners.train.trl")
    fake.train_trl = lambda config: seen.update(config.model_dump())  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rlvr.runners.train.trl", fake)
    result = runner.invoke(app, ["train", "--env", "math/gsm8k-v1", "-a", "limit=8", "--model", "m", "--steps", "3",
                                 "-o", "runs/x", "--trainer-arg", "learning_rate=1e-5", "--trainer-arg", "bf16=true"])
    assert result.exit_code == 0, result.output
    assert seen == {"backend": "trl", "env": "math/gsm8k-v1", "env_args": {"limit": 8}, "model": "m", "steps": 3,
                    "output": Path("runs/x"), "trainer_args": {"learning_rate": 1e-5, "bf16": True},
                    "multi_turn": "auto", "tasks": None, "backend_python": None, "dry_run": False, "n_gpus": 1,
                    "device": "auto", "timeout_s": None}


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("verify", "check", "envs", "sample", "train"):
        assert command in result.output


def test_version() -> None:
    import rlvr

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"rlvr {rlvr.__version__}"


def test_verify_help_documents_output_columns() -> None:
    result = runner.invoke(app, ["verify", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for column in ("_line", "_bad_row", "_raw", "verdict", "meta.json", "--overwrite"):
        assert column in result.output, column


def test_eval_and_train_help_say_what_a_first_user_needs() -> None:
    """The script file format and the default model, without reading the README."""
    eval_help = " ".join(runner.invoke(app, ["eval", "--help"], terminal_width=200).output.split())
    assert '{"task_id": ..., "actions": [...]}' in eval_help
    train = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]  # a click Group
    model = next(p for p in train.params if p.name == "model")
    assert "the embedded SmolLM2-135M-Instruct" in model.help  # the table cuts long words at 80 columns


def test_verify_wrong_keys_hint_then_refused_resume(tmp_path: Path) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"id": i, "resp": "\\boxed{1}", "gold": "1"} for i in range(4)])
    out = tmp_path / "out.jsonl"
    args = ["verify", str(inp), "-o", str(out), "--verifier-arg", "scoring=inline"]
    first = runner.invoke(app, args, terminal_width=400)
    assert first.exit_code == 0, first.output
    assert "hint:" in first.output and "all 4 rows lack key 'response' or 'reference'" in first.output
    assert "available keys: gold, id, resp" in first.output
    keyed = [*args, "--response-key", "resp", "--reference-key", "gold"]
    second = runner.invoke(app, keyed, terminal_width=400)
    assert second.exit_code == 2
    assert "response_key: 'response' → 'resp'" in second.output and "--overwrite" in second.output
    assert "verifying" not in second.output  # no progress bar before the error
    third = runner.invoke(app, [*keyed, "--overwrite"], terminal_width=400)
    assert third.exit_code == 0 and "0 / 4" in third.output and "hint:" not in third.output


def test_verify_empty_input_warns_and_exits_0(tmp_path: Path) -> None:
    inp = tmp_path / "empty.jsonl"
    inp.write_text("\n\n")
    result = runner.invoke(app, ["verify", str(inp), "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 0, result.output
    assert "warning:" in result.output and "input has no rows" in result.output


def test_verify_null_and_reserved_keys(tmp_path: Path) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"response": None, "reference": "1"},
                                         {"response": "\\boxed{1}", "reference": "1", "verdict": "mine"}])
    result = runner.invoke(app, ["verify", str(inp), "-o", str(tmp_path / "o.jsonl"),
                                 "--verifier-arg", "scoring=inline"], terminal_width=400)
    assert result.exit_code == 0, result.output
    assert "line 1: key 'response' is null" in result.output
    assert result.output.count("already have 'verdict'") == 1


def test_sample_n_counts_tasks(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    result = runner.invoke(app, ["sample", "-a", "size=50", "-n", "20", "-o", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "20 tasks × 4 responses = 80 rows" in result.output
    assert len(out.read_text().splitlines()) == 80
    small = runner.invoke(app, ["sample", "-a", "size=3", "-n", "5", "-o", str(out)], terminal_width=200)
    assert small.exit_code == 0 and "3 tasks × 4 responses = 12 rows" in small.output
    assert "only 3 tasks" in small.output
    help_text = runner.invoke(app, ["sample", "--help"], terminal_width=200).output
    assert "TASKS" in help_text


def test_check_shows_up_to_five_failures_and_the_count() -> None:
    bad = runner.invoke(app, ["check", "math/reasoning-gym-v1", "-a", "size=20", "-a", "verifier=constant", "-n", "7"],
                        terminal_width=300)
    assert bad.exit_code == 1
    assert "21 of 21 failed:" in bad.output or "of 21 failed" in bad.output
    assert "(+" in bad.output and "more)" in bad.output


def test_env_arg_type_error_is_clean() -> None:
    result = runner.invoke(app, ["check", "math/reasoning-gym-v1", "-a", "size=ten"], terminal_width=300)
    assert result.exit_code == 2 and "size must be a positive int" in result.output


def test_commands_are_registered_once_in_help_order() -> None:
    from rlvr.runners.cli import COMMANDS

    group = typer.main.get_command(app)
    names = list(group.commands)  # type: ignore[attr-defined]  # a click Group
    assert names == [command.name for command in COMMANDS] == [
        "verify", "check", "envs", "sample", "train", "eval", "export", "compare", "serve", "synth", "sft", "forge",
        "init"]
