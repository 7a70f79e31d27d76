"""`rlvr synth` with scripted policies (no model): exact sft.jsonl / rl.jsonl, report, resume, `--tasks`."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guess_env import GuessEnv
from rlvr.core.errors import ConfigError
from rlvr.core.metrics import pass_at_k
from rlvr.environments.registry import make, registry
from rlvr.runners.cli import app
from rlvr.runners.synth import SynthConfig, parse_band

runner = CliRunner()
ARGS = {"task": "basic_arithmetic", "size": 6, "scoring": "inline"}
ENV = ["--env", "math/reasoning-gym-v1", *(x for k, v in ARGS.items() for x in ("-a", f"{k}={v}"))]

# Per task: the status of each of the K=4 samples ("c" correct, "w" wrong, "e" no script -> episode error).
PLAN = ["cccc", "cwcw", "wwww", "wcww", "eeee", "wcee"]
BAND = (0.25, 0.75)


def _references() -> list[tuple[str, str]]:
    env = make("math/reasoning-gym-v1", **ARGS)
    try:
        return [(t.id, str(t.reference)) for t in env.tasks]
    finally:
        env.close()


def _answer(reference: str, mark: str) -> str:
    return f"The answer is \\boxed{{{reference if mark == 'c' else reference + '1'}}}."


def _script(path: Path) -> Path:
    """One script row per (task, sample) that is not an error in PLAN."""
    with path.open("w") as f:
        for (task_id, reference), plan in zip(_references(), PLAN, strict=True):
            for sample, mark in enumerate(plan):
                if mark != "e":
                    f.write(json.dumps({"task_id": task_id, "sample": sample, "actions": [_answer(reference, mark)]})
                            + "\n")
    return path


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _synth(tmp_path: Path, out: Path, *extra: str, n: int = 4) -> Any:
    script = _script(tmp_path / "script.jsonl")
    result = runner.invoke(app, ["synth", *ENV, "--policy", f"script:{script}", "-n", str(n), "-o", str(out),
                                 "--band", f"{BAND[0]},{BAND[1]}", *extra])
    assert result.exit_code == 0, result.output
    return result


def test_scripted_policy_gives_the_exact_sft_and_rl_rows(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    _synth(tmp_path, out)
    refs = _references()
    env = make("math/reasoning-gym-v1", **ARGS)
    prompts = [[m.to_openai() for m in t.prompt] for t in env.tasks]
    env.close()

    sft = _jsonl(out / "sft.jsonl")
    expected = [(refs[i][0], s) for i, plan in enumerate(PLAN) for s, mark in enumerate(plan) if mark == "c"]
    assert [(r["task_id"], r["sample"]) for r in sft] == expected
    for row in sft:
        i = [t for t, _ in refs].index(row["task_id"])
        assert row["messages"] == [*prompts[i], {"role": "assistant", "content": _answer(refs[i][1], "c")}]
        assert row["reward"] == 1.0 and row["verdict"]["status"] == "correct"

    rl = _jsonl(out / "rl.jsonl")
    # pass rate = correct / scored; errors left out of n. cwcw 2/4, wcww 1/4, wcee 1/2: in [0.25, 0.75].
    assert [(r["task_id"], r["pass_rate"], r["n"], r["n_correct"], r["n_error"]) for r in rl] == [
        (refs[1][0], 0.5, 4, 2, 0), (refs[3][0], 0.25, 4, 1, 0), (refs[5][0], 0.5, 2, 1, 2)]
    assert all(r["env"] == "math/reasoning-gym-v1" and r["env_args"] == ARGS for r in rl)
    assert rl[0]["prompt"] == prompts[1] and rl[0]["reference"] == refs[1][1]

    report = json.loads((out / "report.json").read_text())
    counts = [(4, 4), (4, 2), (4, 0), (4, 1), (2, 1)]  # (n, c) of the tasks with a scored sample
    for k in range(1, 5):
        covered = [pass_at_k(n, c, k) for n, c in counts if n >= k]
        assert report["pass_at"][str(k)]["value"] == pytest.approx(sum(covered) / len(covered))
        assert report["pass_at"][str(k)]["tasks"] == len(covered)
    assert report["statuses"] == {"correct": 8, "incorrect": 10, "no_answer": 0, "timeout": 0, "error": 6}
    assert report["episode_errors"] == 6 and report["samples"] == 24
    assert report["tasks_all_error"] == [refs[4][0]]
    assert report["band_counts"] == {"below": 1, "in": 3, "above": 1, "all_error": 1, "unsampled": 0}
    assert report["histogram"] == {"centers": [0.0, 0.25, 0.5, 0.75, 1.0], "counts": [1, 1, 2, 0, 1]}
    assert report["sft_rows"] == 8 and report["rl_rows"] == 3 and report["tokens"] is None
    assert report["time"]["samples_written"] == 24 and report["time"]["wall_s"] > 0
    assert (out / "pass_rate.png").read_bytes().startswith(b"\x89PNG")
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and "pass@4" in page


def test_rerun_adds_no_rows_and_a_larger_n_only_new_samples(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    _synth(tmp_path, out, n=2)
    first = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(first) == 12  # 6 tasks x 2 (error episodes are rows too)
    sft_before = (out / "sft.jsonl").read_bytes()
    result = _synth(tmp_path, out, n=2)
    assert "10 / 2" in result.output  # 10 kept; the 2 errored episodes (no script) are run again
    assert len((out / "trajectories.jsonl").read_text().splitlines()) == 12
    assert (out / "sft.jsonl").read_bytes() == sft_before
    result = _synth(tmp_path, out, n=4)
    rows = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(rows) == 24
    keys = [(r["task_id"], r["info"]["sample"]) for r in map(json.loads, rows)]
    assert len(set(keys)) == 24
    assert json.loads((out / "report.json").read_text())["sft_rows"] == 8
    assert len(json.loads((out / "report.json").read_text())["runs"]) == 3
    _synth(tmp_path, out, n=2)  # a smaller -n: the derived files count samples 0 and 1 only
    # Finished samples 2-3 stay in the record; their 4 error episodes are dropped (eval redoes errors, if asked).
    assert len((out / "trajectories.jsonl").read_text().splitlines()) == 20
    assert {r["sample"] for r in _jsonl(out / "sft.jsonl")} == {0, 1}
    assert json.loads((out / "report.json").read_text())["samples"] == 12


def test_keep_all_and_dedup_change_only_the_derived_files(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    _synth(tmp_path, out)
    result = _synth(tmp_path, out, "--keep", "all", "--dedup")
    assert "24 / 6" not in result.output and json.loads((out / "report.json").read_text())["time"][
        "samples_written"] == 6  # only the error episodes were run again
    sft = _jsonl(out / "sft.jsonl")
    # keep all: every scored sample (never an error one); dedup: one row per distinct conversation per task.
    assert all(r["verdict"]["status"] in ("correct", "incorrect") for r in sft)
    distinct = {(r["task_id"], json.dumps(r["messages"])) for r in sft}
    assert len(distinct) == len(sft)
    per_task = {tid: sum(r["task_id"] == tid for r in sft) for tid, _ in _references()}
    assert list(per_task.values()) == [1, 2, 1, 2, 0, 2]
    report = json.loads((out / "report.json").read_text())
    assert report["dedup_dropped"] == 18 - 8 and report["keep"] == "all"


def test_a_positive_reward_that_is_not_correct_is_never_kept(tmp_path: Path) -> None:
    """With a format bonus a well-formed wrong answer earns reward > 0; it stays out of sft.jsonl."""
    refs = _references()
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps({"task_id": t, "actions": [_answer(r, "w")]}) + "\n" for t, r in refs))
    out = tmp_path / "synth"
    result = runner.invoke(app, ["synth", *ENV, "-a", "format_weight=0.5", "--policy", f"script:{script}", "-n", "2",
                                 "-o", str(out), "--band", "0,0"])
    assert result.exit_code == 0, result.output
    trajectories = _jsonl(out / "trajectories.jsonl")
    assert all(t["verdict"]["status"] == "incorrect" and t["verdict"]["reward"] > 0 for t in trajectories)
    assert _jsonl(out / "sft.jsonl") == []
    assert len(_jsonl(out / "rl.jsonl")) == 6  # pass rate 0 is inside --band 0,0


def test_multi_turn_env_rows_hold_every_turn(tmp_path: Path) -> None:
    registry.register("test/guess-v1", GuessEnv, override=True)
    out = tmp_path / "guess"
    result = runner.invoke(app, ["synth", "--env", "test/guess-v1", "--policy", "oracle", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    sft = _jsonl(out / "sft.jsonl")
    assert len(sft) == 12
    first = sft[0]["messages"]
    assert [m["role"] for m in first] == ["user", "assistant", "user", "assistant"]
    assert first[1]["content"] == "50" and first[2]["content"] == "No, lower." and first[3]["content"] == "7"

    out = tmp_path / "tool"
    result = runner.invoke(app, ["synth", "--env", "math/reasoning-gym-tool-v1", "-a", "size=3", "-a",
                                 "scoring=inline", "--policy", "oracle", "-n", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    sft = _jsonl(out / "sft.jsonl")
    assert len(sft) == 3
    roles = [m["role"] for m in sft[0]["messages"]]
    assert "tool" in roles and roles[-1] == "assistant"
    call = next(m for m in sft[0]["messages"] if m.get("tool_calls"))
    assert call["tool_calls"][0]["type"] == "function" and "name" in call["tool_calls"][0]["function"]


def test_sft_rows_load_as_a_conversational_dataset(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "tool"
    result = runner.invoke(app, ["synth", "--env", "math/reasoning-gym-tool-v1", "-a", "size=3", "-a",
                                 "scoring=inline", "--policy", "oracle", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    loaded = datasets.load_dataset("json", data_files=str(out / "sft.jsonl"), split="train",
                                   cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == 6 and loaded[0]["messages"][0]["role"] in ("system", "user")


def test_kill_9_loses_no_finished_sample(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    cmd = [str(Path(sys.executable).with_name("rlvr")), "synth", "--env", "math/reasoning-gym-v1", "-a", "size=3000",
           "-a", "scoring=inline", "--policy", "oracle", "-n", "2", "-o", str(out), "--concurrency", "4"]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    path = out / "trajectories.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if path.is_file() and path.stat().st_size > 20_000:
            break
        time.sleep(0.01)
    if child.poll() is not None:
        pytest.fail("synth finished before it could be killed; raise size")
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    written = [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]
    before = {(r["task_id"], r["info"]["sample"]) for r in written}
    assert 0 < len(before) < 6000
    # Resume on a smaller slice so the test stays short: every finished sample is kept, none repeated.
    limit = max(int(tid.rsplit("-", 1)[1]) for tid, _ in before) + 1
    result = runner.invoke(app, ["synth", "--env", "math/reasoning-gym-v1", "-a", "size=3000", "-a",
                                 "scoring=inline", "--policy", "oracle", "-n", "2", "-o", str(out), "--limit",
                                 str(limit)])
    assert result.exit_code == 0, result.output
    rows = _jsonl(path)
    keys = [(r["task_id"], r["info"]["sample"]) for r in rows]
    assert len(keys) == len(set(keys)) and before <= set(keys)
    report = json.loads((out / "report.json").read_text())
    assert report["time"]["samples_resumed"] >= len(before) - 1  # a torn last line is the only loss allowed
    assert report["samples"] == 2 * limit and report["sft_rows"] == 2 * limit


def test_export_tasks_exports_exactly_the_band(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "synth"
    _synth(tmp_path, out)
    band = [r["task_id"] for r in _jsonl(out / "rl.jsonl")]
    assert len(band) == 3
    verl = tmp_path / "verl"
    result = runner.invoke(app, ["export", "--backend", "verl", *ENV, "--tasks", str(out / "rl.jsonl"), "-o",
                                 str(verl)])
    assert result.exit_code == 0, result.output
    rows = pq.read_table(verl / "train.parquet").to_pylist()
    assert [r["extra_info"]["task_id"] for r in rows] == band
    openrlhf = tmp_path / "openrlhf"
    result = runner.invoke(app, ["export", "--backend", "openrlhf", *ENV, "--tasks", str(out / "rl.jsonl"), "-o",
                                 str(openrlhf)])
    assert result.exit_code == 0, result.output
    exported = [json.loads(line)["task_id"] for f in sorted(openrlhf.glob("*.jsonl"))
                for line in f.read_text().splitlines()]
    assert exported == band


def test_train_tasks_dry_run_exports_the_band(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "synth"
    _synth(tmp_path, out)
    band = [r["task_id"] for r in _jsonl(out / "rl.jsonl")]
    run = tmp_path / "run"
    result = runner.invoke(app, ["train", "--backend", "verl", *ENV, "--tasks", str(out / "rl.jsonl"), "--dry-run",
                                 "-o", str(run)])
    assert result.exit_code == 0, result.output
    rows = pq.read_table(run / "export" / "train.parquet").to_pylist()
    assert [r["extra_info"]["task_id"] for r in rows] == band


def test_tasks_file_for_other_arguments_or_unknown_tasks_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    _synth(tmp_path, out)
    tasks = str(out / "rl.jsonl")
    result = runner.invoke(app, ["export", "--backend", "verl", *ENV, "-a", "seed=3", "--tasks", tasks, "-o",
                                 str(tmp_path / "x")])
    assert result.exit_code == 2 and "same --env and --env-arg" in result.output
    bare = tmp_path / "ids.jsonl"
    bare.write_text('{"task_id": "rg-basic_arithmetic-0-1"}\n{"task_id": "nope"}\n')
    result = runner.invoke(app, ["export", "--backend", "verl", *ENV, "--tasks", str(bare), "-o", str(tmp_path / "y")])
    assert result.exit_code == 2 and "'nope'" in result.output
    bare.write_text('{"id": 3}\n')
    result = runner.invoke(app, ["export", "--backend", "verl", *ENV, "--tasks", str(bare), "-o", str(tmp_path / "z")])
    assert result.exit_code == 2 and "ids.jsonl:1" in result.output and '"task_id"' in result.output


@pytest.mark.parametrize("text", ["0.9,0.1", "1", "a,b", "-0.1,0.5", "0,1.5", "0,0.5,1"])
def test_bad_band_is_refused_with_the_fix(text: str) -> None:
    with pytest.raises(Exception, match="--band must be LO,HI"):
        parse_band(text)


def test_bad_options_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synth", *ENV, "--policy", "oracle", "-n", "2", "-o", str(tmp_path / "a"),
                                 "--keep", "some"])
    assert result.exit_code == 2 and "--keep must be one of correct, all" in result.output
    result = runner.invoke(app, ["synth", *ENV, "--policy", "oracle", "-n", "2", "-o", str(tmp_path / "b"),
                                 "--band", "0.8,0.2"])
    assert result.exit_code == 2 and "--band" in result.output
    first = runner.invoke(app, ["synth", *ENV, "--policy", "oracle", "-n", "1", "-o", str(tmp_path / "c")])
    assert first.exit_code == 0, first.output
    other = runner.invoke(app, ["synth", *ENV, "--policy", "noop", "-n", "1", "-o", str(tmp_path / "c")])
    assert other.exit_code == 2 and "another configuration" in other.output
    fresh = runner.invoke(app, ["synth", *ENV, "--policy", "noop", "-n", "1", "-o", str(tmp_path / "c"), "--overwrite"])
    assert fresh.exit_code == 0, fresh.output
    report = json.loads((tmp_path / "c" / "report.json").read_text())
    assert report["pass_at"]["1"]["value"] == 0.0 and len(report["runs"]) == 1 and report["sft_rows"] == 0
    first = runner.invoke(app, ["synth", *ENV, "--policy", "oracle", "-n", "1", "-o", str(tmp_path / "c"),
                                "--overwrite"])
    assert first.exit_code == 0, first.output
    assert math.isclose(json.loads((tmp_path / "c" / "report.json").read_text())["pass_at"]["1"]["value"], 1.0)


def test_synth_config_records_what_earlier_runs_recorded(tmp_path: Path) -> None:
    """Folders written before the config model existed keep resuming; band, keep and dedup are not recorded."""
    config = SynthConfig.build(env="math/gsm8k-v1", env_args={"size": 2}, output=tmp_path, n=4, model="smollm2",
                               band=(0.2, 0.8), keep="all", dedup=True, temperature=0.7)
    assert config.record() == {
        "command": "synth", "env": "math/gsm8k-v1", "env_args": {"size": 2}, "policy": None, "model": "smollm2",
        "base_url": None, "generator": "transformers",
        "sampling": {"max_tokens": 512, "temperature": 0.7, "top_p": 1.0, "seed": 0}, "seed": 0}
    with pytest.raises(ConfigError, match="--keep must be one of correct, all"):
        SynthConfig.build(env="math/gsm8k-v1", output=tmp_path, n=1, keep="best")
