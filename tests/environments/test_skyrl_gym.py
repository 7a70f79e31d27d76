"""skyrl-gym environments in rlvr (`from_skyrl_gym`): skyrl's own gsm8k envs over SkyRL rows made from
rlvr's offline reasoning-gym tasks, through the env API, `rlvr eval` (extras venv) and TRL's real
GRPOTrainer (TRL venv); the error paths (a broken skyrl env is a masked `error` verdict, a bad row a
DataError naming the field); skyrl's scorer quirks a policy could exploit, pinned as skyrl's behaviour.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym")

from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import rlvr  # noqa: E402
from rlvr.core.errors import ConfigError, DataError  # noqa: E402
from rlvr.core.types import Message, StepResult  # noqa: E402
from rlvr.environments.skyrl import SkyRLEnv, from_skyrl_gym  # noqa: E402
from rlvr.environments.skyrl_data import skyrl_rows  # noqa: E402
from rlvr.runners.cli import app  # noqa: E402
from rlvr.runners.eval import read_trajectories, score_file  # noqa: E402

GSM8K_FILE = Path("/work/shared/data/math/gsm8k_test.jsonl")
TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"


def offline_rows(size: int = 3, env_class: str = "gsm8k") -> list[dict[str, Any]]:
    """SkyRL rows of rlvr's own offline tasks (`math/reasoning-gym-v1`, integer answers)."""
    source = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=size, seed=0, system_prompt="")
    try:
        return skyrl_rows(list(source.tasks), env_class=env_class)
    finally:
        source.close()


def truth(env: SkyRLEnv, i: int) -> str:
    return str(env.tasks[i].reference["extras"]["reward_spec"]["ground_truth"])


def play(env: SkyRLEnv, i: int, *actions: str) -> list[StepResult]:
    env.reset_sync(env.tasks[i])
    return [env.step_sync(a) for a in actions]


# -- skyrl's gsm8k env through the rlvr env API ----------------------------------------------------
@pytest.mark.extras
def test_gsm8k_rows_score_by_skyrls_scorer() -> None:
    env = from_skyrl_gym("gsm8k", offline_rows())
    assert env.spec.id == "skyrl/gsm8k-v1" and [t.id for t in env.tasks] == ["rlvr-0", "rlvr-1", "rlvr-2"]
    prompt, info = env.reset_sync(env.tasks[0])
    assert prompt == list(env.tasks[0].prompt) and '"####"' in prompt[-1].content and info["task_id"] == "rlvr-0"
    right = env.step_sync(f"So the answer is\n#### {truth(env, 0)}")
    assert (right.terminated, right.reward, right.verdict and right.verdict.status) == (True, 1.0, "correct")
    assert right.info["components"] == {"env_reward": 1.0} and right.messages == ()
    (wrong,) = play(env, 1, "#### 123456789")
    assert wrong.verdict is not None and (wrong.verdict.status, wrong.reward) == ("incorrect", 0.0)
    (none,) = play(env, 2, f"the answer is {truth(env, 2)}")  # no `####`: skyrl's strict scorer gives 0
    assert none.verdict is not None and none.verdict.status == "incorrect" and none.reward == 0.0
    oracle = env.reference_actions(env.tasks[1])
    assert oracle == [Message(role="assistant", content=f"#### {truth(env, 1)}")]
    assert play(env, 1, oracle[0].content)[0].reward == 1.0
    env.close()


@pytest.mark.extras
def test_task_ids_come_from_the_rows() -> None:
    rows = offline_rows(4)
    rows[0]["uid"] = "abc"
    rows[1]["id"] = 7
    rows[2]["extra_info"] = {"index": 40}
    rows[3].pop("extra_info")
    rows[3]["data_source"] = "mine"
    env = from_skyrl_gym(None, rows)  # None: each row's env_class
    assert [t.id for t in env.tasks] == ["abc", "7", "rlvr-40", "mine-3"]
    rows[1] = {**rows[1], "id": "abc"}
    with pytest.raises(DataError, match=r"rows\[1\]: task id 'abc' repeats the one of rows\[0\]; give each row a uni"):
        from_skyrl_gym("gsm8k", rows)


@pytest.mark.extras
def test_multi_turn_env_answers_and_format_score_is_no_pass() -> None:
    env = rlvr.make("skyrl/gsm8k-v1", size=2, multi_turn=True)
    first, second = play(env, 0, "#### 0", f"#### {truth(env, 0)}")
    assert first.verdict is None and first.reward == pytest.approx(0.04)  # skyrl's format score 0.2 / 5 turns
    assert [m.role for m in first.messages] == ["user"] and "'#### ANSWER'" in first.messages[0].content
    assert second.terminated and second.verdict is not None and second.verdict.status == "correct"
    assert first.reward + second.reward == pytest.approx(1.04) == second.verdict.reward
    # five well-formed wrong answers: a return of 0.2 > 0, which is not one right answer (success_threshold 1.0)
    steps = play(env, 1, *["#### 0"] * 5)
    last = steps[-1]
    assert last.terminated and last.verdict is not None and last.verdict.status == "incorrect"
    assert sum(s.reward for s in steps) == pytest.approx(0.2) == last.verdict.reward
    env.close()


@pytest.mark.extras
def test_a_one_turn_skyrl_env_takes_the_trainers_agent_path() -> None:
    """A lone response cannot be scored (ReturnVerifier: error), so every trainer must run the episode."""
    from rlvr.adapters.export import is_multi_turn

    env = rlvr.make("skyrl/gsm8k-v1", size=1)
    assert env.spec.max_turns == 1 and is_multi_turn(env)
    verdict = env.score(env.tasks[0], f"#### {truth(env, 0)}")
    assert verdict.status == "error" and verdict.reward is None and "episode return" in verdict.detail
    env.close()


# -- the reward path holds against the model's text -------------------------------------------------
@pytest.mark.extras
def test_skyrls_gsm8k_scorer_quirks_are_skyrls_rules() -> None:
    """rlvr wraps skyrl's scorer, it does not fix it: these pin its behaviour (see the module docstring)."""
    env = from_skyrl_gym("gsm8k", offline_rows(1))
    gold = truth(env, 0)
    spaced = ",".join(gold)  # commas inside the number are deleted: a false pass
    assert play(env, 0, f"#### {spaced}")[0].reward == 1.0
    assert play(env, 0, f"#### 1\nNo wait:\n#### {gold}")[0].reward == 0.0  # the FIRST #### counts
    assert play(env, 0, f"#### {gold}.0")[0].reward == 0.0  # compared as strings
    env.close()


class MutatingEnv(BaseTextEnv):
    """A skyrl env that writes the model's text into its extras (a scorer that trusts what it is given)."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.extras = extras or {}

    def step(self, action: str) -> Any:
        correct = action == self.extras["reward_spec"]["ground_truth"]
        self.extras["reward_spec"]["ground_truth"] = action
        return {"observations": [], "reward": float(correct), "done": True, "metadata": {}}


@pytest.mark.extras
def test_an_episode_cannot_change_the_ground_truth_of_the_next() -> None:
    env = from_skyrl_gym(MutatingEnv, offline_rows(1), env_id="test/mutating-v1")
    gold = truth(env, 0)
    assert play(env, 0, "hack")[0].reward == 0.0
    assert play(env, 0, "hack")[0].reward == 0.0  # a fresh env with a fresh copy of the extras
    assert play(env, 0, gold)[0].reward == 1.0 and truth(env, 0) == gold
    env.close()


# -- broken skyrl envs: an error verdict, masked --------------------------------------------------
class BrokenEnv(BaseTextEnv):
    """A skyrl env that fails where the row's extra_info says."""

    closed = 0

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.mode = (extras or {}).get("extra_info", {}).get("mode", "ok")
        if self.mode == "construct":
            raise AssertionError("ground_truth is required")

    def init(self, prompt: Any) -> Any:
        if self.mode == "init":
            raise RuntimeError("db down")
        return prompt, {}

    def step(self, action: str) -> Any:
        self.turns += 1
        if self.mode == "step":
            raise RuntimeError("tool crashed")
        reward = {"nan": float("nan"), "inf": float("inf"), "none": None, "huge": 1e308}.get(self.mode, 1.0)
        observations: Any = "not messages" if self.mode == "obs" else [{"role": "user", "content": "go on"}]
        return {"observations": observations, "reward": reward, "done": self.turns >= 2, "metadata": {}}

    def close(self) -> None:
        type(self).closed += 1


def broken_env(*modes: str) -> SkyRLEnv:
    rows = offline_rows(len(modes))
    for row, mode in zip(rows, modes, strict=True):
        row["extra_info"]["mode"] = mode
    return from_skyrl_gym(BrokenEnv, rows, env_id="test/broken-v1", max_turns=4)


@pytest.mark.extras
@pytest.mark.parametrize(("mode", "why"), [
    ("construct", "failed in construction: AssertionError: ground_truth is required"),
    ("init", "failed in init: RuntimeError: db down"),
    ("step", "failed in step: RuntimeError: tool crashed"),
    ("nan", "reward nan is not finite"), ("inf", "reward inf is not finite"),
    ("none", "failed in step: TypeError"), ("obs", "expected a list of chat messages, got str")])
def test_a_broken_skyrl_env_is_an_error_verdict_masked(mode: str, why: str) -> None:
    env = broken_env("ok", mode)
    (result,) = play(env, 1, "anything")
    assert result.verdict is not None and result.verdict.status == "error" and result.verdict.reward is None
    assert why in result.verdict.detail and result.info["masked"] and result.reward == 0.0
    ok = play(env, 0, "a", "b")  # the other episodes go on
    assert ok[0].messages == (Message(role="user", content="go on"),) and ok[-1].verdict is not None
    assert (ok[-1].verdict.status, ok[-1].verdict.reward) == ("correct", 2.0)
    env.close()


@pytest.mark.extras
def test_rewards_whose_sum_overflows_are_an_error_verdict_never_inf() -> None:
    env = broken_env("huge")  # 1e308 per step, two steps: each finite, the return inf
    last = play(env, 0, "a", "b")[-1]
    assert last.verdict is not None and last.verdict.status == "error" and last.verdict.reward is None
    assert last.info["masked"] and last.reward == 0.0 and "not finite" in last.verdict.detail
    env.close()


@pytest.mark.extras
def test_the_skyrl_env_is_closed_when_each_episode_ends() -> None:
    env = broken_env("ok", "ok")
    BrokenEnv.closed = 0
    play(env, 0, "a", "b")
    assert BrokenEnv.closed == 1 and env.skyrl_env is None
    play(env, 1, "a")  # abandoned mid-episode: closed by the next reset
    assert BrokenEnv.closed == 1
    play(env, 0, "a", "b")
    assert BrokenEnv.closed == 3
    truncated = from_skyrl_gym(BrokenEnv, offline_rows(1), env_id="test/broken-v1", max_turns=1)
    (cut,) = play(truncated, 0, "a")
    assert cut.truncated and cut.verdict is not None and cut.verdict.status == "incorrect"
    assert BrokenEnv.closed == 5  # one built and closed by from_skyrl_gym's check, one by the episode
    env.reset_sync(env.tasks[0])
    copy = env.episode_copy()
    assert copy.skyrl_env is None  # an episode copy never shares (nor closes) its original's skyrl env
    env.close()
    assert BrokenEnv.closed == 6


# -- bad rows and options ----------------------------------------------------------------------------
@pytest.mark.extras
@pytest.mark.parametrize(("change", "match"), [
    ({"prompt": "What is 2+2?"}, r"rows\[0\]: field 'prompt' must be a non-empty list of chat messages, got str; a Sk"),
    ({"prompt": [{"role": "bot", "content": "hi"}]}, r"rows\[0\]: field 'prompt\[0\]' must be \{'role'"),
    ({"reward_spec": {"method": "rule"}}, r"rows\[0\]: missing field 'reward_spec.ground_truth' .* add 'reward_spec'"),
    ({"reward_spec": "18"}, r"field 'reward_spec' must be an object"),
    ({"env_class": "text2sql"}, r"field 'env_class' is 'text2sql' but the environment wraps 'gsm8k'; fix the row")])
def test_a_bad_row_is_a_data_error_naming_the_field_and_the_fix(change: dict[str, Any], match: str) -> None:
    rows = offline_rows(1)
    rows[0].update(change)
    with pytest.raises(DataError, match=match):
        from_skyrl_gym("gsm8k", rows)


@pytest.mark.extras
def test_bad_options_and_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"skyrl-gym has no env 'gsm9k'; registered: .*gsm8k"):
        from_skyrl_gym("gsm9k", offline_rows(1))
    with pytest.raises(ConfigError, match=r"is not a skyrl_gym\.Env subclass"):
        from_skyrl_gym(dict, offline_rows(1))
    with pytest.raises(DataError, match="missing field 'env_class'; add it to the row or pass env_class="):
        from_skyrl_gym(None, [{k: v for k, v in offline_rows(1)[0].items() if k != "env_class"}])
    rows = offline_rows(2)
    rows[0]["extra_info"]["mode"] = "construct"
    with pytest.raises(ConfigError, match=r"skyrl env 'BrokenEnv' cannot be built for rows\[0\]: AssertionError"):
        from_skyrl_gym(BrokenEnv, rows)
    with pytest.raises(ConfigError, match="skyrl/env-v1 needs rows=PATH"):
        rlvr.make("skyrl/env-v1", env_class="gsm8k")
    with pytest.raises(ConfigError, match=r"reward_range must be two numbers \[lo, hi\]"):
        rlvr.make("skyrl/env-v1", env_class="gsm8k", rows="x.jsonl", reward_range=[1])
    with pytest.raises(DataError, match="does not exist"):
        rlvr.make("skyrl/env-v1", env_class="gsm8k", rows=str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "gsm8k_style.jsonl"
    bad.write_text(json.dumps({"question": "q", "answer": "no final answer"}) + "\n")
    with pytest.raises(DataError, match=r"gsm8k_style\.jsonl:1: field 'answer' has no '#### <number>'"):
        rlvr.make("skyrl/gsm8k-v1", path=str(bad))


# -- rlvr eval, through the registry -----------------------------------------------------------------
def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.extras
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_rlvr_eval_oracle_noop_and_script_on_a_rows_file(tmp_path: Path, suffix: str) -> None:
    rows = write_rows(tmp_path / f"rows{suffix}", offline_rows(3))
    env = ["--env", "skyrl/env-v1", "-a", "env_class=gsm8k", "-a", f"rows={rows}", "-a", "reward_range=[-1, 1]"]
    runner = CliRunner()
    out = tmp_path / "oracle.jsonl"
    result = runner.invoke(app, ["eval", *env, "--policy", "oracle", "-n", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    trajectories = list(read_trajectories(out))
    assert len(trajectories) == 6 and {t.task_id for t in trajectories} == {"rlvr-0", "rlvr-1", "rlvr-2"}
    assert all(t.verdict is not None and t.verdict.status == "correct" and t.reward == 1.0 for t in trajectories)

    out = tmp_path / "noop.jsonl"
    assert runner.invoke(app, ["eval", *env, "--policy", "noop", "-o", str(out)]).exit_code == 0
    stats = score_file(out)
    assert stats.pass_at(1) == (0.0, 3) and stats.mean_reward == 0.0 and stats.errors == 0

    script = tmp_path / "script.jsonl"
    answers = {"rlvr-0": "#### 1", "rlvr-1": "#### 2"}  # rlvr-2 has no script: that episode breaks (error)
    script.write_text("".join(json.dumps({"task_id": k, "actions": [v]}) + "\n" for k, v in answers.items()))
    out = tmp_path / "script_out.jsonl"
    assert runner.invoke(app, ["eval", *env, "--policy", f"script:{script}", "-o", str(out)]).exit_code == 0
    by_id = {t.task_id: t for t in read_trajectories(out)}
    assert by_id["rlvr-0"].verdict is not None and by_id["rlvr-0"].verdict.status == "incorrect"
    assert by_id["rlvr-2"].verdict is not None and by_id["rlvr-2"].verdict.reward is None


@pytest.mark.extras
def test_rlvr_eval_multi_turn_registered_env(tmp_path: Path) -> None:
    out = tmp_path / "oracle.jsonl"
    result = CliRunner().invoke(app, ["eval", "--env", "skyrl/gsm8k-v1", "-a", "size=3", "-a", "multi_turn=true",
                                      "--policy", "oracle", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert score_file(out).pass_at(1) == (1.0, 3)


@pytest.mark.extras
@pytest.mark.skipif(not GSM8K_FILE.is_file(), reason=f"needs the GSM8K test split at {GSM8K_FILE}")
def test_real_gsm8k_rows_oracle_passes() -> None:
    env = rlvr.make("skyrl/gsm8k-v1", path=str(GSM8K_FILE), limit=20)
    assert len(env.tasks) == 20 and env.tasks[0].id == "openai/gsm8k-0"
    for i in range(20):
        (result,) = play(env, i, *(m.content for m in env.reference_actions(env.tasks[i]) or []))
        assert result.verdict is not None and result.verdict.status == "correct", env.tasks[i]
    env.close()


# -- TRL: GRPOTrainer's real generate-and-score step, rlvr's rollout_func on skyrl's env ----------------
@pytest.mark.trl
@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_trl_grpo_scores_skyrl_episodes(tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import trl
    from transformers import AutoTokenizer

    from rlvr.adapters.export import cached_env
    from rlvr.adapters.trl import task_row
    from rlvr.adapters.trl.rollout import RolloutReward, TrainerPolicy, rollout_func
    from rlvr.runners.train.grpo import build_grpo_config

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_dir))
    env = cached_env("skyrl/gsm8k-v1", {"size": 2})
    solved = env.tasks[0]
    question = solved.prompt[-1].content

    def sample(self: TrainerPolicy, ids: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
        # the one call into the model: the right answer for task 0, a wrong one for task 1
        text = f"#### {truth(env, 0)}" if question in tokenizer.decode(ids) else "#### 0"
        sampled = [*tokenizer.encode(text, add_special_tokens=False), tokenizer.eos_token_id]
        return sampled, [-0.5] * len(sampled)

    monkeypatch.setattr(TrainerPolicy, "_sample", sample)
    fn, reward = rollout_func(env), RolloutReward("rlvr_skyrl")
    rows = [task_row(t) for t in env.tasks]
    args = build_grpo_config(tmp_path, 1, {"num_generations": 2, "per_device_train_batch_size": 4,
                                           "max_completion_length": 24})
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    import datasets

    trainer = trl.GRPOTrainer(model=str(tiny_dir), processing_class=tokenizer, args=args, reward_funcs=[reward],
                              train_dataset=datasets.Dataset.from_list(rows), rollout_func=fn)
    out = trainer._generate_and_score_completions([dict(rows[0]), dict(rows[0]), dict(rows[1]), dict(rows[1])])
    assert [t.task_id for t in fn.last_trajectories] == [solved.id] * 2 + [env.tasks[1].id] * 2
    assert [(v.status, v.reward) for v in reward.last_verdicts] == [("correct", 1.0)] * 2 + [("incorrect", 0.0)] * 2
    assert [float(a) for a in out["advantages"]] == [0.0] * 4  # equal rewards within each group
    assert all(t.info["token_layout"] == "episode" and t.tokens and t.tokens.loss_mask and all(t.tokens.loss_mask)
               for t in fn.last_trajectories)
