"""rlvr's OpenRLHF files run through OpenRLHF 0.11.2's own code (the `openrlhf` venv).

OpenRLHF's argument parser lives in the `__main__` block of `openrlhf/cli/train_ppo_ray.py`, and
`_load_agent_executor` / `SamplesGenerator._process_response_into_experience` sit in modules that
import vLLM at the top (an optional OpenRLHF extra that needs CUDA). Those pieces are taken from
OpenRLHF's installed source with `ast` and executed unchanged, so the tests run OpenRLHF's real code
without vLLM and without stubbing any module.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import functools
import json
import math
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.openrlhf

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # torch on the deprecated pynvml that openrlhf requires
    torch = pytest.importorskip("torch")
openrlhf = pytest.importorskip("openrlhf")
agent = pytest.importorskip("openrlhf.utils.agent")
transformers = pytest.importorskip("transformers")

import rlvr  # noqa: E402
from rlvr.adapters.export import read_manifest  # noqa: E402
from rlvr.adapters.openrlhf import EXTRA_LOG_KEYS, export_openrlhf, openrlhf_args, openrlhf_replay  # noqa: E402
from rlvr.adapters.openrlhf.agent import (  # noqa: E402
    AGENT_LOG_KEYS,
    CompletionOutput,
    Logprob,
    ReplayEngine,
    RequestOutput,
    SamplingParams,
)
from rlvr.core.errors import ConfigError  # noqa: E402
from rlvr.core.metrics import EPISODE_METRICS  # noqa: E402
from rlvr.core.types import Message  # noqa: E402
from rlvr.rollout.tokens import EpisodeTokens  # noqa: E402

ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 6, "seed": 5}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 4, "seed": 5}
SMALL_ARGS = {"task": "basic_arithmetic", "size": 4, "seed": 7}  # four train rows: one group per row
PARITY = Path(__file__).resolve().parents[1] / "data" / "parity" / "rollouts.json"
OPENRLHF_DIR = Path(openrlhf.__file__).parent
SHARED_SQL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sql" / "bird"


# -- OpenRLHF's own code, taken from its source ---------------------------------------------------------
def _source(relative: str) -> tuple[ast.Module, str]:
    path = OPENRLHF_DIR / relative
    return ast.parse(path.read_text()), str(path)


def _upstream_function(relative: str, name: str, namespace: dict[str, Any], cls: str | None = None) -> Any:
    """Execute OpenRLHF's own definition of `name` (optionally a method of `cls`) in `namespace`."""
    tree, filename = _source(relative)
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    node = next(n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name)
    node.decorator_list = []
    exec(compile(ast.Module(body=[node], type_ignores=[]), filename, "exec"), namespace)
    return namespace[name]


def parse_train_ppo_ray(argv: list[str]) -> Any:
    """Run the `__main__` block of train_ppo_ray.py (parser, hierarchize, every check) on `argv`.

    `train(args)` at its end is replaced by a function that returns the validated arguments.
    """
    tree, filename = _source("cli/train_ppo_ray.py")
    main = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'")
    captured: list[Any] = []
    namespace = {"argparse": argparse, "os": os, "datetime": datetime.datetime, "train": captured.append}
    saved = sys.argv
    sys.argv = ["train_ppo_ray.py", *argv]  # parser.parse_args() reads sys.argv, as under `python -m`
    try:
        exec(compile(ast.Module(body=main.body, type_ignores=[]), filename, "exec"), namespace)
    finally:
        sys.argv = saved
    assert len(captured) == 1
    return captured[0]


def load_agent_executor(path: Path) -> Any:
    """OpenRLHF's `_load_agent_executor` (trainer/ray/vllm_engine.py) on `path`."""
    loader = _upstream_function("trainer/ray/vllm_engine.py", "_load_agent_executor",
                                {"AgentExecutorBase": agent.AgentExecutorBase})
    return loader(str(path))


def to_experience(response: dict[str, Any], max_len: int) -> Any:
    """OpenRLHF's `SamplesGenerator._process_response_into_experience` on one executor output."""
    from openrlhf.trainer.ppo_utils.experience import Experience

    process = _upstream_function("trainer/ppo_utils/samples_generator.py", "_process_response_into_experience",
                                 {"torch": torch, "Experience": Experience}, cls="SamplesGenerator")
    return process(None, response, max_len=max_len)


# -- tokenizer, model, local generation backend ---------------------------------------------------------
@pytest.fixture(scope="module")
def tokenizer(smollm2_tokenizer: Any) -> Any:
    return smollm2_tokenizer


@pytest.fixture(scope="module")
def small_env() -> Any:
    env = rlvr.make(ST_ID, **SMALL_ARGS)
    yield env
    env.close()


@pytest.fixture(scope="module")
def model() -> Any:
    from rlvr.runners.models import resolve_model

    try:
        path = resolve_model("smollm2")
    except Exception as exc:
        pytest.skip(f"SmolLM2 model unavailable: {exc}")
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


@dataclass
class TransformersEngine:
    """An `llm_engine` for OpenRLHF's executors backed by transformers `generate` on CPU (greedy).

    `forced` turns (recorded ids) are returned first, like a teacher-forced prefix of the episode;
    every later turn is sampled by the model. `sampled` keeps every returned turn's ids.
    """

    model: Any
    tokenizer: Any
    max_new_tokens: int = 40
    forced: list[list[int]] = field(default_factory=list)
    sampled: list[list[int]] = field(default_factory=list)
    prompts: list[list[int]] = field(default_factory=list)

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None) -> Any:
        self.prompts.append(list(prompt_token_ids))
        limit = min(self.max_new_tokens, sampling_params.max_tokens or self.max_new_tokens)
        if len(self.sampled) < len(self.forced):
            ids = self.forced[len(self.sampled)][:limit]
            logprobs = [{t: Logprob(0.0)} for t in ids]
        else:
            ids, logprobs = self._generate(prompt_token_ids, limit)
        self.sampled.append(ids)
        eos = self.tokenizer.eos_token_id
        reason = "stop" if ids and ids[-1] == eos else "length"
        return RequestOutput(prompt_token_ids=list(prompt_token_ids), outputs=[CompletionOutput(
            token_ids=ids, text=self.tokenizer.decode(ids), finish_reason=reason,
            logprobs=logprobs if sampling_params.logprobs is not None else None)])

    def _generate(self, prompt_ids: list[int], limit: int) -> tuple[list[int], list[dict[int, Logprob]]]:
        inputs = torch.tensor([prompt_ids])
        with torch.no_grad():
            out = self.model.generate(inputs, attention_mask=torch.ones_like(inputs), max_new_tokens=limit,
                                      do_sample=False, output_scores=True, return_dict_in_generate=True,
                                      eos_token_id=self.tokenizer.eos_token_id,
                                      pad_token_id=self.tokenizer.pad_token_id)
        ids = out.sequences[0, len(prompt_ids):].tolist()
        logprobs = [{t: Logprob(float(torch.log_softmax(s[0], -1)[t]))} for t, s in zip(ids, out.scores, strict=True)]
        return ids, logprobs


def _im_end(tokenizer: Any) -> int:
    return int(tokenizer.convert_tokens_to_ids("<|im_end|>"))


def _turn_ids(tokenizer: Any, text: str) -> list[int]:
    """Ids of a model turn that says `text` and stops on `<|im_end|>` (SmolLM2's EOS), as vLLM returns them."""
    return [*tokenizer.encode(text, add_special_tokens=False), _im_end(tokenizer)]


def _openrlhf_prompt(tokenizer: Any, row: dict[str, Any]) -> str:
    """The prompt OpenRLHF's PromptDataset builds from a jsonl row (`preprocess_data` + chat template)."""
    from openrlhf.datasets.prompts_dataset import preprocess_data

    prompt, label = preprocess_data(row, None, "input", "label", tokenizer.apply_chat_template)
    assert label == row["label"]
    return str(prompt)


def _rows(path: Path) -> list[dict[str, Any]]:
    from datasets import load_dataset  # what OpenRLHF's blending_datasets uses for .jsonl

    return list(load_dataset("json", data_files=str(path))["train"])


# -- (a) argv through OpenRLHF's own parser ----------------------------------------------------------------
def test_single_turn_argv_parses_with_openrlhf(tmp_path: Path) -> None:
    env = rlvr.make(ST_ID, **ST_ARGS)
    export_openrlhf(env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, val_size=2)
    env.close()
    args = parse_train_ppo_ray(openrlhf_args(tmp_path, model="/models/policy", steps=5))
    assert args.actor.model_name_or_path == "/models/policy"
    assert args.data.prompt_dataset == str((tmp_path / "train.jsonl").resolve())
    assert args.eval.dataset == str((tmp_path / "val.jsonl").resolve())
    assert (args.data.input_key, args.data.label_key, args.data.apply_chat_template) == ("input", "label", True)
    assert args.reward.remote_url == [str((tmp_path / "reward_func.py").resolve())]  # split on ',' by OpenRLHF
    assert args.train.agent_func_path is None
    assert args.algo.dynamic_filtering_enable and list(args.algo.dynamic_filtering_range) == [-1.0, 2.0]
    assert args.algo.advantage.estimator == "group_norm" and args.critic.model_name_or_path is None
    assert args.data.max_samples == 5 * args.rollout.batch_size
    # OpenRLHF's step count (prepare_datasets): prompts * n_samples // train batch = the requested steps
    assert args.data.max_samples * args.rollout.n_samples_per_prompt // args.train.batch_size == 5


def test_multi_turn_argv_parses_and_unknown_flags_fail(tmp_path: Path) -> None:
    env = rlvr.make(MT_ID, **MT_ARGS)
    export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS)
    env.close()
    args = parse_train_ppo_ray(openrlhf_args(tmp_path, model="m", steps=1, n_gpus=4,
                                             trainer_args={"rollout.n_samples_per_prompt": 8}))
    assert args.train.agent_func_path == str((tmp_path / "agent_func.py").resolve())
    assert args.reward.remote_url == ["agent"]  # what train_ppo_ray sets when an agent path is given
    assert (args.actor.num_gpus_per_node, args.vllm.num_engines, args.rollout.n_samples_per_prompt) == (4, 4, 8)
    with pytest.raises(SystemExit):  # OpenRLHF's parser rejects a flag it does not know
        parse_train_ppo_ray(openrlhf_args(tmp_path, model="m", steps=1, trainer_args={"data.no_such_flag": 1}))


# -- (b) single-turn: OpenRLHF's SingleTurnAgentExecutor loads the exported reward_func.py -------------------
def _single_turn_responses(task: Any) -> list[str]:
    return [rf"The final answer is \boxed{{{task.reference}}}.", r"I think it is \boxed{123456789}.",
            "I am not sure."]


@pytest.mark.parametrize("with_tokenizer", [True, False], ids=["tokenizer-specials", "fallback"])
def test_single_turn_rewards_equal_rlvr_verdicts(tokenizer: Any, tmp_path: Path, with_tokenizer: bool) -> None:
    env = rlvr.make(ST_ID, **ST_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=3,
                               tokenizer=tokenizer.name_or_path if with_tokenizer else None)
    executor = agent.SingleTurnAgentExecutor(str(manifest.path(tmp_path, "reward")))  # what RolloutRayActor builds
    assert executor.reward_func is not None
    tasks = {t.id: t for t in env.tasks}
    seen = set()
    for row in _rows(tmp_path / "train.jsonl"):
        task = tasks[row["task_id"]]
        prompt = _openrlhf_prompt(tokenizer, row)
        for text in _single_turn_responses(task):
            ids = _turn_ids(tokenizer, text)
            engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={_im_end(tokenizer)})
            out = asyncio.run(executor.execute(prompt, row["label"], SamplingParams(), 2048, tokenizer, engine))
            verdict = env.verifier.verify(text, task.reference)
            assert out["reward"].tolist() == [verdict.reward], (text, out["extra_logs"])
            assert out["scores"].tolist() == [verdict.reward]
            assert set(out["extra_logs"]) == set(EXTRA_LOG_KEYS)
            assert out["extra_logs"][f"rlvr/status/{verdict.status}"].item() == 1.0
            start, end = out["action_ranges"][0]
            assert out["observation_tokens"][start:end] == ids and end == len(out["observation_tokens"])
            seen.add(verdict.status)
    assert seen == {"correct", "incorrect", "no_answer"}
    env.close()


def test_single_turn_left_truncated_prompt_and_error_verdict(tokenizer: Any, tmp_path: Path) -> None:
    env = rlvr.make(ST_ID, **ST_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=ST_ID, env_args=ST_ARGS, limit=1,
                               tokenizer=tokenizer.name_or_path)
    row = _rows(tmp_path / "train.jsonl")[0]
    task = next(t for t in env.tasks if t.id == row["task_id"])
    prompt = _openrlhf_prompt(tokenizer, row)
    executor = agent.SingleTurnAgentExecutor(str(manifest.path(tmp_path, "reward")))
    text = rf"\boxed{{{task.reference}}}"
    ids = _turn_ids(tokenizer, text)
    # max_tokens fixed: OpenRLHF keeps only the last (max_length - max_tokens) prompt ids
    params = SamplingParams(max_tokens=len(ids))
    engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={_im_end(tokenizer)})
    out = asyncio.run(executor.execute(prompt, row["label"], params, len(ids) + 20, tokenizer, engine))
    assert len(engine.prompts[0]) == 20  # the prompt really was cut from the left
    assert out["reward"].tolist() == [1.0]
    # a broken grader (empty reference) is NaN reward and score, never a 0 OpenRLHF would learn from
    broken = json.loads(row["label"]) | {"reference": ""}
    engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={_im_end(tokenizer)})
    out = asyncio.run(executor.execute(prompt, json.dumps(broken), SamplingParams(), 2048, tokenizer, engine))
    assert math.isnan(out["reward"].item()) and math.isnan(out["scores"].item())
    assert out["extra_logs"]["rlvr/status/error"].item() == 1.0
    env.close()


# -- (c) multi-turn: OpenRLHF loads the exported agent file and drives it with transformers generate ----------
def _direct_episode(tokenizer: Any, task: Any, turns: list[list[int]]) -> tuple[Any, EpisodeTokens]:
    """rlvr directly: the same sampled ids through the env and EpisodeTokens."""

    async def run() -> tuple[Any, EpisodeTokens]:
        env = rlvr.make(MT_ID, **MT_ARGS)
        messages, _ = await env.reset(task)
        tokens = EpisodeTokens(tokenizer, list(messages), tools=list(env.spec.tools) or None)
        for ids in turns:
            message = Message(role="assistant", content=tokenizer.decode(ids, skip_special_tokens=True))
            tokens.add_model_turn(message, ids)
            result = await env.step(message)
            if result.terminated or result.truncated:
                env.close()
                return result.verdict, tokens
            tokens.add_env_turn(list(result.messages))
        raise AssertionError("episode did not end")

    return asyncio.run(run())


def test_multi_turn_agent_with_transformers_generation(tokenizer: Any, model: Any, tmp_path: Path) -> None:
    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    assert read_manifest(tmp_path).multi_turn
    executor = load_agent_executor(manifest.path(tmp_path, "agent"))
    assert isinstance(executor, agent.MultiTurnAgentExecutor)
    assert issubclass(executor.agent_instance_cls, agent.AgentInstanceBase)
    row = _rows(tmp_path / "train.jsonl")[0]
    task = next(t for t in env.tasks if t.id == row["task_id"])
    env.close()
    # first turn: a recorded calculator call (so the episode has an environment turn); then SmolLM2 generates
    call = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "1 + 1"}}\n</tool_call>'
    engine = TransformersEngine(model, tokenizer, forced=[_turn_ids(tokenizer, call)])
    max_len = 400
    out = asyncio.run(executor.execute(_openrlhf_prompt(tokenizer, row), row["label"],
                                       SamplingParams(max_tokens=None, logprobs=1), max_len, tokenizer, engine))
    obs, ranges = out["observation_tokens"], out["action_ranges"]
    assert len(ranges) == len(engine.sampled) >= 2
    # action ranges cover exactly the ids the engine sampled, in order, with nothing re-tokenised
    assert [obs[a:b] for a, b in ranges] == engine.sampled
    # every engine call conditioned on the observation so far (token-in, the ids OpenRLHF trains on)
    assert all(obs[: len(p)] == p for p in engine.prompts)
    verdict, tokens = _direct_episode(tokenizer, task, engine.sampled)
    assert obs == tokens.prompt_ids + tokens.completion_ids
    expected_reward = math.nan if verdict.reward is None else verdict.reward
    assert out["reward"] == pytest.approx(expected_reward, nan_ok=True)
    assert out["extra_logs"][f"rlvr/status/{verdict.status}"] == 1.0
    assert len(out["rollout_log_probs"]) == len(obs)
    # OpenRLHF's own conversion: action_mask (shifted by one, as the policy's logprobs are) = rlvr's loss mask
    experience = to_experience(out, max_len=max_len)
    assert experience.action_mask[0].tolist() == ([0] * len(tokens.prompt_ids) + tokens.loss_mask)[1:]
    env_ids = [t for t, m in zip(tokens.completion_ids, tokens.loss_mask, strict=True) if m == 0]
    assert env_ids and "<tool_response>" in tokenizer.decode(env_ids)


def test_multi_turn_undecodable_label_is_an_error_verdict(tokenizer: Any, tmp_path: Path) -> None:
    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    env.close()
    executor = load_agent_executor(manifest.path(tmp_path, "agent"))
    row = _rows(tmp_path / "train.jsonl")[0]
    prompt = _openrlhf_prompt(tokenizer, row)
    engine = ReplayEngine(turns=[], tokenizer=tokenizer)
    out = asyncio.run(executor.execute(prompt, '{"not": "a task label"}', SamplingParams(), 512, tokenizer, engine))
    assert math.isnan(out["reward"]) and math.isnan(out["scores"])
    assert out["extra_logs"]["rlvr/status/error"] == 1.0
    assert all(out["extra_logs"][f"rlvr/{k}"] == 0.0 for k in EPISODE_METRICS)  # an episode that never started
    assert out["action_ranges"] == [] and not engine.prompts  # nothing generated, nothing trained on
    assert out["observation_tokens"] == tokenizer(text=prompt, add_special_tokens=False)["input_ids"]


def test_multi_turn_budget_cut_scores_the_episode_as_it_stands(tokenizer: Any, tmp_path: Path) -> None:
    env = rlvr.make(MT_ID, **MT_ARGS)
    manifest = export_openrlhf(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=1)
    env.close()
    executor = load_agent_executor(manifest.path(tmp_path, "agent"))
    row = _rows(tmp_path / "train.jsonl")[0]
    prompt = _openrlhf_prompt(tokenizer, row)
    call = _turn_ids(tokenizer, '<tool_call>\n{"name": "calculator", "arguments": {"expression": "1 + 1"}}\n'
                                '</tool_call>')
    engine = ReplayEngine(turns=[call, call, call], tokenizer=tokenizer, eos_ids={_im_end(tokenizer)})
    answer = ReplayEngine(turns=[call, _turn_ids(tokenizer, "\\boxed{2}")], tokenizer=tokenizer)
    probe = asyncio.run(executor.execute(prompt, row["label"], SamplingParams(), 1 << 20, tokenizer, answer))
    after_one = probe["action_ranges"][1][0]  # prompt + first call + its tool answer
    out = asyncio.run(executor.execute(prompt, row["label"], SamplingParams(), after_one, tokenizer, engine))
    # the budget (max_length, prompt included) is spent after one call and its answer: the episode is scored
    # as it stands by the env's own rule (its final response: the tool call, not an answer), never an error
    assert len(engine.prompts) == 1 and out["action_ranges"] == probe["action_ranges"][:1]
    assert out["observation_tokens"] == probe["observation_tokens"][:after_one]
    assert out["extra_logs"]["rlvr/status/error"] == 0.0 and out["reward"] == 0.0
    # the tool-use extra logs (OpenRLHF averages them per step): those of each episode as played
    assert set(out["extra_logs"]) == set(probe["extra_logs"]) == set(AGENT_LOG_KEYS)
    assert {k: probe["extra_logs"][f"rlvr/{k}"] for k in EPISODE_METRICS} == {
        "tool_call_rate": 1.0, "tool_calls": 1.0, "tool_errors": 0.0, "turns": 2.0}  # a call, then the answer
    assert {k: out["extra_logs"][f"rlvr/{k}"] for k in EPISODE_METRICS} == {
        "tool_call_rate": 1.0, "tool_calls": 1.0, "tool_errors": 0.0, "turns": 1.0}  # cut after the call


# -- (d) parity over the recorded rollouts -----------------------------------------------------------------
def _parity_records() -> list[dict[str, Any]]:
    if not PARITY.is_file():
        return []
    return list(json.loads(PARITY.read_text())["records"])


@pytest.mark.parametrize("record", _parity_records(), ids=lambda r: r["id"])
def test_parity_replay_matches_recorded_rollouts(tokenizer: Any, record: dict[str, Any]) -> None:
    out = openrlhf_replay(record, tokenizer)
    expected = record["expected"]
    assert out["status"] == expected["status"]
    assert out["reward"] == expected["reward"]
    assert out["prompt_ids"] == expected["prompt_ids"]
    assert out["response_ids"] == expected["response_ids"]
    assert out["response_mask"] == expected["loss_mask"]


def test_reward_file_of_another_export_format_is_refused(tokenizer: Any, tmp_path: Path) -> None:
    """A `reward_func.py` written by `rlvr export` before the spec (recorded from main) is refused when OpenRLHF
    loads it, with the fix in the message; never scored by guessing its layout."""
    old = json.loads((Path(__file__).resolve().parents[1] / "data" / "exports" / "before_verifier_spec.json")
                     .read_text())["single_turn"]
    (tmp_path / "reward_func.py").write_text(old["openrlhf"]["files"]["reward_func.py"])
    with pytest.raises(ConfigError, match="re-run `rlvr export`"):
        agent.SingleTurnAgentExecutor(str(tmp_path / "reward_func.py"))


# -- (e) left cuts, dynamic filtering of error groups, string booleans, data paths from another folder ----------
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


def test_openrlhf_left_cut_inside_a_multibyte_character(tokenizer: Any, small_env, tmp_path: Path) -> None:
    manifest = export_openrlhf(small_env, tmp_path, env_id=ST_ID, env_args=SMALL_ARGS, limit=1)
    row = _rows(tmp_path / "train.jsonl")[0]
    task = next(t for t in small_env.tasks if t.id == row["task_id"])
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "计算 5 - 3 - 6。🙂 答案是什么？ Ünïcödé ✓"}],
                                           tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer(text=prompt, add_special_tokens=False)["input_ids"]
    ids = _turn_ids(tokenizer, f"答案 \\boxed{{{task.reference}}} 🙂")
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


def test_error_verdict_group_is_dropped_by_openrlhf_dynamic_filtering(tokenizer: Any, small_env,
                                                                      tmp_path: Path) -> None:
    """OpenRLHF's own `SamplesGenerator._generate_vllm` with rlvr's arguments drops exactly the NaN group."""
    import logging
    from types import SimpleNamespace

    from openrlhf.trainer.ppo_utils.experience import Experience
    from tqdm import tqdm

    manifest = export_openrlhf(small_env, tmp_path, env_id=ST_ID, env_args=SMALL_ARGS)
    args = parse_train_ppo_ray(openrlhf_args(tmp_path, model="m", steps=1,
                                              trainer_args={"rollout.n_samples_per_prompt": 2}))
    executor = agent.SingleTurnAgentExecutor(str(manifest.path(tmp_path, "reward")))
    rows = _rows(tmp_path / "train.jsonl")
    tasks = {t.id: t for t in small_env.tasks}

    def responses(row: dict[str, Any], texts: list[str], broken: bool = False) -> list[dict[str, Any]]:
        label = json.dumps(json.loads(row["label"]) | {"reference": ""}) if broken else row["label"]
        outs = []
        for i, text in enumerate(texts):
            ids = _turn_ids(tokenizer, text)
            engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={ids[-1]})
            prompt = _openrlhf_prompt(tokenizer, row)
            outs.append(asyncio.run(executor.execute(prompt, label if i == 0 else row["label"],
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
    generator_py = "trainer/ppo_utils/samples_generator.py"
    ns = {"ray": _shim_ray(), "tqdm": lambda *a, **k: tqdm(*a, disable=True, **k), "torch": torch,
          "Experience": Experience, "logger": logging.getLogger("openrlhf-test"), "List": list, "Tuple": tuple,
          "_collect_prompt_batch": _upstream_function(generator_py, "_collect_prompt_batch", {})}
    for name in ("_generate_vllm", "_process_response_into_experience"):
        _upstream_function(generator_py, name, ns, cls="SamplesGenerator")
    dispatched: list[str] = []

    def dispatch(prompts: list[str], labels: list[str], *, images: Any = None, **_: Any) -> list[Any]:
        dispatched.extend(json.loads(label)["id"] for label in labels)
        return [groups[json.loads(label)["id"]] for label in labels]

    generator = SimpleNamespace(args=args, _dispatch_prompts_to_vllm=dispatch)
    generator._process_response_into_experience = functools.partial(ns["_process_response_into_experience"],
                                                                     generator)
    loader = iter([(["ds"], [_openrlhf_prompt(tokenizer, r)], [r["label"]], [None]) for r in rows])
    experiences, consumed, _ = ns["_generate_vllm"](generator, loader, 3, args.algo.dynamic_filtering_enable,
                                                    max_len=2048)
    kept = [json.loads(e.labels[0])["id"] for e in experiences]
    assert dispatched == [r["task_id"] for r in rows] and consumed == 4  # the NaN group was replaced
    assert kept == [rows[1]["task_id"]] * 2 + [rows[2]["task_id"]] * 2 + [rows[3]["task_id"]] * 2
    scores = [e.scores[0].item() for e in experiences]
    assert scores == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0] and all(math.isfinite(e.rewards[0].item()) for e in experiences)


def test_cli_string_booleans_parse_with_openrlhf(small_env, tmp_path: Path) -> None:
    export_openrlhf(small_env, tmp_path, env_id=ST_ID, env_args=SMALL_ARGS)
    args = parse_train_ppo_ray(openrlhf_args(tmp_path, model="m", steps=1, trainer_args={
        "vllm.enable_prefix_caching": "true", "vllm.enable_sleep": "false", "rollout.batch_size": "4"}))
    assert args.vllm.enable_prefix_caching is True and args.vllm.enable_sleep is False
    assert args.rollout.batch_size == 4 and args.data.max_samples == 4
    export_openrlhf(small_env, tmp_path / "val", env_id=ST_ID, env_args=SMALL_ARGS, val_size=1)
    args = parse_train_ppo_ray(openrlhf_args(tmp_path / "val", model="m", steps=2))
    assert args.eval.steps == 2 and args.eval.dataset == str((tmp_path / "val" / "val.jsonl").resolve())


def test_sql_rewards_equal_verdicts_when_loaded_from_another_folder(tokenizer: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Real BIRD rows exported with relative paths; OpenRLHF's executor loads the reward file elsewhere.

    (The fresh-process import from another folder is `test_relative_env_arg_paths_work_from_another_folder`.)
    """
    from openrlhf.datasets.prompts_dataset import preprocess_data

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
            ids = _turn_ids(tokenizer, text)
            engine = ReplayEngine(turns=[ids], tokenizer=tokenizer, eos_ids={ids[-1]})
            out = asyncio.run(executor.execute(prompt, label, SamplingParams(), 8192, tokenizer, engine))
            assert out["reward"].tolist() == [verdict.reward], (text, out["extra_logs"])
            assert out["extra_logs"][f"rlvr/status/{verdict.status}"].item() == 1.0
            statuses.add(verdict.status)
    env.close()
    assert statuses >= {"correct", "incorrect"}
