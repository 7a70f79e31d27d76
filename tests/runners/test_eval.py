"""`rlvr eval` with scripted policies (no model): pass@k, incremental resumable output, reports."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlvr.core.errors import ConfigError
from rlvr.core.metrics import pass_at_k
from rlvr.core.types import Trajectory
from rlvr.environments.registry import make
from rlvr.runners.cli import app
from rlvr.runners.eval import EvalConfig, read_trajectories, score_file

runner = CliRunner()
ENV = ["--env", "math/reasoning-gym-v1", "-a", "task=basic_arithmetic", "-a", "size=4", "-a", "scoring=inline"]


def _brute_force(n: int, c: int, k: int) -> float:
    """Probability that a random k-subset of n samples (c correct) holds a correct one, by enumeration."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(1, 0, 1), (1, 1, 1), (5, 2, 1), (5, 2, 3), (6, 0, 4), (8, 7, 2), (7, 3, 7)])
def test_pass_at_k_matches_enumeration(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(_brute_force(n, c, k), abs=1e-12)


@given(st.integers(1, 400), st.data())
def test_pass_at_k_stable_form_equals_binomials(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-9)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_pass_at_k_rejects_bad_counts() -> None:
    with pytest.raises(ConfigError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)


def _rows(path: Path) -> list[Trajectory]:
    return list(read_trajectories(path))


def test_eval_oracle_and_noop(tmp_path: Path) -> None:
    out = tmp_path / "oracle.jsonl"
    result = runner.invoke(app, ["eval", *ENV, "--policy", "oracle", "-n", "3", "-k", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "pass@1" in result.output and "pass@2" in result.output and "1.000  (4 tasks)" in result.output
    rows = _rows(out)
    assert len(rows) == 12 and all(t.verdict is not None and t.verdict.status == "correct" for t in rows)
    meta = json.loads((tmp_path / "oracle.jsonl.meta.json").read_text())
    assert meta["policy"] == "oracle" and meta["env_args"]["size"] == 4

    out = tmp_path / "noop.jsonl"
    result = runner.invoke(app, ["eval", *ENV, "--policy", "noop", "-n", "2", "-k", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    stats = score_file(out)
    assert stats.pass_at(1) == (0.0, 4) and stats.pass_at(2) == (0.0, 4) and stats.mean_reward == 0.0
    assert stats.statuses["correct"] == 0 and sum(stats.statuses.values()) == 8


def test_eval_resumes_and_refuses_other_configuration(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    assert runner.invoke(app, ["eval", *ENV, "--policy", "oracle", "-n", "2", "-o", str(out)]).exit_code == 0
    first = out.read_text().splitlines()
    # A kill -9 mid-write leaves a torn last line: it is cut and its episode run again.
    out.write_text("\n".join(first[:-1]) + "\n" + first[-1][:40])
    result = runner.invoke(app, ["eval", *ENV, "--policy", "oracle", "-n", "3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "7 / 5" in result.output  # 7 rows kept, 1 redone + 4 new samples
    rows = _rows(out)
    pairs = [(t.task_id, t.info["sample"]) for t in rows]
    assert len(pairs) == 12 and len(set(pairs)) == 12
    result = runner.invoke(app, ["eval", *ENV, "--policy", "noop", "-n", "3", "-o", str(out)])
    assert result.exit_code == 2 and "another configuration (changed: policy: 'oracle' → 'noop')" in result.output
    result = runner.invoke(app, ["eval", *ENV, "--policy", "noop", "-n", "1", "-o", str(out), "--overwrite"])
    assert result.exit_code == 0 and len(_rows(out)) == 4


def test_eval_option_errors(tmp_path: Path) -> None:
    out = str(tmp_path / "x.jsonl")
    result = runner.invoke(app, ["eval", *ENV, "--policy", "oracle", "-n", "2", "-k", "3", "-o", out])
    assert result.exit_code == 2 and "-k 3 is larger than -n 2" in result.output
    result = runner.invoke(app, ["eval", *ENV, "-o", out])
    assert result.exit_code == 2 and "give --model" in result.output
    result = runner.invoke(app, ["eval", *ENV, "--policy", "oracle", "--layout", "flat", "-o", out])
    assert result.exit_code == 2 and "--layout must be" in result.output


def test_eval_config_names_the_bad_field_and_refuses_unknown_ones(tmp_path: Path) -> None:
    base = {"env": "math/reasoning-gym-v1", "output": tmp_path / "out.jsonl", "policy": "oracle"}
    with pytest.raises(ConfigError, match=r"^n: Input should be greater than or equal to 1$"):
        EvalConfig.build(**base, n=0)
    with pytest.raises(ConfigError, match=r"^samples: Extra inputs are not permitted$"):
        EvalConfig.build(**base, samples=3)
    with pytest.raises(ConfigError, match=r"top_p must be in \(0, 1\]"):
        EvalConfig.build(**base, top_p=0.0)
    with pytest.raises(ConfigError, match="-k 3 is larger than -n 2"):
        EvalConfig.build(**base, n=2, k=3)
    config = EvalConfig.build(**base)
    with pytest.raises(ValueError, match="frozen"):
        config.n = 5  # type: ignore[misc]


def test_eval_config_records_what_earlier_runs_recorded(tmp_path: Path) -> None:
    """Outputs written before the config model existed keep resuming: the record has the same fields."""
    served = EvalConfig.build(env="math/gsm8k-v1", env_args={"size": 2}, output=tmp_path / "o.jsonl", model="m",
                              base_url="http://127.0.0.1:8000/v1", temperature=0.5, seed=3, layout="turn")
    assert served.record() == {
        "env": "math/gsm8k-v1", "env_args": {"size": 2}, "policy": None, "model": "m",
        "base_url": "http://127.0.0.1:8000/v1", "generator": None, "token_in": False,
        "sampling": {"max_tokens": 512, "temperature": 0.5, "top_p": 1.0, "seed": 3}, "layout": "turn", "seed": 3}
    scripted = EvalConfig.build(env="math/gsm8k-v1", output=tmp_path / "o.jsonl", policy="oracle")
    assert scripted.record()["sampling"] is None and scripted.record()["generator"] is None
    local = EvalConfig.build(env="math/gsm8k-v1", output=tmp_path / "o.jsonl", model="smollm2", generator="vllm")
    assert local.record()["generator"] == "vllm"


ARGS = {"task": "basic_arithmetic", "size": 4, "scoring": "inline"}


def _script(path: Path, count: int) -> None:
    env = make("math/reasoning-gym-v1", **ARGS)
    try:
        rows = [{"task_id": t.id, "actions": [env.reference_actions(t)[0].content]} for t in env.tasks[:count]]
    finally:
        env.close()
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_error_rows_are_readable_and_broken_episodes_rerun(tmp_path: Path) -> None:
    script, out = tmp_path / "script.jsonl", tmp_path / "out.jsonl"
    _script(script, 1)  # tasks 2-4 have no actions: their episodes break (error verdict, reward None)
    result = runner.invoke(app, ["eval", *ENV, "--policy", f"script:{script}", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(read_trajectories(out))  # an error verdict (reward None) must survive the JSONL round trip
    broken = [t for t in rows if t.error]
    assert len(rows) == 8 and len(broken) == 6
    assert all(t.verdict is not None and t.verdict.status == "error" and t.verdict.reward is None for t in broken)
    stats = score_file(out)
    assert stats.errors == 6 and stats.pass_at(1) == (1.0, 1)
    assert f"6 episodes broke (field `error` of their rows in {out}" in result.output  # the why, not only a count
    assert f"the first: {broken[0].error}" in " ".join(result.output.split())

    _script(script, 4)  # the "server" is back: a rerun redoes the broken episodes only, without duplicates
    result = runner.invoke(app, ["eval", *ENV, "--policy", f"script:{script}", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 / 6" in result.output and "broke" not in result.output
    rows = list(read_trajectories(out))
    assert sorted((t.task_id, t.info["sample"]) for t in rows) == sorted({(t.task_id, t.info["sample"]) for t in rows})
    assert len(rows) == 8 and not any(t.error for t in rows)
    assert score_file(out).pass_at(2) == (1.0, 4)


def test_bad_generator_names_the_option(tmp_path):
    from rlvr.runners.eval import build_policy

    with pytest.raises(ConfigError, match="--generator"):
        build_policy(policy=None, model=str(tmp_path), base_url=None, generator="foo")
