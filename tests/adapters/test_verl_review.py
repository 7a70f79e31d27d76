"""Regression tests from the review of the veRL adapter (one per problem found; see each docstring).

Core tests run in the core venv; the ones that need veRL carry the `verl` marker and import it lazily.
The v1-trainer test drives veRL's real `AgentLoopWorkerTQ` + `ReplayBuffer` over a local Ray +
TransferQueue (`transfer_queue`, part of verl's `verl-core` extra; scripts/requirements/verl.txt).
"""

from __future__ import annotations

import asyncio
import json
import math
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

pq = pytest.importorskip("pyarrow.parquet")

import rlvr  # noqa: E402
from rlvr.adapters.export import close_cached_envs, read_manifest  # noqa: E402
from rlvr.adapters.verl import ON_ERROR_KEY, export_verl, verl_overrides  # noqa: E402

ST_ID, ST_ARGS = "math/reasoning-gym-v1", {"task": "basic_arithmetic", "size": 4, "seed": 3}
MT_ID, MT_ARGS = "math/reasoning-gym-tool-v1", {"task": "basic_arithmetic", "size": 8, "seed": 0}
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "rollouts.json"


@pytest.fixture(scope="module", autouse=True)
def _close_cached_envs() -> Any:
    yield
    close_cached_envs()


@pytest.fixture(scope="module")
def st_env() -> Any:
    env = rlvr.make(ST_ID, **ST_ARGS)
    yield env
    env.close()


def _value(overrides: list[str], key: str) -> str | None:
    found = [o.split("=", 1)[1] for o in overrides if o.lstrip("+").split("=", 1)[0] == key]
    return found[-1] if found else None


# -- core ------------------------------------------------------------------------------------------
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


# -- veRL ------------------------------------------------------------------------------------------
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


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    _verl()
    from transformers import AutoTokenizer

    from rlvr.core.errors import BackendError
    from rlvr.runners.models import prepare_smollm2

    try:
        return AutoTokenizer.from_pretrained(str(prepare_smollm2()))
    except BackendError as exc:
        pytest.skip(f"SmolLM2 unavailable: {exc}")


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
