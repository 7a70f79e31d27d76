"""veRL export files, overrides and `compute_score` without veRL installed (core venv; pyarrow comes with datasets).

The overrides pin veRL's v1 trainer (which drops failed rollouts) and switch a legacy-trainer run to NaN scores; a
re-export keeps veRL's checkpoints and the user's files.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest

pq = pytest.importorskip("pyarrow.parquet")

import rlvr  # noqa: E402
from rlvr.adapters.export import close_cached_envs, encode_reference, read_manifest  # noqa: E402
from rlvr.adapters.verl import (  # noqa: E402
    AGENT_LOOP_TARGET,
    AGENT_NAME,
    ON_ERROR_KEY,
    ErrorVerdict,
    compute_score,
    export_verl,
    reward_extra_info,
    verl_command,
    verl_overrides,
)
from rlvr.core.errors import AdapterError, ConfigError  # noqa: E402
from rlvr.core.types import Verdict  # noqa: E402

ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 6, "seed": 2}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 5, "seed": 2}


@pytest.fixture(scope="module", autouse=True)
def _close_cached_envs() -> Any:
    """compute_score / the agent loop build envs once per process; stop their verifier pools afterwards."""
    yield
    close_cached_envs()


@pytest.fixture(scope="module")
def st_env() -> Any:
    env = rlvr.make(ST_ID, **ST_ARGS)
    yield env
    env.close()


@pytest.fixture(scope="module")
def mt_env() -> Any:
    env = rlvr.make(MT_ID, **MT_ARGS)
    yield env
    env.close()


def _overrides_dict(overrides: list[str]) -> dict[str, str]:
    return dict(o.split("=", 1) for o in overrides)


def test_single_turn_export_rows_match_tasks(st_env: Any, tmp_path: Path) -> None:
    manifest = export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=4, val_size=2)
    assert (manifest.backend, manifest.multi_turn, manifest.n_train, manifest.n_val) == ("verl", False, 4, 2)
    assert manifest.files == {"train": "train.parquet", "val": "val.parquet", "reward": "reward.py"}
    assert read_manifest(tmp_path) == manifest
    train = pq.read_table(tmp_path / "train.parquet").to_pylist()
    val = pq.read_table(tmp_path / "val.parquet").to_pylist()
    tasks = [st_env.tasks[i] for i in range(6)]
    assert [r["extra_info"]["task_id"] for r in train + val] == [t.id for t in tasks]
    for row, task in zip(train + val, tasks, strict=True):
        assert row["data_source"] == ST_ID and row["ability"] == "math"
        assert row["prompt"] == [{"role": m.role, "content": m.content} for m in task.prompt]
        assert row["reward_model"] == {"style": "rule", "ground_truth": encode_reference(task)}
        assert json.loads(row["extra_info"]["env_args"]) == ST_ARGS
        assert row["extra_info"]["env_id"] == ST_ID
        assert "agent_name" not in row
    assert [r["extra_info"]["index"] for r in val] == [0, 1] and val[0]["extra_info"]["split"] == "val"
    assert not (tmp_path / "agent_loop.yaml").exists()


def test_multi_turn_export_has_agent_rows_and_config(mt_env: Any, tmp_path: Path) -> None:
    manifest = export_verl(mt_env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, on_error="nan")
    assert manifest.multi_turn and manifest.n_train == 5 and manifest.n_val == 0
    assert manifest.files["agent_config"] == "agent_loop.yaml"
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert {r["agent_name"] for r in rows} == {AGENT_NAME}
    yaml_text = (tmp_path / "agent_loop.yaml").read_text()
    assert f"- name: {AGENT_NAME}\n  _target_: {AGENT_LOOP_TARGET}\n  on_error: nan\n" in yaml_text
    module, _, cls = AGENT_LOOP_TARGET.rpartition(".")
    assert importlib.util.find_spec(module) is not None and cls == "RlvrAgentLoop"


def test_generated_reward_module_delegates_to_rlvr(st_env: Any, tmp_path: Path) -> None:
    export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=2)
    source = (tmp_path / "reward.py").read_text()
    ast.parse(source)
    spec = importlib.util.spec_from_file_location("rlvr_generated_reward", tmp_path / "reward.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ON_ERROR == "raise"
    row = pq.read_table(tmp_path / "train.parquet").to_pylist()[0]
    task = st_env.tasks[0]
    answer = st_env.verifier.reference_response(task.reference)
    out = module.compute_score(row["data_source"], answer, row["reward_model"]["ground_truth"], row["extra_info"])
    direct = compute_score(ST_ID, answer, encode_reference(task), row["extra_info"])
    assert {k: v for k, v in out.items() if k != "rlvr_elapsed_s"} == {k: v for k, v in direct.items()
                                                                      if k != "rlvr_elapsed_s"}
    assert out["score"] == st_env.verifier.verify(answer, task.reference).reward == 1.0
    with pytest.raises(ErrorVerdict):
        module.compute_score(ST_ID, answer, json.dumps(""), row["extra_info"])


def test_export_refuses_non_empty_folder_and_bad_sizes(st_env: Any, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("user file")
    with pytest.raises(ConfigError, match="not empty"):
        export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS)
    assert (tmp_path / "keep.txt").exists()
    export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=1, overwrite=True)
    assert (tmp_path / "keep.txt").exists()  # overwrite replaces the export's files only (see test_overwrite_keeps_...)
    with pytest.raises(ConfigError, match="val_size"):
        export_verl(st_env, tmp_path / "b", env_id=ST_ID, env_args=ST_ARGS, val_size=6)
    with pytest.raises(ConfigError, match="limit"):
        export_verl(st_env, tmp_path / "c", env_id=ST_ID, env_args=ST_ARGS, limit=0)
    with pytest.raises(ConfigError, match="on_error"):
        export_verl(st_env, tmp_path / "d", env_id=ST_ID, env_args=ST_ARGS, on_error="zero")


@pytest.mark.parametrize("text, status", [("The answer is \\boxed{RIGHT}", "correct"),
                                          ("The answer is \\boxed{12345678}", "incorrect"),
                                          ("no idea", "no_answer")])
def test_compute_score_equals_the_verifier(st_env: Any, text: str, status: str) -> None:
    task = st_env.tasks[1]
    text = text.replace("RIGHT", str(task.reference))
    verdict = st_env.verifier.verify(text, task.reference)
    out = compute_score(ST_ID, text, encode_reference(task), {"env_id": ST_ID, "env_args": json.dumps(ST_ARGS),
                                                              "task_id": task.id, "num_turns": 2})
    assert verdict.status == status
    assert out == {"score": verdict.reward, **reward_extra_info(verdict)} | {"rlvr_elapsed_s": out["rlvr_elapsed_s"]}
    assert out["rlvr_status"] == status and out[f"rlvr_{status}"] == 1.0


def test_error_verdict_raises_or_scores_nan_never_zero(st_env: Any) -> None:
    info = {"env_id": ST_ID, "env_args": json.dumps(ST_ARGS), "task_id": "t-err"}
    with pytest.raises(ErrorVerdict, match="t-err") as caught:
        compute_score(ST_ID, "\\boxed{1}", json.dumps(""), info)
    assert caught.value.verdict.status == "error" and caught.value.verdict.reward is None
    with pytest.raises(ErrorVerdict):  # a ground truth that is not JSON is an error verdict too
        compute_score(ST_ID, "\\boxed{1}", "{not json", info)
    out = compute_score(ST_ID, "\\boxed{1}", json.dumps(""), info, on_error="nan")
    assert math.isnan(out["score"]) and out["rlvr_status"] == "error" and out["rlvr_error"] == 1.0
    with pytest.raises(AdapterError, match="env_id"):
        compute_score(None, "x", json.dumps("1"), {})


def test_reward_extra_info_has_the_same_keys_for_every_status() -> None:
    verdicts = [Verdict(status="correct", reward=1.0, components={"format": 1.0}), Verdict.error("broken"),
                Verdict.timeout("slow"), Verdict(status="no_answer", reward=0.0)]
    keys = {tuple(reward_extra_info(v)) for v in verdicts}
    assert len(keys) == 1
    assert "reward" not in next(iter(keys)) and "acc" not in next(iter(keys))  # names veRL itself uses


def test_overrides_point_at_the_export(mt_env: Any, tmp_path: Path) -> None:
    export_verl(mt_env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=4, val_size=1)
    overrides = verl_overrides(tmp_path, model="/models/x", steps=3, n_gpus=2,
                               trainer_args=["data.train_batch_size=2", "+trainer.extra=1"])
    values = _overrides_dict(overrides)
    assert values["data.train_files"] == str((tmp_path / "train.parquet").resolve())
    assert values["data.val_files"] == str((tmp_path / "val.parquet").resolve())
    assert values["reward.custom_reward_function.path"] == str((tmp_path / "reward.py").resolve())
    assert values["reward.custom_reward_function.name"] == "compute_score"
    assert values["actor_rollout_ref.rollout.agent.agent_loop_config_path"] == str((tmp_path / "agent_loop.yaml")
                                                                                   .resolve())
    assert values["trainer.total_training_steps"] == "3" and values["trainer.n_gpus_per_node"] == "2"
    assert values["actor_rollout_ref.model.path"] == "/models/x"
    assert [o for o in overrides if o.startswith("data.train_batch_size=")] == ["data.train_batch_size=2"]
    assert overrides[-2:] == ["data.train_batch_size=2", "+trainer.extra=1"]
    command = verl_command(tmp_path, python="/venv/bin/python", model="/models/x", steps=3)
    assert command[:3] == ["/venv/bin/python", "-m", "verl.trainer.main_ppo"]
    assert command[3:] == verl_overrides(tmp_path, model="/models/x", steps=3)


def test_overrides_reject_bad_input(st_env: Any, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rlvr export"):
        verl_overrides(tmp_path, model="m", steps=1)
    export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=2)
    values = _overrides_dict(verl_overrides(tmp_path, model="m", steps=1))
    assert "actor_rollout_ref.rollout.agent.agent_loop_config_path" not in values
    assert values["data.val_files"] == values["data.train_files"] and values["trainer.test_freq"] == "-1"
    with pytest.raises(ConfigError, match="steps"):
        verl_overrides(tmp_path, model="m", steps=0)
    with pytest.raises(ConfigError, match="key=value"):
        verl_overrides(tmp_path, model="m", steps=1, trainer_args=["--lr 1e-5"])


def _value(overrides: list[str], key: str) -> str | None:
    found = [o.split("=", 1)[1] for o in overrides if o.lstrip("+").split("=", 1)[0] == key]
    return found[-1] if found else None


def test_overwrite_keeps_checkpoints_and_user_files(st_env: Any, tmp_path: Path) -> None:
    """Bug: `overwrite=True` ran `shutil.rmtree` on the folder. `rlvr train` re-exports into the same
    folder with overwrite on every run, and the overrides keep veRL's checkpoints in
    `<export>/checkpoints`, so a rerun deleted the checkpoints veRL's `resume_mode=auto` resumes from
    (and `-o .` would have deleted the user's files). Now only the export's own files are replaced."""
    export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=2, val_size=1)
    checkpoint = tmp_path / "checkpoints" / "global_step_1" / "actor.pt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"weights")
    (tmp_path / "notes.txt").write_text("mine")
    manifest = export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=3, overwrite=True)
    assert checkpoint.read_bytes() == b"weights" and (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "val.parquet").exists()  # a stale file of the previous export is gone
    assert "val" not in manifest.files and read_manifest(tmp_path).n_train == 3
    assert pq.read_table(tmp_path / "train.parquet").num_rows == 3


def test_overrides_pin_the_v1_trainer_and_an_absolute_model_path(st_env: Any, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Bugs: (a) rlvr's error handling relies on veRL's v1 trainer dropping failed rollouts, but the
    overrides left the trainer choice to veRL's default; (b) a relative local model path was passed
    as is although `rlvr train` starts veRL in its output folder (another cwd)."""
    export_verl(st_env, tmp_path / "export", env_id=ST_ID, env_args=ST_ARGS, limit=2)
    (tmp_path / "models" / "smol").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    overrides = verl_overrides("export", model="models/smol", steps=1)
    assert _value(overrides, "actor_rollout_ref.model.path") == str((tmp_path / "models" / "smol").resolve())
    assert _value(overrides, "trainer.use_v1") == "True" and _value(overrides, ON_ERROR_KEY) is None
    hub = verl_overrides("export", model="Qwen/Qwen2.5-0.5B-Instruct", steps=1)
    assert _value(hub, "actor_rollout_ref.model.path") == "Qwen/Qwen2.5-0.5B-Instruct"  # a hub id stays


def test_legacy_trainer_scores_error_verdicts_nan(st_env: Any, tmp_path: Path) -> None:
    """Bug: with `trainer.use_v1=False` (veRL's legacy `RayPPOTrainer`, which gathers rollouts without
    tolerating exceptions) the default `on_error='raise'` stopped the whole run at the first error
    verdict. The overrides now switch such runs to NaN scores, unless the user chose `on_error`."""
    export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=2)
    legacy = verl_overrides(tmp_path, model="m", steps=1, trainer_args=["trainer.use_v1=False"])
    assert _value(legacy, "trainer.use_v1") == "False" and _value(legacy, ON_ERROR_KEY) == "nan"
    assert f"+{ON_ERROR_KEY}=nan" in legacy
    chosen = verl_overrides(tmp_path, model="m", steps=1,
                            trainer_args=["trainer.use_v1=false", f"+{ON_ERROR_KEY}=raise"])
    assert [o for o in chosen if ON_ERROR_KEY in o] == [f"+{ON_ERROR_KEY}=raise"]
    v1 = verl_overrides(tmp_path, model="m", steps=1, trainer_args=["trainer.use_v1=False", "trainer.use_v1=True"])
    assert _value(v1, ON_ERROR_KEY) is None
