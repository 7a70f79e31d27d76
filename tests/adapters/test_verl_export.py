"""veRL export files, overrides and `compute_score` without veRL installed (core venv; pyarrow comes with datasets).

The overrides pin veRL's v1 trainer (which drops failed rollouts) and switch a legacy-trainer run to NaN scores; a
re-export keeps veRL's checkpoints and the user's files.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from _generated_files import import_by_path  # noqa: E402

import rlvr  # noqa: E402
from rlvr.adapters.export import EXPORT_FORMAT, close_cached_envs, encode_reference, read_manifest  # noqa: E402
from rlvr.adapters.verl import (  # noqa: E402
    AGENT_LOOP_TARGET,
    AGENT_NAME,
    ON_ERROR_KEY,
    UnscorableSampleError,
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
ROW_FORMAT = {"export_format": EXPORT_FORMAT, "reference_format": "json"}
"""What every row `rlvr export` writes carries besides its task: the export format and how its reference is stored."""


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
        assert row["reward_model"] == {"style": "rule", "ground_truth": task.reference}  # math: plain text
        assert json.loads(row["extra_info"]["env_args"]) == ST_ARGS
        assert row["extra_info"]["env_id"] == ST_ID
        assert row["extra_info"]["reference_format"] == "text"
        assert json.loads(row["extra_info"]["verifier"]) == manifest.verifier
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
    direct = compute_score(ST_ID, answer, row["reward_model"]["ground_truth"], row["extra_info"])
    assert {k: v for k, v in out.items() if k != "rlvr_elapsed_s"} == {k: v for k, v in direct.items()
                                                                      if k != "rlvr_elapsed_s"}
    assert out["score"] == st_env.verifier.verify(answer, task.reference).reward == 1.0
    with pytest.raises(UnscorableSampleError):
        module.compute_score(ST_ID, answer, "", row["extra_info"])


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
                                                              "task_id": task.id, "num_turns": 2, **ROW_FORMAT})
    assert verdict.status == status
    assert out == {"score": verdict.reward, **reward_extra_info(verdict)} | {"rlvr_elapsed_s": out["rlvr_elapsed_s"]}
    assert out["rlvr_status"] == status and out[f"rlvr_{status}"] == 1.0


def test_error_verdict_raises_or_scores_nan_never_zero(st_env: Any) -> None:
    info = {"env_id": ST_ID, "env_args": json.dumps(ST_ARGS), "task_id": "t-err", **ROW_FORMAT}
    with pytest.raises(UnscorableSampleError, match="t-err") as caught:
        compute_score(ST_ID, "\\boxed{1}", json.dumps(""), info)
    assert caught.value.verdict.status == "error" and caught.value.verdict.reward is None
    with pytest.raises(UnscorableSampleError):  # a ground truth that is not JSON is an error verdict too
        compute_score(ST_ID, "\\boxed{1}", "{not json", info)
    out = compute_score(ST_ID, "\\boxed{1}", json.dumps(""), info, on_error="nan")
    assert math.isnan(out["score"]) and out["rlvr_status"] == "error" and out["rlvr_error"] == 1.0
    with pytest.raises(AdapterError, match="env_id"):
        compute_score(None, "x", json.dumps("1"), dict(ROW_FORMAT))


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


# -- verifier spec, export format, and exports of another format ----------------------------------------
OLD_EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports" / "before_verifier_spec.json"
"""Rows, files and manifests written by `rlvr export` before the verifier spec (JSON ground truth, env id +
env args only), recorded from main's code (`written_by` names the commit): an export of another format."""


def test_an_export_of_another_format_is_refused_with_re_run_export(tmp_path: Path) -> None:
    old = json.loads(OLD_EXPORTS.read_text())["single_turn"]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "reward.py").write_text(old["verl"]["files"]["reward.py"])
    (tmp_path / "old" / "rlvr_export.json").write_text(json.dumps(old["verl"]["manifest"]))
    with pytest.raises(ConfigError, match="re-run `rlvr export`"):
        read_manifest(tmp_path / "old")
    old_reward = import_by_path(tmp_path / "old" / "reward.py", "old_reward")
    env = rlvr.make(old["env_id"], **old["env_args"])
    tasks = {t.id: t for t in env.tasks}
    for old_row in old["verl"]["rows"]:
        text = env.verifier.reference_response(tasks[old_row["extra_info"]["task_id"]].reference)
        for score in (old_reward.compute_score, compute_score):
            with pytest.raises(ConfigError, match=r"re-run `rlvr export`"):
                score(old_row["data_source"], text, old_row["reward_model"]["ground_truth"], old_row["extra_info"])
    export_verl(env, tmp_path / "new", env_id=old["env_id"], env_args=old["env_args"], limit=len(old["verl"]["rows"]))
    manifest = read_manifest(tmp_path / "new")
    assert manifest.format == EXPORT_FORMAT and manifest.verifier_spec is not None
    for row in pq.read_table(tmp_path / "new" / "train.parquet").to_pylist():
        assert row["extra_info"]["export_format"] == EXPORT_FORMAT
        task = tasks[row["extra_info"]["task_id"]]
        out = compute_score(row["data_source"], env.verifier.reference_response(task.reference),
                            row["reward_model"]["ground_truth"], row["extra_info"])
        assert (out["score"], out["rlvr_status"]) == (1.0, "correct")
    env.close()


def test_spec_rows_are_scored_without_building_the_env(st_env: Any, tmp_path: Path, monkeypatch: Any) -> None:
    export_verl(st_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=3)
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    close_cached_envs()
    builds: list[str] = []

    def unreadable_dataset(env_id: str, **kwargs: Any) -> Any:
        builds.append(env_id)
        raise ConfigError(f"{env_id}: the dataset cannot be read here")

    import rlvr.environments.registry

    monkeypatch.setattr(rlvr.environments.registry, "make", unreadable_dataset)
    tasks = {t.id: t for t in st_env.tasks}
    for row in rows:
        task = tasks[row["extra_info"]["task_id"]]
        out = compute_score(row["data_source"], st_env.verifier.reference_response(task.reference),
                            row["reward_model"]["ground_truth"], row["extra_info"])
        assert (out["score"], out["rlvr_status"]) == (1.0, "correct")
    assert builds == []  # one verifier from the spec, no environment, no dataset
    old_style = {k: v for k, v in rows[0]["extra_info"].items() if k not in ("verifier", "reference_format")}
    with pytest.raises(ConfigError, match="cannot be read"):  # a row without a spec rebuilds the env
        compute_score(ST_ID, "\\boxed{1}", json.dumps(rows[0]["reward_model"]["ground_truth"]), old_style)
    assert builds == [ST_ID]


def test_verifier_spec_rebuilds_the_verifier_or_is_none() -> None:
    from rlvr.adapters.export import export_spec
    from rlvr.verifiers.registry import VerifierSpec
    from rlvr.verifiers.testing import ConstantVerifier

    env = rlvr.make(ST_ID, **ST_ARGS, format_weight=0.2)  # FormatReward around the math verifier
    spec = export_spec(env.verifier)
    assert spec is not None and spec["wrapper"]["name"] == "rlvr.verifiers.wrappers:FormatReward"
    assert spec["name"] == "math" and spec["wrapper"]["args"]["weight"] == 0.2
    rebuilt = VerifierSpec.parse(json.dumps(spec)).build()
    task = env.tasks[0]
    text = "\\boxed{" + str(task.reference) + "}"
    assert rebuilt.verify(text, task.reference).reward == env.verifier.verify(text, task.reference).reward == 1.2
    assert VerifierSpec.parse(spec).cached() is VerifierSpec.parse(json.dumps(spec)).cached()
    rebuilt.close()
    env.close()
    assert export_spec(ConstantVerifier()) is None  # built from other arguments than a spec: no spec
    with pytest.raises(ConfigError, match="not a Verifier"):
        VerifierSpec(name="rlvr.adapters.export:ExportManifest").build()


def test_typed_references_stay_json_and_text_references_plain() -> None:
    from rlvr.adapters.export import decode_reference, reference_format
    from rlvr.adapters.verl.data import task_row
    from rlvr.core.types import Message, Task

    prompt = (Message(role="user", content="q"),)
    sql = Task(id="s", prompt=prompt, reference={"gold": "SELECT 1", "db": "x.sqlite"})
    math_task = Task(id="m", prompt=prompt, reference="3/4")
    assert reference_format([math_task]) == "text" and reference_format([math_task, sql]) == "json"
    row = task_row(sql, env_id="sql/x-v1", env_args={}, index=0, split="train", multi_turn=False, fmt="json")
    assert json.loads(row["reward_model"]["ground_truth"]) == sql.reference
    assert row["extra_info"]["verifier"] == "" and row["extra_info"]["reference_format"] == "json"
    text_row = task_row(math_task, env_id="math/x-v1", env_args={}, index=0, split="train", multi_turn=False,
                        fmt="text")
    assert text_row["reward_model"]["ground_truth"] == "3/4"
    assert decode_reference("3/4", "text") == "3/4" and decode_reference('"3/4"') == "3/4"
    with pytest.raises(AdapterError, match="not text"):
        task_row(sql, env_id="sql/x-v1", env_args={}, index=0, split="train", multi_turn=False, fmt="text")


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
