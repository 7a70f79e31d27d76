"""Every example under examples/ runs as its users would run it (a subprocess of this venv's Python, or bash
with this venv's `rlvr` on PATH), and does what it says: checks pass, verdicts are right, files hold their keys.

Suites: the core examples run unmarked; `score_with_ray.py` and `serve_openenv.py` need the extras venv
(`-m extras`); the TRL scripts need the TRL venv (`-m trl`) and train a tiny random model one step.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _run(args: list[str], cwd: Path, timeout: float = 300) -> str:
    """Run one example in `cwd`; assert it exits 0; return its stdout."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("RAY_TMPDIR", "/tmp/rlvr-ray")
    env.setdefault("OMP_NUM_THREADS", "1")
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n" \
                                 f"--- stderr\n{done.stderr[-3000:]}"
    return done.stdout


def _python(example: str, *args: str, cwd: Path, timeout: float = 300) -> str:
    return _run([sys.executable, str(EXAMPLES / example), *args], cwd, timeout)


def _checks(out: str) -> dict[str, str]:
    return dict(re.findall(r"^check (\w+): (passed|FAILED)", out, re.M))


def test_examples_readme_lists_every_example() -> None:
    readme = (EXAMPLES / "README.md").read_text()
    files = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".py", ".sh"))
    assert files and [f for f in files if f"`{f}`" not in readme] == []


# -- core ---------------------------------------------------------------------------------------------
def test_own_single_turn_env_scores_and_passes_the_check(tmp_path: Path) -> None:
    out = _python("own_single_turn_env.py", "--size", "12", cwd=tmp_path)
    task = re.search(r"^task (\S+): Spell the word '(\w+)' backwards\.$", out, re.M)
    assert task, out
    assert f"step '<answer>{task[2][::-1]}</answer>': status=correct reward=1.0 terminated=True" in out
    assert "step '<answer>wrong</answer>': status=incorrect reward=0.0 terminated=True" in out
    assert "step 'I am not sure.': status=no_answer reward=0.0 terminated=True" in out
    checks = _checks(out)
    assert {"reference_correct", "junk_rejected", "deterministic", "episode_protocol"} <= set(checks)
    assert set(checks.values()) == {"passed"} and out.rstrip().endswith("check passed: True")


def test_own_tool_env_plays_an_episode_through_both_tools_and_passes_the_check(tmp_path: Path) -> None:
    out = _python("own_tool_env.py", cwd=tmp_path)
    assert "tool books_by: required=['author']" in out and "tool page_count: required=['title']" in out
    assert "bad call: Error: no author 'Nobody'" in out and "(terminated=False)" in out
    episode = re.search(r"^episode (\S+): reference=(\d+) status=(\w+) reward=(\S+) turns=(\d+)$", out, re.M)
    assert episode, out
    assert episode.group(3, 4, 5) == ("correct", "1.0", "3")
    pages = [int(n) for n in re.findall(r"^  tool: (\d+)$", out, re.M)]  # the page counts the tools answered
    assert len(pages) >= 2 and sum(pages) == int(episode[2])
    checks = _checks(out)
    assert {"oracle_episode", "noop_episode", "junk_rejected"} <= set(checks)
    assert set(checks.values()) == {"passed"} and out.rstrip().endswith("check passed: True")


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"exported_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _command(out_dir: Path) -> str:
    return (out_dir / "run" / "command.sh").read_text()


def test_export_verl_writes_the_files_and_the_command(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = _run(["bash", str(EXAMPLES / "export_verl.sh"), "out"], tmp_path)
    export = tmp_path / "out" / "export"
    manifest = json.loads((export / "rlvr_export.json").read_text())
    assert manifest["backend"] == "verl" and manifest["env_id"] == "math/reasoning-gym-v1"
    assert (manifest["n_train"], manifest["n_val"], manifest["multi_turn"]) == (56, 8, False)
    rows = pq.read_table(export / "train.parquet").to_pylist()
    assert len(rows) == 56 and set(rows[0]) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    # the exported reward module is veRL's compute_score: the reference scores 1, a wrong answer 0
    compute_score = _load(export / "reward.py").compute_score
    row = rows[0]
    gold = row["reward_model"]["ground_truth"]
    right = compute_score(row["data_source"], f"So \\boxed{{{gold}}}.", gold, row["extra_info"])
    wrong = compute_score(row["data_source"], f"So \\boxed{{{gold}1}}.", gold, row["extra_info"])
    assert (right["score"], right["rlvr_status"], wrong["score"], wrong["rlvr_status"]) == (
        1.0, "correct", 0.0, "incorrect")
    command = _command(tmp_path / "out")
    assert "-m verl.trainer.main_ppo" in command and "trainer.total_training_steps=4" in command
    run_export = tmp_path / "out" / "run" / "export"
    for key, name in (("data.train_files", "train.parquet"), ("reward.custom_reward_function.path", "reward.py")):
        assert f"{key}={run_export / name}" in command and (run_export / name).is_file()
    assert command.splitlines()[1] in out  # the script printed the command


def test_export_openrlhf_writes_the_agent_files_and_the_command(tmp_path: Path) -> None:
    out = _run(["bash", str(EXAMPLES / "export_openrlhf.sh"), "out"], tmp_path)
    export = tmp_path / "out" / "export"
    manifest = json.loads((export / "rlvr_export.json").read_text())
    assert manifest["backend"] == "openrlhf" and manifest["env_id"] == "math/reasoning-gym-tool-v1"
    assert manifest["multi_turn"] is True and set(manifest["files"]) == {"train", "val", "reward", "agent"}
    rows = [json.loads(line) for line in (export / "train.jsonl").read_text().splitlines()]
    assert len(rows) == 56 and set(rows[0]) == {"datasource", "input", "label", "task_id"}
    label = json.loads(rows[0]["label"])
    assert label["id"] == rows[0]["task_id"] and label["reference"] and label["prompt"] == rows[0]["input"]
    assert "agent_classes('math/reasoning-gym-tool-v1'" in (export / "agent_func.py").read_text()
    assert "def reward_func(queries, prompts, labels" in (export / "reward_func.py").read_text()
    command = _command(tmp_path / "out")
    assert "-m openrlhf.cli.train_ppo_ray" in command
    run_export = tmp_path / "out" / "run" / "export"
    for flag, name in (("--data.prompt_dataset", "train.jsonl"), ("--train.agent_func_path", "agent_func.py")):
        assert f"{flag} {run_export / name}" in command and (run_export / name).is_file()
    assert command.splitlines()[1] in out


# -- extras: Ray, OpenEnv -----------------------------------------------------------------------------
@pytest.mark.extras
@pytest.mark.slow
def test_score_with_ray_gives_every_row_its_expected_verdict(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    out = _python("score_with_ray.py", "--tasks", "6", "--workers", "2", "-o", "ray", cwd=tmp_path)
    assert "ray engine: 2 actors" in out and "agree with expected: 18/18" in out
    rows = [json.loads(line) for line in (tmp_path / "ray" / "verified.jsonl").read_text().splitlines()]
    assert len(rows) == 18 and all(r["verdict"]["status"] == r["expected"] for r in rows)
    assert {r["expected"] for r in rows} == {"correct", "incorrect", "no_answer"}


@pytest.mark.extras
@pytest.mark.slow
def test_serve_openenv_plays_a_right_and_a_wrong_episode(tmp_path: Path) -> None:
    pytest.importorskip("openenv")
    out = _python("serve_openenv.py", cwd=tmp_path)
    episodes = re.findall(r"^episode (\S+): 'Calculate (.+)\.'$", out, re.M)
    assert len(episodes) == 2, out
    calculated = re.findall(r"^  calculator -> '(\S+)' \(reward 0\.0, done False\)$", out, re.M)
    assert len(calculated) == 2
    for (_, expression), result in zip(episodes, calculated, strict=True):  # the server's calculator ran: "4 + 0"
        terms = re.fullmatch(r"(-?\d+) ([+-]) (-?\d+)", expression)
        assert terms, expression
        a, b = int(terms[1]), int(terms[3])
        assert int(result) == (a + b if terms[2] == "+" else a - b)
    verdicts = re.findall(r"^  answer \S+: reward (\S+), done True, verdict (\w+)$", out, re.M)
    assert verdicts == [("1.0", "correct"), ("0.0", "incorrect")]
    assert out.rstrip().endswith("server exited with code 0")


# -- TRL: one GRPO step of a tiny random model ----------------------------------------------------------
def _trained(out: str, model_dir: Path) -> dict[str, float]:
    assert re.search(r"^steps: 1$", out, re.M), out
    last = re.search(r"^last step: reward (\S+), (.+)$", out, re.M)
    assert last, out
    statuses = {k: float(v) for k, v in (item.split() for item in last[2].split(", "))}
    assert set(statuses) == {"correct", "incorrect", "no_answer", "timeout", "error"}
    assert sum(statuses.values()) == pytest.approx(1.0) and 0.0 <= float(last[1]) <= 1.0
    assert (model_dir / "config.json").is_file() and (model_dir / "model.safetensors").is_file()
    return statuses


@pytest.mark.trl
@pytest.mark.slow
def test_train_trl_runs_one_grpo_step(tiny_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("trl")
    out = _python("train_trl.py", "--model", str(tiny_dir), "--steps", "1", "--size", "8", "--generations", "2",
                  "--max-completion-length", "24", "-o", "trl", cwd=tmp_path)
    _trained(out, tmp_path / "trl" / "model")


@pytest.mark.trl
@pytest.mark.slow
def test_train_trl_multiturn_runs_one_grpo_step_through_environment_factory(tiny_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("trl")
    out = _python("train_trl_multiturn.py", "--model", str(tiny_dir), "--steps", "1", "--size", "8",
                  "--generations", "2", "--max-completion-length", "32", "-o", "trl-multiturn", cwd=tmp_path)
    _trained(out, tmp_path / "trl-multiturn" / "model")
    assert re.search(r"^tool calls per episode: \d+\.\d\d$", out, re.M), out
