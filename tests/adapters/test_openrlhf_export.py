"""OpenRLHF export files, the generated reward file, labels, response stripping and argv: the parts that need no
OpenRLHF (core venv)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _generated_files import import_by_path

import rlvr
from rlvr.adapters.export import absolute_paths, read_manifest
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
    write_reward_file,
)
from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.types import Verdict

ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 6, "seed": 3}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 4, "seed": 3}

# The ChatML prompt SmolLM2's template renders (what OpenRLHF's preprocess_data passes as `prompt`).
CHATML_PROMPT = ("<|im_start|>system\nSolve it.<|im_end|>\n<|im_start|>user\nCalculate 2 + 3.<|im_end|>\n"
                 "<|im_start|>assistant\n")
UNICODE_PROMPT = ("<|im_start|>user\n计算 5 - 3 - 6。🙂 答案是什么？ Ünïcödé ✓<|im_end|>\n"
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


# -- verifier spec, and reward files of another export format -------------------------------------------
OLD_EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports" / "before_verifier_spec.json"
"""Files written by `rlvr export` before the verifier spec, recorded from main's code (see test_verl_export)."""


def test_reward_file_builds_the_verifier_not_the_env(single_env, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import rlvr.environments.registry
    from rlvr.adapters.export import close_cached_envs

    manifest = export_openrlhf(single_env, tmp_path / "new", env_id=ST_ID, env_args=ST_ARGS)
    assert manifest.verifier is not None and manifest.verifier["name"] == "math"
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
    module = import_by_path(tmp_path / "new" / "reward_func.py", "new_reward_func")  # builds the verifier at import
    assert manifest.verifier == module.VERIFIER and builds == []
    with pytest.raises(ConfigError, match="re-run `rlvr export`"):  # a file of another export format: refused
        import_by_path(tmp_path / "old" / "reward_func.py", "old_reward_func")
    assert builds == []  # refused before anything is built




def test_left_cut_inside_a_multibyte_character_keeps_the_response() -> None:
    # Bug: a left cut (OpenRLHF's prompt truncation) inside a CJK character/emoji decodes as U+FFFD,
    # no prompt suffix matched, and a correct answer became an `error` verdict (its group dropped).
    response = "答案 \\boxed{-4} 🙂"
    for start in (8, 18, 30):
        query = "\ufffd\ufffd" + UNICODE_PROMPT[start:] + response + "<|im_end|>"
        assert response_text(query, UNICODE_PROMPT, None) == response
        assert response_text(query, UNICODE_PROMPT, ["<|im_end|>", "<|im_start|>"]) == response
    assert response_text("unrelated text", UNICODE_PROMPT, None) is None


def test_fallback_strips_deepseek_end_of_sentence_marker() -> None:
    # Bug: without a tokenizer the fallback kept DeepSeek's full-width-bar EOS in the scored response.
    eos = "<\uff5cend\u2581of\u2581sentence\uff5c>"
    prompt = "<\uff5cUser\uff5c>2+2?<\uff5cAssistant\uff5c>"
    assert response_text(prompt + "\\boxed{4}" + eos, prompt, None) == "\\boxed{4}"


def test_val_rows_are_the_last_tasks_like_export_verl(single_env, tmp_path: Path) -> None:
    # Bug: OpenRLHF held out the FIRST tasks for val.jsonl while export_verl (and `rlvr export`'s doc)
    # hold out the last ones, so `rlvr compare` evaluated the backends on different tasks.
    export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, val_size=1)
    val = [json.loads(line)["task_id"] for line in (tmp_path / "val.jsonl").read_text().splitlines()]
    assert val == [single_env.tasks[-1].id]


def test_relative_env_arg_paths_work_from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Bug: env_args with a relative data path were written as is; OpenRLHF imports the reward file in
    # Ray workers running in another folder, where rlvr.make failed ("dataset file ... does not exist").
    data = tmp_path / "project" / "data"
    data.mkdir(parents=True)
    rows = [{"question": f"What is {a} + {b}?", "answer": f"#### {a + b}"} for a, b in [(2, 3), (4, 4), (1, 9)]]
    (data / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path / "project")
    args = {"path": "data/q.jsonl", "split": "test"}
    env = rlvr.make("math/gsm8k-v1", **args)
    manifest = export_openrlhf(env, tmp_path / "export", env_id="math/gsm8k-v1", env_args=args)
    env.close()
    assert manifest.env_args["path"] == str((data / "q.jsonl").resolve()) and manifest.env_args["split"] == "test"
    assert read_manifest(tmp_path / "export").env_args == manifest.env_args
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = textwrap.dedent(f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("reward_func", {str(tmp_path / "export" / "reward_func.py")!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        from rlvr.adapters.export import cached_env
        print(len(cached_env(module.ENV_ID, module.ENV_ARGS).tasks))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "3"
    assert absolute_paths({"task": "basic_arithmetic", "n": 3, "files": ["data/q.jsonl"]}) == {
        "task": "basic_arithmetic", "n": 3, "files": [str((data / "q.jsonl").resolve())]}


def test_reward_file_fails_at_import_for_an_unbuildable_env(tmp_path: Path) -> None:
    # Bug: an env that cannot be built surfaced only inside OpenRLHF's reward call, whose `except`
    # logs at INFO and trains on a sample without a reward; now importing the file raises.
    path = write_reward_file(tmp_path, env_id="math/no-such-env-v1", env_args={"size": 2})
    with pytest.raises(ConfigError, match=r"cannot build env 'math/no-such-env-v1'.*unknown environment"):
        import_by_path(path, "reward_func")
    (tmp_path / "b").mkdir()
    bad_args = write_reward_file(tmp_path / "b", env_id=ST_ID, env_args={**ST_ARGS, "bogus_option": 1})
    with pytest.raises(ConfigError, match="bogus"):
        import_by_path(bad_args, "reward_func")


def test_non_finite_env_args_survive_the_generated_file(tmp_path: Path) -> None:
    # Bug: env_args were written with repr(), so a float('inf') became the name `inf` (NameError on import).
    args = {**ST_ARGS, "abs_tol": math.inf}
    path = write_reward_file(tmp_path, env_id=ST_ID, env_args=args)
    module = import_by_path(path, "reward_func")
    assert args == module.ENV_ARGS


def test_cli_string_booleans_become_flags(tmp_path: Path, single_env) -> None:
    # Bug: `rlvr train --trainer-arg KEY=false` arrives as the string "false": it slipped past the
    # dynamic-filtering guard and was emitted as `--flag false`, which OpenRLHF's parser rejects.
    export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS)
    with pytest.raises(ConfigError, match="dynamic filtering"):
        openrlhf_args(tmp_path, model="m", steps=1, trainer_args={"algo.dynamic_filtering_enable": "false"})
    argv = openrlhf_args(tmp_path, model="m", steps=1, trainer_args={"vllm.enable_prefix_caching": "True",
                                                                     "train.colocate_all": "false"})
    at = argv.index("--vllm.enable_prefix_caching")
    assert at == len(argv) - 1 or argv[at + 1].startswith("--")
    assert "--train.colocate_all" not in argv and "false" not in argv and "True" not in argv


def test_val_file_is_evaluated(single_env, tmp_path: Path) -> None:
    # Bug: `--eval.dataset` was set but OpenRLHF's default `--eval.steps -1` means "never evaluate"
    # (ppo_trainer: eval.steps = inf), so the exported val.jsonl was silently unused.
    export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, val_size=1)
    argv = openrlhf_args(tmp_path, model="m", steps=3)
    assert argv[argv.index("--eval.steps") + 1] == "3"
    argv = openrlhf_args(tmp_path, model="m", steps=3, trainer_args={"eval.steps": 1})
    assert argv[argv.index("--eval.steps") + 1] == "1"
