"""The cross-trainer episodes (tests/data/parity/episodes.json, and mcp_episodes.json: the MCP task family
mcp/git-v1 on mcp-server-git in the sandbox) through rlvr eval and TRL 1.16's real GRPOTrainer.

- the fixture's token ids and expectations re-derive from rlvr with the real SmolLM2 tokenizer;
- rlvr eval (`rlvr.rollout.batch.rollout`, a replay policy) gives the same messages, ids, mask, verdict;
- TRL `rollout_func`: `GRPOTrainer._generate_and_score_completions` with rlvr's rollout function, the
  model's sampling (`TrainerPolicy._sample`, the one call into the model) replaying the record's ids;
  TRL's own code builds the prompt/completion tensors, `tool_mask` and rewards;
- TRL `environment_factory`: the same method with TRL's own tool loop, `_generate_single_turn` (the
  one model call) replaying the record's ids; TRL parses the calls and calls rlvr's tool methods.
  TRL owns the tokens on this path (its tool template, its rendering of tool answers), so ids and
  masks are TRL's: the test holds it to the fixture's observations, statuses and rewards.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.trl
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

from rlvr.adapters.export import cached_env  # noqa: E402
from rlvr.adapters.trl import task_row  # noqa: E402
from rlvr.adapters.trl.agent import EpisodeReward, environment_factory, tool_calling_tokenizer  # noqa: E402
from rlvr.adapters.trl.rollout import RolloutReward, TrainerPolicy, rollout_func  # noqa: E402
from rlvr.rollout.batch import clone_factory, rollout  # noqa: E402
from rlvr.runners.parity.records import ReplayPolicy, episode_expected, record_task, record_tokenizer  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "parity" / "episodes.json"
RECORDS: list[dict[str, Any]] = [*json.loads(FIXTURE.read_text())["records"],
                                  *json.loads(FIXTURE.with_name("mcp_episodes.json").read_text())["records"]]
TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"
REWRITE = next(r for r in RECORDS if r["kind"] == "rewrite_template")


@pytest.fixture(scope="module")
def tokenizer(tiny_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_dir))


def _model_turns(record: dict[str, Any]) -> list[list[int]]:
    return [list(t["ids"]) for t in record["turns"] if t["role"] == "assistant"]


def _row(record: dict[str, Any]) -> dict[str, Any]:
    """The TRL dataset row of a record (`to_dataset` columns), with its possibly broken reference."""
    return {**task_row(record_task(record)), "rlvr_reference": record["reference"]}


def _messages(messages: Any) -> list[dict[str, Any]]:
    return [m.to_openai() for m in messages]


def _answers(messages: list[dict[str, Any]]) -> list[str]:
    """The tool answers of an episode, unwrapped: a native call's answer is a `tool` message, a Hermes text
    call's a `user` message `<tool_response>\n...\n</tool_response>` (the first user message is the task)."""
    out = []
    for m in messages[1:]:
        text = m["content"]
        if m["role"] == "user" and text.startswith("<tool_response>\n") and text.endswith("\n</tool_response>"):
            out.append(text[len("<tool_response>\n") : -len("\n</tool_response>")])
        elif m["role"] == "tool":
            out.append(text)
    return out


# -- the fixture re-derives ---------------------------------------------------------------------------
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["id"])
def test_fixture_matches_rlvr(tokenizer: Any, record: dict[str, Any]) -> None:
    tok = record_tokenizer(record, tokenizer)
    for turn in (t for t in record["turns"] if t["role"] == "assistant"):
        assert tok.decode(turn["ids"], skip_special_tokens=True) == turn["text"]
    assert episode_expected(record, tokenizer) == record["expected"]


# -- rlvr eval ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("token_in", [True, False], ids=["token-in", "chat"])
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["id"])
def test_rlvr_eval_plays_the_fixture(tokenizer: Any, record: dict[str, Any], token_in: bool) -> None:
    tok = record_tokenizer(record, tokenizer)
    env = cached_env(record["env_id"], record["env_args"])
    policy = ReplayPolicy(tok, [t for t in record["turns"] if t["role"] == "assistant"], token_in=token_in)
    (traj,) = asyncio.run(rollout(clone_factory(env), policy, [record_task(record)], layout="auto", seed=None))
    expected = record["expected"]
    assert traj.error is None
    if record is REWRITE:
        # eval needs no single sequence: it plays on from the messages, one token sample per model turn, and
        # reports the template's rewrite with the same words as every trainer path
        assert traj.info["token_layout"] == "turn" and traj.info["token_misaligned"] == expected["misaligned"]
        assert _messages(traj.messages)[: len(expected["messages"])] == expected["messages"]
        assert [s.completion_ids for s in traj.samples] == _model_turns(record)
        assert traj.samples[0].prompt_ids == expected["prompt_ids"]
        return
    assert _messages(traj.messages) == expected["messages"]
    assert traj.verdict is not None and (traj.verdict.status, traj.verdict.reward) == (expected["status"],
                                                                                       expected["reward"])
    assert traj.tokens is not None
    assert (traj.tokens.prompt_ids, traj.tokens.completion_ids, traj.tokens.loss_mask) == (
        expected["prompt_ids"], expected["response_ids"], expected["loss_mask"])


# -- TRL rollout_func ------------------------------------------------------------------------------------
def _grpo_trainer(tiny_dir: Path, tokenizer: Any, out: Path, rows: list[dict[str, Any]], max_turns: int,
                  **hooks: Any) -> Any:
    from rlvr.runners.train.grpo import build_grpo_config

    args = build_grpo_config(out, 1, {"num_generations": 2, "per_device_train_batch_size": 2,
                                      "max_completion_length": 1024})  # above every record (the longest: 681)
    args.max_tool_calling_iterations = max_turns - 1  # as `rlvr train` sets it (multi_turn_hooks)
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"  # TRL warns that both hooks are experimental
    return trl.GRPOTrainer(model=str(tiny_dir), processing_class=tokenizer, args=args,
                           train_dataset=datasets.Dataset.from_list(rows), **hooks)


def _turn_of(ids: list[int], tokenizer: Any) -> int:
    """Model turns before the one `ids` prompts for: assistant headers in the prompt, less the generation prompt."""
    header = tokenizer.encode("<|im_start|>assistant", add_special_tokens=False)
    return sum(ids[k : k + len(header)] == header for k in range(len(ids))) - 1


def _unpadded(tensor: Any, mask: Any, i: int) -> list[int]:
    return [int(t) for t, m in zip(tensor[i].tolist(), mask[i].tolist(), strict=True) if m]


@pytest.mark.filterwarnings(TRL_GC_WARNING)
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["id"])
def test_trl_rollout_func_gives_the_fixture(tiny_dir: Path, tokenizer: Any, tmp_path: Path, record: dict[str, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    tok = record_tokenizer(record, tokenizer)
    turns = _model_turns(record)

    def sample(self: TrainerPolicy, ids: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
        sampled = turns[_turn_of(ids, tok)][:max_new_tokens]
        return sampled, [-0.5] * len(sampled)

    monkeypatch.setattr(TrainerPolicy, "_sample", sample)  # the one call into the model
    env = cached_env(record["env_id"], record["env_args"])
    fn, reward = rollout_func(env), RolloutReward("rlvr_cross")
    row = _row(record)
    trainer = _grpo_trainer(tiny_dir, tok, tmp_path, [row], env.spec.max_turns, reward_funcs=[reward],
                             rollout_func=fn)
    out = trainer._generate_and_score_completions([dict(row), dict(row)])  # TRL's RepeatSampler: 2 generations
    expected = record["expected"]
    for i, traj in enumerate(fn.last_trajectories):
        verdict = reward.last_verdicts[i]
        prompt = _unpadded(out["prompt_ids"], out["prompt_mask"], i)
        completion = _unpadded(out["completion_ids"], out["completion_mask"], i)
        mask = out["tool_mask"][i].tolist()[: len(completion)]
        if record is REWRITE:
            # the template rewrote history: no single sequence to train on, so the sample is masked whole
            assert verdict.status == "error" and verdict.reward is None
            assert expected["misaligned"] in verdict.detail and traj.info["token_misaligned"] == expected["misaligned"]
            assert completion == [tok.eos_token_id] and mask == [0] and float(out["advantages"][i]) == 0.0
            assert _messages(traj.messages)[: len(expected["messages"])] == expected["messages"]
            continue
        assert _messages(traj.messages) == expected["messages"]
        assert (verdict.status, verdict.reward) == (expected["status"], expected["reward"])
        assert (prompt, completion, mask) == (expected["prompt_ids"], expected["response_ids"], expected["loss_mask"])
        if expected["reward"] is None:  # TRL's NaN reward: unscorable, no advantage, never a 0 reward learned
            assert float(out["advantages"][i]) == 0.0


# -- TRL environment_factory ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tool_tokenizer(tiny_dir: Path) -> Any:
    from transformers import AutoTokenizer

    tokenizer, replaced = tool_calling_tokenizer(AutoTokenizer.from_pretrained(str(tiny_dir)))
    assert replaced
    return tokenizer


NO_TEMPLATE_ON_THIS_PATH = (
    "TRL's environment_factory path: TRL renders and tokenises the episode itself (its tool-calling template, its "
    "own tool-answer suffixes) and hands rlvr neither the chat template nor the ids, so rlvr cannot see a template "
    "that rewrites history there (the rollout_func path detects and reports it)")


def _factory_case(record: dict[str, Any]) -> Any:
    if record is REWRITE:
        return pytest.param(record, marks=pytest.mark.skip(reason=NO_TEMPLATE_ON_THIS_PATH))
    return record


@pytest.mark.filterwarnings(TRL_GC_WARNING)
@pytest.mark.parametrize("record", [_factory_case(r) for r in RECORDS], ids=lambda r: r["id"])
def test_trl_environment_factory_gives_the_fixture_verdicts(tiny_dir: Path, tool_tokenizer: Any, tmp_path: Path,
                                                            record: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    env = cached_env(record["env_id"], record["env_args"])
    turns = iter(_model_turns(record))

    def scripted(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        ids = next(turns)  # both rollouts of the group take the same turn
        return [list(ids) for _ in prompt_ids], None

    cls, reward = environment_factory(env), EpisodeReward("rlvr_cross")
    row = _row(record)
    trainer = _grpo_trainer(tiny_dir, tool_tokenizer, tmp_path, [row], env.spec.max_turns, reward_funcs=[reward],
                            environment_factory=cls)
    monkeypatch.setattr(trainer, "_generate_single_turn", scripted)  # the one call into the model
    out = trainer._generate_and_score_completions([dict(row), dict(row)])
    expected = record["expected"]
    answers = _answers(expected["messages"])
    for i, instance in enumerate(trainer.environments):
        verdict = reward.last_verdicts[i]
        assert instance.verdict is verdict and verdict.reward == expected["reward"]
        history = _messages(instance.env.messages)
        if record["kind"] == "max_turns":
            # TRL ends its tool loop at max_tool_calling_iterations (max_turns - 1, as `rlvr train` sets it) and
            # hands the last completion over with its tool call parsed out: rlvr's env never runs that call; the
            # paths that own the loop run it and truncate at max_turns. Either way an episode cut on a call has
            # no final answer (ToolEnv.final_response), so the verdict is the same: no_answer (the MCP episode's
            # state check scores the repository the calls left: incorrect, no commit made)
            cut = "incorrect" if record["env_id"].startswith("mcp/") else "no_answer"
            assert verdict.status == expected["status"] == cut
            assert _answers(history) == answers[:-1] and history[-1] == {"role": "assistant", "content": ""}
            continue
        assert verdict.status == expected["status"]
        # the env got the same calls and answered them alike (TRL passes native calls: tool messages, no tags)
        assert _answers(history) == answers, history
        sampled = [i for turn in _model_turns(record) for i in turn]
        completion = [int(t) for t, m in zip(out["completion_ids"][i].tolist(), out["tool_mask"][i].tolist(),
                                             strict=True) if m]
        assert completion[: len(sampled)] == sampled  # TRL keeps the sampled ids, masks its tool answers
        if expected["reward"] is None:
            assert float(out["advantages"][i]) == 0.0

