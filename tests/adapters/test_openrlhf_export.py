"""OpenRLHF export files, labels, response stripping and argv: the parts that need no OpenRLHF (core venv)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rlvr
from rlvr.adapters.export import read_manifest
from rlvr.adapters.openrlhf import (
    EXTRA_LOG_KEYS,
    decode_label,
    export_openrlhf,
    extra_logs,
    openrlhf_args,
    openrlhf_command,
    response_text,
    score_query,
    task_label,
)
from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.types import Verdict

ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 6, "seed": 3}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 4, "seed": 3}

# The ChatML prompt SmolLM2's template renders (what OpenRLHF's preprocess_data passes as `prompt`).
CHATML_PROMPT = ("<|im_start|>system\nSolve it.<|im_end|>\n<|im_start|>user\nCalculate 2 + 3.<|im_end|>\n"
                 "<|im_start|>assistant\n")


@pytest.fixture(scope="module")
def single_env():  # type: ignore[no-untyped-def]
    env = rlvr.make(ST_ID, **ST_ARGS)
    yield env
    env.close()


@pytest.fixture(scope="module")
def multi_env():  # type: ignore[no-untyped-def]
    env = rlvr.make(MT_ID, **MT_ARGS)
    yield env
    env.close()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_single_turn_export_files_and_rows(single_env, tmp_path: Path) -> None:
    manifest = export_openrlhf(single_env, tmp_path / "ex", env_id=ST_ID, env_args=ST_ARGS, val_size=2)
    folder = tmp_path / "ex"
    assert manifest.files == {"train": "train.jsonl", "val": "val.jsonl", "reward": "reward_func.py"}
    assert (manifest.n_train, manifest.n_val, manifest.multi_turn) == (4, 2, False)
    assert read_manifest(folder) == manifest
    train, val = _rows(folder / "train.jsonl"), _rows(folder / "val.jsonl")
    tasks = list(single_env.tasks)
    assert [r["task_id"] for r in train + val] == [t.id for t in tasks]  # val: the last tasks, as export_verl
    for row, task in zip(train + val, tasks, strict=True):
        assert set(row) == {"input", "label", "task_id", "datasource"}
        assert row["input"] == [{"role": m.role, "content": m.content} for m in task.prompt]
        assert row["datasource"] == ST_ID
        back = decode_label(row["label"])
        assert (back.id, back.prompt, back.reference) == (task.id, task.prompt, task.reference)
    source = (folder / "reward_func.py").read_text()
    compile(source, "reward_func.py", "exec")
    assert "def reward_func(queries, prompts, labels, **kwargs):" in source
    assert f"ENV_ID = {ST_ID!r}" in source
    assert f"ENV_ARGS = json.loads({json.dumps(ST_ARGS, sort_keys=True)!r})" in source
    assert not (folder / "agent_func.py").exists()


def test_multi_turn_export_writes_agent_file(multi_env, tmp_path: Path) -> None:
    manifest = export_openrlhf(multi_env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=3)
    assert manifest.multi_turn and manifest.n_train == 3
    assert manifest.files["agent"] == "agent_func.py"
    source = (tmp_path / "agent_func.py").read_text()
    compile(source, "agent_func.py", "exec")
    assert f"agent_classes({MT_ID!r}, json.loads({json.dumps(MT_ARGS, sort_keys=True)!r}))" in source


def test_export_refuses_non_empty_folder(single_env, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS)
    export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, overwrite=True)
    assert (tmp_path / "keep.txt").exists() and (tmp_path / "train.jsonl").exists()
    with pytest.raises(ConfigError, match="no train rows"):
        export_openrlhf(single_env, tmp_path / "v", env_id=ST_ID, env_args=ST_ARGS, val_size=6)


def test_decode_label_rejects_foreign_labels() -> None:
    for bad in ("42", '"just a reference"', "not json {"):
        with pytest.raises(AdapterError):
            decode_label(bad)


def test_task_label_keeps_dict_references(single_env) -> None:
    task = next(iter(single_env.tasks)).model_copy(update={"reference": {"sql": "SELECT 1", "db": [1, 2]}})
    assert decode_label(task_label(task)).reference == {"sql": "SELECT 1", "db": [1, 2]}


@pytest.mark.parametrize(
    ("query", "specials", "expected"),
    [
        (CHATML_PROMPT + r"So \boxed{5}<|im_end|>", ["<|im_start|>", "<|im_end|>", "<|endoftext|>"], r"So \boxed{5}"),
        (CHATML_PROMPT + r"So \boxed{5}<|im_end|>", None, r"So \boxed{5}"),
        (CHATML_PROMPT + r"cut at the length lim", None, r"cut at the length lim"),
        (CHATML_PROMPT + "<|im_end|>", None, ""),
        # OpenRLHF cut the prompt from the left (max_len): the kept suffix still separates the response
        (CHATML_PROMPT[30:] + r"\boxed{5}<|endoftext|>", ["<|endoftext|>"], r"\boxed{5}"),
        # a special token sampled mid-text is dropped like decode(skip_special_tokens=True) drops it
        (CHATML_PROMPT + "a<|im_start|>b<|im_end|>", ["<|im_start|>", "<|im_end|>"], "ab"),
    ],
    ids=["specials", "fallback-eos", "truncated", "empty", "left-cut-prompt", "mid-special"],
)
def test_response_text(query: str, specials: list[str] | None, expected: str) -> None:
    assert response_text(query, CHATML_PROMPT, specials) == expected


def test_score_query_error_verdicts(single_env) -> None:
    task = next(iter(single_env.tasks))
    label = task_label(task)
    good = score_query(single_env, CHATML_PROMPT + rf"\boxed{{{task.reference}}}<|im_end|>", CHATML_PROMPT, label)
    assert good.status == "correct" and good.reward == 1.0
    unrelated = score_query(single_env, "something else entirely", CHATML_PROMPT, label)
    assert unrelated.status == "error" and unrelated.reward is None
    assert "does not start with the prompt" in (unrelated.detail or "")
    bad_label = score_query(single_env, CHATML_PROMPT + "5", CHATML_PROMPT, "{")
    assert bad_label.status == "error" and bad_label.reward is None


def test_extra_logs_have_fixed_float_keys() -> None:
    for verdict in (Verdict.error("broke"), Verdict(status="correct", reward=1.0, elapsed_s=0.25)):
        logs = extra_logs(verdict)
        assert tuple(logs) == EXTRA_LOG_KEYS
        assert all(isinstance(v, float) for v in logs.values())
        assert logs[f"rlvr/status/{verdict.status}"] == 1.0 and sum(logs[k] for k in EXTRA_LOG_KEYS[:5]) == 1.0


def _flags(argv: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    key = ""
    for item in argv:
        if item.startswith("--") and not item[2:3].isdigit():
            key = item[2:]
            out[key] = []
        else:
            out[key].append(item)
    return out


def test_openrlhf_args_single_turn(single_env, tmp_path: Path) -> None:
    export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, val_size=1)
    flags = _flags(openrlhf_args(tmp_path, model="/models/m", steps=3, n_gpus=2,
                                 trainer_args={"--rollout.batch_size": 4, "ds.zero_stage": 3}))
    assert flags["actor.model_name_or_path"] == ["/models/m"]
    assert flags["data.prompt_dataset"] == [str((tmp_path / "train.jsonl").resolve())]
    assert flags["eval.dataset"] == [str((tmp_path / "val.jsonl").resolve())]
    assert flags["reward.remote_url"] == [str((tmp_path / "reward_func.py").resolve())]
    assert "train.agent_func_path" not in flags
    assert flags["data.input_key"] == ["input"] and flags["data.label_key"] == ["label"]
    assert flags["data.apply_chat_template"] == [] and flags["algo.dynamic_filtering_enable"] == []
    assert flags["algo.dynamic_filtering_range"] == ["-1.0", "2.0"]  # reward_range (0, 1) widened by 1
    assert flags["data.max_samples"] == ["12"] and flags["rollout.batch_size"] == ["4"]  # 3 steps x 4 prompts
    assert flags["ds.zero_stage"] == ["3"] and flags["actor.num_gpus_per_node"] == ["2"]
    command = openrlhf_command(tmp_path, python="/venv/bin/python", model="/models/m", steps=3)
    assert command[:3] == ["/venv/bin/python", "-m", "openrlhf.cli.train_ppo_ray"]


def test_openrlhf_args_multi_turn_and_refusals(multi_env, tmp_path: Path) -> None:
    export_openrlhf(multi_env, tmp_path, env_id=MT_ID, env_args=MT_ARGS)
    flags = _flags(openrlhf_args(tmp_path, model="m", steps=1))
    assert flags["train.agent_func_path"] == [str((tmp_path / "agent_func.py").resolve())]
    assert "reward.remote_url" not in flags
    for bad in ({"rollout.n_samples_per_prompt": 1}, {"algo.dynamic_filtering_enable": False}):
        with pytest.raises(ConfigError, match="dynamic filtering"):
            openrlhf_args(tmp_path, model="m", steps=1, trainer_args=bad)
    with pytest.raises(ConfigError, match="steps"):
        openrlhf_args(tmp_path, model="m", steps=0)
    with pytest.raises(ConfigError, match="rlvr export"):
        openrlhf_args(tmp_path / "missing", model="m", steps=1)


# -- verifier spec and reward files written before it ---------------------------------------------------
OLD_EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports" / "before_verifier_spec.json"
"""Files written by `rlvr export` before the verifier spec, recorded from main's code (see test_verl_export)."""


def _import_file(path: Path):  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"rlvr_test_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reward_file_builds_the_verifier_not_the_env(single_env, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import rlvr.environments.registry
    from rlvr.adapters.export import close_cached_envs

    manifest = export_openrlhf(single_env, tmp_path / "new", env_id=ST_ID, env_args=ST_ARGS)
    assert manifest.verifier is not None and manifest.verifier["class"].endswith(":MathVerifier")
    assert read_manifest(tmp_path / "new").verifier == manifest.verifier
    old = json.loads(OLD_EXPORTS.read_text())["single_turn"]["openrlhf"]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "reward_func.py").write_text(old["files"]["reward_func.py"])
    close_cached_envs()
    builds: list[str] = []

    def unreadable_dataset(env_id: str, **kwargs):  # type: ignore[no-untyped-def]
        builds.append(env_id)
        raise ConfigError(f"{env_id}: the dataset cannot be read here")

    monkeypatch.setattr(rlvr.environments.registry, "make", unreadable_dataset)
    module = _import_file(tmp_path / "new" / "reward_func.py")  # checks its setup at import: builds the verifier
    assert manifest.verifier == module.VERIFIER and builds == []
    with pytest.raises(ConfigError, match="cannot build env"):  # a file written before specs rebuilds the env
        _import_file(tmp_path / "old" / "reward_func.py")
    assert builds == [old["manifest"]["env_id"]]
