"""veRL adapter against veRL 0.9.1's own config, reward loop and agent-loop worker (CPU, offline, SmolLM2).

- the generated overrides compose with veRL's hydra config and pass veRL's `validate_config`;
- veRL's `RewardLoopWorker` (which loads `reward.py` with veRL's loader) scores real tokenised samples
  exactly as rlvr's verifier does; error verdicts raise (veRL drops the rollout) or score NaN;
- `RlvrAgentLoop` runs inside veRL's `AgentLoopWorker` (registered from the exported YAML), fed by
  veRL's `RLHFDataset`, with SmolLM2 generating through transformers on CPU, and with a replay of
  recorded ids; `response_mask` is 0 exactly on environment tokens;
- parity: every record of `tests/data/parity/rollouts.json` replayed through veRL gives rlvr's
  recorded reward, status, prompt ids, response ids and loss mask.
- error verdicts under both trainers: the legacy trainer's NaN switch reaches `RlvrAgentLoop`; the v1
  trainer's `AgentLoopWorkerTQ` + `ReplayBuffer` (over a local Ray + TransferQueue, `transfer_queue`,
  part of verl's `verl-core` extra) drop the failed rollout and train on the rest.
"""

from __future__ import annotations

import asyncio
import json
import math
import uuid
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.verl

with warnings.catch_warnings():  # ray (imported by verl) warns about its own deprecated state API on import
    warnings.simplefilter("ignore", DeprecationWarning)
    verl = pytest.importorskip("verl")
    torch = pytest.importorskip("torch")
    pq = pytest.importorskip("pyarrow.parquet")
    from hydra.errors import ConfigCompositionException
    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn
    from verl.workers.rollout.replica import TokenOutput

    from rlvr.adapters.verl.agent import (
        ReplayServerManager,
        _instantiate_loop,
        _record_row,
        load_records,
    )

import rlvr  # noqa: E402
from rlvr.adapters.export import close_cached_envs, decode_reference  # noqa: E402
from rlvr.adapters.verl import UnscorableSampleError, export_verl, verl_config, verl_overrides, verl_replay  # noqa: E402
from rlvr.core.errors import BackendError  # noqa: E402
from rlvr.core.metrics import EPISODE_METRICS  # noqa: E402
from rlvr.core.types import Message  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "rollouts.json"
ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 6, "seed": 5}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 8, "seed": 0}


# -- fixtures -------------------------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def _close_cached_envs() -> Any:
    """compute_score / the agent loop build envs once per process; stop their verifier pools afterwards."""
    yield
    close_cached_envs()


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from rlvr.runners.models import prepare_smollm2

    try:
        return prepare_smollm2()
    except BackendError as exc:
        pytest.skip(f"SmolLM2 unavailable: {exc}")


@pytest.fixture(scope="module")
def tokenizer(model_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir))


@pytest.fixture(scope="module")
def st_env() -> Any:
    env = rlvr.make(ST_ID, **ST_ARGS)
    yield env
    env.close()


@pytest.fixture(scope="module")
def st_export(st_env: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("verl-st")
    export_verl(st_env, folder, env_id=ST_ID, env_args=ST_ARGS, limit=4, val_size=2)
    return folder


@pytest.fixture(scope="module")
def mt_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("verl-mt")
    env = rlvr.make(MT_ID, **MT_ARGS)
    export_verl(env, folder, env_id=MT_ID, env_args=MT_ARGS)
    env.close()
    return folder


def _config(folder: Path, model: str | Path, *extra: str) -> Any:
    return verl_config(verl_overrides(folder, model=str(model), steps=1, trainer_args=list(extra)))


# -- (a) overrides compose with veRL's own hydra config ------------------------------------------
def test_overrides_compose_with_verl_config_and_validate(st_export: Path, mt_export: Path) -> None:
    config = verl_config(verl_overrides(mt_export, model="/models/smol", steps=7))
    assert config.data.train_files == str(mt_export.resolve() / "train.parquet")
    assert config.data.val_files == config.data.train_files and config.trainer.test_freq == -1
    assert config.reward.custom_reward_function.path == str(mt_export.resolve() / "reward.py")
    assert config.reward.custom_reward_function.name == "compute_score"
    assert config.actor_rollout_ref.rollout.agent.agent_loop_config_path == str(mt_export.resolve() / "agent_loop.yaml")
    assert config.trainer.total_training_steps == 7 and config.actor_rollout_ref.model.path == "/models/smol"
    assert config.algorithm.adv_estimator == "grpo" and config.actor_rollout_ref.rollout.n == 4
    validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))

    single = verl_config(verl_overrides(st_export, model="/models/smol", steps=1, n_gpus=2))
    assert single.data.val_files == str(st_export.resolve() / "val.parquet")
    assert single.actor_rollout_ref.rollout.agent.agent_loop_config_path is None
    assert single.data.train_batch_size == 4 and single.trainer.n_gpus_per_node == 2
    validate_config(config=single, use_reference_policy=need_reference_policy(single), use_critic=need_critic(single))


def test_verl_config_refuses_unknown_keys(st_export: Path) -> None:
    with pytest.raises(ConfigCompositionException, match="no_such_key"):
        verl_config(verl_overrides(st_export, model="m", steps=1, trainer_args=["trainer.no_such_key=1"]))
    config = _config(st_export, "m", "+reward.custom_reward_function.reward_kwargs.on_error=nan")
    assert math.isnan(config.reward.custom_reward_function.reward_kwargs.on_error)  # hydra reads `nan` as a float
    # the documented switch that makes veRL evict and refill groups with a failed (error-verdict) rollout
    assert _config(st_export, "m", "trainer.v1.sampler.sync_refill_failed_groups=True").trainer.v1.sampler[
        "sync_refill_failed_groups"] is True


# -- (b) veRL's reward loop calls rlvr's compute_score --------------------------------------------
def _data_proto(tokenizer: Any, rows: Sequence[Mapping[str, Any]], texts: Sequence[str]) -> Any:
    """A padded veRL batch as the rollout hands it to the reward loop (left-padded prompts, right-padded responses)."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    prompts = [tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=False) for r in rows]
    prompt_ids = [tokenizer.encode(p, add_special_tokens=False) for p in prompts]
    response_ids = [[*tokenizer.encode(t, add_special_tokens=False), end] for t in texts]
    p_len, r_len, pad = max(map(len, prompt_ids)), max(map(len, response_ids)), tokenizer.pad_token_id
    prompt_t = torch.tensor([[pad] * (p_len - len(p)) + p for p in prompt_ids])
    resp_t = torch.tensor([r + [pad] * (r_len - len(r)) for r in response_ids])
    mask = torch.tensor([[0] * (p_len - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (r_len - len(r))
                         for p, r in zip(prompt_ids, response_ids, strict=True)])
    import numpy as np

    non_tensor = {key: np.array([r[key] for r in rows], dtype=object)
                  for key in ("data_source", "reward_model", "extra_info")}
    batch = {"prompts": prompt_t, "responses": resp_t, "attention_mask": mask,
             "input_ids": torch.cat([prompt_t, resp_t], dim=1)}
    return DataProto.from_single_dict({**batch, **non_tensor})


def _reward_loop(config: Any, data: Any) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        worker = RewardLoopWorker(config)  # built inside the loop, as in its Ray actor
        return await worker.compute_score_batch(data)

    return asyncio.run(run())


def test_verl_reward_loop_gives_rlvr_rewards(st_export: Path, st_env: Any, tokenizer: Any, model_dir: Path) -> None:
    rows = pq.read_table(st_export / "train.parquet").to_pylist()
    tasks = [st_env.tasks[i] for i in range(len(rows))]
    answers = [st_env.verifier.reference_response(t.reference) for t in tasks]
    texts = [f"The answer is \\boxed{{{answers[0]}}}", f"\\boxed{{{int(answers[1]) + 1}}}", "", "I cannot say."]
    data = _data_proto(tokenizer, rows, texts)
    outputs = _reward_loop(_config(st_export, model_dir), data)
    verdicts = [st_env.verifier.verify(text, task.reference) for text, task in zip(texts, tasks, strict=True)]
    assert [v.status for v in verdicts] == ["correct", "incorrect", "no_answer", "no_answer"]
    assert [o["reward_score"] for o in outputs] == [v.reward for v in verdicts]
    assert [o["reward_extra_info"]["rlvr_status"] for o in outputs] == [v.status for v in verdicts]
    assert len({tuple(o["reward_extra_info"]) for o in outputs}) == 1
    rm_scores = NaiveRewardManager.assemble_rm_scores(data, [o["reward_score"] for o in outputs])
    last = data.batch["attention_mask"][:, data.batch["prompts"].shape[1]:].sum(dim=1) - 1
    assert rm_scores.sum(dim=1).tolist() == [v.reward for v in verdicts]
    assert [float(rm_scores[i, int(last[i])]) for i in range(len(rows))] == [v.reward for v in verdicts]


def test_error_verdict_fails_the_rollout_or_scores_nan(st_export: Path, tokenizer: Any, model_dir: Path) -> None:
    row = pq.read_table(st_export / "train.parquet").to_pylist()[0]
    broken = {**row, "reward_model": {"style": "rule", "ground_truth": ""}}  # empty: plain-text row
    data = _data_proto(tokenizer, [broken], ["\\boxed{1}"])
    with pytest.raises(UnscorableSampleError, match="could not score"):
        _reward_loop(_config(st_export, model_dir), data)
    [out] = _reward_loop(_config(st_export, model_dir, "+reward.custom_reward_function.reward_kwargs.on_error=nan"),
                         data)
    assert math.isnan(out["reward_score"]) and out["reward_extra_info"]["rlvr_status"] == "error"


# -- (c) RlvrAgentLoop inside veRL's AgentLoopWorker ----------------------------------------------
class TransformersServer:
    """veRL server-manager interface backed by transformers `generate` on CPU (greedy), recording each call.

    `first_turns` maps a prompt (its ids) to a recorded first model turn (a calculator call): greedy
    SmolLM2-135M does not call the tool by itself, so the episode starts with the recorded call and the
    model then answers after the environment's tool response (conditioned on the env tokens).
    """

    def __init__(self, model_dir: Path, tokenizer: Any, max_new_tokens: int,
                 first_turns: Mapping[tuple[int, ...], list[int]]) -> None:
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.first_turns = dict(first_turns)
        self.calls: dict[str, list[tuple[list[int], list[int]]]] = defaultdict(list)

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if not self.calls[request_id] and tuple(prompt_ids) in self.first_turns:
            ids = list(self.first_turns[tuple(prompt_ids)])
        else:
            limit = min(int(sampling_params.get("max_tokens") or self.max_new_tokens), self.max_new_tokens)
            inputs = torch.tensor([prompt_ids])
            with torch.no_grad():
                out = self.model.generate(inputs, attention_mask=torch.ones_like(inputs), max_new_tokens=limit,
                                          do_sample=False, eos_token_id=end, pad_token_id=self.tokenizer.pad_token_id)
            ids = out[0, len(prompt_ids):].tolist()
        self.calls[request_id].append((list(prompt_ids), ids))
        return TokenOutput(token_ids=ids, stop_reason="completed" if ids[-1:] == [end] else "length")


def _worker_batch(config: Any, folder: Path, tokenizer: Any, indices: Sequence[int]) -> Any:
    dataset = RLHFDataset(data_files=[str(folder / "train.parquet")], tokenizer=tokenizer, config=config.data)
    return DataProto.from_single_dict(collate_fn([dataset[i] for i in indices]))


def _generate(config: Any, server: Any, batch: Any) -> Any:
    async def run() -> Any:
        worker = AgentLoopWorker(config, llm_client=server)
        return await worker.generate_sequences(batch)

    return asyncio.run(run())


def _unpadded(out: Any, i: int) -> tuple[list[int], list[int], list[int], float]:
    prompt_len = out.batch["prompts"].shape[1]
    attention = out.batch["attention_mask"][i]
    prompt = out.batch["prompts"][i][attention[:prompt_len].bool()].tolist()
    n = int(attention[prompt_len:].sum())
    return (prompt, out.batch["responses"][i][:n].tolist(), out.batch["response_mask"][i][:n].tolist(),
            float(out.batch["rm_scores"][i].sum()))


def test_agent_loop_runs_in_verl_worker_with_transformers(mt_export: Path, model_dir: Path, tokenizer: Any) -> None:
    config = _config(mt_export, model_dir, "data.max_response_length=160")
    oracles = [r for r in _fixture_records() if r["multi_turn"] and r["kind"] == "oracle"]
    assert all((r["env_id"], r["env_args"]) == (MT_ID, MT_ARGS) for r in oracles)
    server = TransformersServer(model_dir, tokenizer, max_new_tokens=24,
                                first_turns={tuple(r["expected"]["prompt_ids"]): r["turns"][0]["ids"] for r in oracles})
    rows = pq.read_table(mt_export / "train.parquet").to_pylist()
    ids = {r["task_id"] for r in oracles}
    batch = _worker_batch(config, mt_export, tokenizer,
                          [i for i, r in enumerate(rows) if r["extra_info"]["task_id"] in ids])
    out = _generate(config, server, batch)
    assert out.meta_info["reward_extra_keys"][0] == "rlvr_status" and "rm_scores" in set(out.batch.keys())
    env = rlvr.make(MT_ID, **MT_ARGS)
    for i in range(2):
        prompt, response, mask, reward = _unpadded(out, i)
        [calls] = [c for c in server.calls.values() if c[0][0] == prompt]
        position = 0
        for prompt_k, sampled in calls:  # each model turn: its sampled ids, masked 1; env ids between, masked 0
            assert prompt_k == prompt + response[:position]
            assert response[position:position + len(sampled)] == sampled[: len(response) - position]
            assert mask[position:position + len(sampled)] == [1] * len(sampled[: len(response) - position])
            position += len(sampled)
            following = next((len(p) - len(prompt) for p, _ in calls if len(p) > len(prompt) + position), len(response))
            assert mask[position:following] == [0] * (following - position)
            position = following
        assert position == len(response) and len(mask) == len(response) <= 160
        assert len(calls) >= 2 and 0 in mask  # the recorded calculator call, its answer (env tokens), the model
        # the reward is the rlvr episode's verdict for the texts the model wrote
        row = batch.non_tensor_batch
        task_prompt = tuple(Message(**m) for m in row["raw_prompt"][i])
        task = env.tasks[int(row["index"][i])]
        assert task.prompt == task_prompt
        episode = env.episode_copy()
        asyncio.run(episode.reset(task))
        for _, sampled in calls:
            result = asyncio.run(episode.step(Message(role="assistant",
                                                      content=tokenizer.decode(sampled, skip_special_tokens=True))))
            if result.terminated or result.truncated:
                break
        verdict = result.verdict or asyncio.run(episode.ascore(task, tokenizer.decode(calls[-1][1],
                                                                                    skip_special_tokens=True)))
        assert reward == verdict.reward and out.non_tensor_batch["rlvr_status"][i] == verdict.status
    env.close()


def _fixture_records() -> list[dict[str, Any]]:
    if not FIXTURE.is_file():
        pytest.skip(f"parity fixture {FIXTURE} missing (scripts/record_parity.py writes it)")
    return load_records(FIXTURE)


def test_agent_loop_in_verl_worker_masks_exactly_the_env_tokens(mt_export: Path, model_dir: Path,
                                                                tokenizer: Any) -> None:
    record = next(r for r in _fixture_records() if r["multi_turn"] and r["kind"] == "tool_error")
    assert (record["env_id"], record["env_args"]) == (MT_ID, MT_ARGS)
    config = _config(mt_export, model_dir)
    rows = pq.read_table(mt_export / "train.parquet").to_pylist()
    index = next(i for i, r in enumerate(rows) if r["extra_info"]["task_id"] == record["task_id"])
    turns = [t["ids"] for t in record["turns"] if t["role"] == "assistant"]
    out = _generate(config, ReplayServerManager(turns), _worker_batch(config, mt_export, tokenizer, [index]))
    prompt, response, mask, reward = _unpadded(out, 0)
    expected = record["expected"]
    assert (prompt, response, mask) == (expected["prompt_ids"], expected["response_ids"], expected["loss_mask"])
    assert 0 in mask and reward == expected["reward"] and out.non_tensor_batch["rlvr_status"][0] == expected["status"]
    # the masked tokens are the environment's turns: decoded, they hold the tool answers, never model text
    env_text = tokenizer.decode([t for t, m in zip(response, mask, strict=True) if m == 0])
    assert env_text.count("<tool_response>") == 2 and "<tool_call>" not in env_text
    # the episode's tool use rides in reward_extra_info, one value per sample, as veRL batches it
    assert {f"rlvr_{k}" for k in EPISODE_METRICS} <= set(out.meta_info["reward_extra_keys"])
    logged = {k: float(out.non_tensor_batch[f"rlvr_{k}"][0]) for k in EPISODE_METRICS}
    errors = env_text.count("Error")
    assert errors >= 1 and logged == {"tool_call_rate": 1.0, "tool_calls": 2.0, "tool_errors": float(errors),
                                      "turns": float(len(turns))}


def test_agent_loop_tags_the_weight_versions_verl_v1_needs(mt_export: Path, model_dir: Path, tokenizer: Any) -> None:
    """veRL's v1 trainer tags each trajectory with `min_global_steps`/`max_global_steps` from the agent loop's
    extra fields and fails on None (`int(None)` in `_compute_metrics`): the first real multi-turn CPU run did."""
    record = next(r for r in _fixture_records() if r["multi_turn"] and r["kind"] == "tool_error")
    turns = [t["ids"] for t in record["turns"] if t["role"] == "assistant"]
    config = _config(mt_export, model_dir)

    async def run() -> Any:
        server = ReplayServerManager(turns, global_steps=[3] + [4] * (len(turns) - 1))  # weights synced mid-episode
        loop = _instantiate_loop(config, "rlvr_agent", server, tokenizer)
        return await loop.run({"temperature": 1.0}, **_record_row(record))

    out = asyncio.run(run())
    assert (out.extra_fields["min_global_steps"], out.extra_fields["max_global_steps"]) == (3, 4)
    assert out.extra_fields["global_steps"] == 3 and "reward_extra_info" in out.extra_fields


def test_agent_loop_error_verdict_raises(mt_export: Path, model_dir: Path, tokenizer: Any) -> None:
    record = next(r for r in _fixture_records() if r["multi_turn"] and r["kind"] == "oracle")
    row = {**_record_row(record), "reward_model": {"style": "rule", "ground_truth": json.dumps("")}}
    turns = [t["ids"] for t in record["turns"] if t["role"] == "assistant"]
    config = _config(mt_export, model_dir)

    async def run() -> Any:
        loop = _instantiate_loop(config, "rlvr_agent", ReplayServerManager(turns), tokenizer)
        return await loop.run({"temperature": 1.0}, **row)

    with pytest.raises(UnscorableSampleError, match=record["task_id"]):
        asyncio.run(run())
    assert decode_reference(record["reference"]) != ""


# -- (d) parity -----------------------------------------------------------------------------------
def test_parity_records_replay_through_verl(tokenizer: Any) -> None:
    records = _fixture_records()
    assert {r["multi_turn"] for r in records} == {True, False}
    for record in records:
        got = verl_replay(record, tokenizer)
        expected = record["expected"]
        assert (got["reward"], got["status"]) == (expected["reward"], expected["status"]), record["id"]
        assert got["prompt_ids"] == expected["prompt_ids"], record["id"]
        assert got["response_ids"] == expected["response_ids"], record["id"]
        assert got["response_mask"] == expected["loss_mask"], record["id"]


def _verl(*modules: str) -> None:
    """Skip without veRL; import veRL's modules once with ray's import-time DeprecationWarning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in ("verl", "torch", "verl.experimental.agent_loop.agent_loop", "rlvr.adapters.verl.agent",
                     *modules):
            pytest.importorskip(name)


def _records(kind: str) -> dict[str, Any]:
    if not FIXTURE.is_file():
        pytest.skip(f"parity fixture {FIXTURE} missing (scripts/record_parity.py writes it)")
    records = json.loads(FIXTURE.read_text())["records"]
    record = next(r for r in records if r["multi_turn"] and r["kind"] == kind)
    assert (record["env_id"], record["env_args"]) == (MT_ID, MT_ARGS)
    return dict(record)


@pytest.mark.verl
def test_legacy_overrides_compose_and_reach_the_agent_loop(tmp_path: Path, tokenizer: Any) -> None:
    """The legacy-trainer NaN switch composes with veRL's config and reaches `RlvrAgentLoop` (whose
    `agent_loop.yaml` still says `raise`): an error verdict then scores NaN instead of raising."""
    _verl()
    from rlvr.adapters.verl import verl_config
    from rlvr.adapters.verl.agent import ReplayServerManager, _instantiate_loop, _record_row

    env = rlvr.make(MT_ID, **MT_ARGS)
    export_verl(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS, limit=2)
    env.close()
    config = verl_config(verl_overrides(tmp_path, model=str(tokenizer.name_or_path), steps=1,
                                        trainer_args=["trainer.use_v1=False"]))
    assert config.trainer.use_v1 is False
    assert math.isnan(config.reward.custom_reward_function.reward_kwargs.on_error)
    record = _records("oracle")
    row = {**_record_row(record), "reward_model": {"style": "rule", "ground_truth": json.dumps("")}}
    turns = [t["ids"] for t in record["turns"] if t["role"] == "assistant"]

    async def run() -> Any:
        loop = _instantiate_loop(config, "rlvr_agent", ReplayServerManager(turns), tokenizer)
        assert loop.on_error == "nan"
        return await loop.run({"temperature": 1.0}, **row)

    output = asyncio.run(run())
    assert math.isnan(output.reward_score) and output.extra_fields["reward_extra_info"]["rlvr_status"] == "error"
    assert output.response_ids == record["expected"]["response_ids"]


@pytest.mark.verl
def test_v1_trainer_drops_the_failed_rollout_and_trains_on_the_rest(tmp_path: Path, tokenizer: Any) -> None:
    """The default `on_error='raise'` in the trainer `main_ppo` runs with rlvr's overrides (v1, sync):
    veRL's own `AgentLoopWorkerTQ` runs two prompts x 2 rollouts through `RlvrAgentLoop`, one prompt with
    a broken reference (error verdict). Its group is tagged `failure` and none of its trajectories
    reaches the TransferQueue; veRL's sync `ReplayBuffer` then samples the healthy group's two
    trajectories with their real rewards, so training goes on and nothing learns a fake 0."""
    _verl("transfer_queue", "verl.trainer.ppo.v1.agent_loop_tq")
    import numpy as np
    import pyarrow as pa
    import ray
    import transfer_queue as tq
    from verl.trainer.ppo.v1.agent_loop_tq import AgentLoopWorkerTQ
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer
    from verl.utils import tensordict_utils as tu
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn
    from verl.workers.rollout.replica import TokenOutput

    from rlvr.adapters.verl import verl_config

    record = _records("oracle")
    turns = [t["ids"] for t in record["turns"] if t["role"] == "assistant"]
    env = rlvr.make(MT_ID, **MT_ARGS)
    export_verl(env, tmp_path, env_id=MT_ID, env_args=MT_ARGS)
    env.close()
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    good = next(r for r in rows if r["extra_info"]["task_id"] == record["task_id"])
    broken = json.loads(json.dumps(good))
    broken["reward_model"]["ground_truth"], broken["extra_info"]["index"] = "", 99  # empty (a plain-text row)
    pq.write_table(pa.Table.from_pylist([good, broken]), str(tmp_path / "train.parquet"))
    config = verl_config(verl_overrides(tmp_path, model=str(tokenizer.name_or_path), steps=1,
                                        trainer_args=["actor_rollout_ref.rollout.n=2"]))
    assert config.trainer.use_v1 is True and config.trainer.v1.trainer_mode == "sync"

    class Replay:  # one recorded episode per rollout (request id), as a server manager
        def __init__(self) -> None:
            self.left: dict[str, list[list[int]]] = {}

        async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                           **kwargs: Any) -> Any:
            return TokenOutput(token_ids=self.left.setdefault(request_id, list(turns)).pop(0), stop_reason="completed")

    dataset = RLHFDataset(data_files=[str(tmp_path / "train.parquet")], tokenizer=tokenizer, config=config.data)
    batch_dict = collate_fn([dataset[0], dataset[1]])
    uids = [str(uuid.uuid4()) for _ in range(2)]
    batch_dict["uid"] = np.array(uids, dtype=object)
    batch = tu.get_tensordict(batch_dict)  # what PPOTrainer._next_train_batch / _submit_batch_to_rollout send
    tu.assign_non_tensor_data(batch, "global_steps", 1)

    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)  # TQ's controller + 2 storage actors
    try:
        tq.init()
        tq.kv_batch_put(keys=uids, partition_id="train",
                        tags=[{"is_prompt": True, "status": "pending", "global_steps": 1}] * 2)

        async def generate() -> None:
            worker = AgentLoopWorkerTQ.__ray_metadata__.modified_class(config, llm_client=Replay())
            await worker.generate_sequences(batch)
            while worker.background_tasks:
                await asyncio.sleep(0.05)

        asyncio.run(generate())
        tags = tq.kv_list(partition_id="train")["train"]
        assert (tags[uids[0]]["status"], tags[uids[1]]["status"]) == ("finished", "failure")
        assert sorted(k for k in tags if "_" in k) == [f"{uids[0]}_0_0", f"{uids[0]}_1_0"]
        buffer = ReplayBuffer(trainer_mode="sync", trainer_config={}, max_off_policy_threshold=8,
                              max_off_policy_strategy="drop", sampler_kwargs={}, poll_interval=0.05,
                              train_batch_size=2, gen_batch_size=2)
        meta, _metrics = buffer.sample(global_steps=1, partition_id="train", batch_size=2)
        assert sorted(meta.keys) == [f"{uids[0]}_0_0", f"{uids[0]}_1_0"]
        data = tq.kv_batch_get(keys=meta.keys, partition_id="train", select_fields=["rm_scores", "response_mask"])
        scores = data["rm_scores"].to_padded_tensor(padding=0.0).sum(dim=1).tolist()
        assert scores == [record["expected"]["reward"]] * 2 == [1.0, 1.0]
        masks = data["response_mask"].to_padded_tensor(padding=-1)
        assert [m[m >= 0].tolist() for m in masks] == [record["expected"]["loss_mask"]] * 2
    finally:
        tq.close()
        ray.shutdown()
