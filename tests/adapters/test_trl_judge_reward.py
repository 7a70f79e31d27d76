"""LLM-judge rewards through TRL 1.16: RULER sees each prompt's `num_generations` completions in one call.

The judge is the scripted OpenAI-compatible server on loopback (tests/judge_http.py), the trainer
TRL's real GRPOTrainer (CPU, the tiny Llama built from SmolLM2's tokenizer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.trl
trl = pytest.importorskip("trl")

from judge_http import JudgeServer, Reply, ids_in, ruler_reply, serve  # noqa: E402
from rlvr.adapters.trl import VerifierReward, to_dataset  # noqa: E402
from rlvr.core.types import EnvSpec, Message, Task  # noqa: E402
from rlvr.environments.single_turn import SingleTurnEnv  # noqa: E402
from rlvr.verifiers.judge import JudgeVerifier, RulerVerifier  # noqa: E402

TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    yield from serve()


def _env(verifier: Any, n: int = 2) -> SingleTurnEnv:
    tasks = [Task(id=f"t{i}", prompt=(Message(role="user", content=f"Name a colour, number {i}."),), reference=None)
             for i in range(n)]
    return SingleTurnEnv(tasks, verifier, EnvSpec(id="test/judge-v1"))


def _grpo_call(reward: VerifierReward, dataset: Any, texts: list[str], num_generations: int) -> list[float | None]:
    rows = [dataset[i] for i in range(len(dataset))]
    inputs = [row for row in rows for _ in range(num_generations)]  # RepeatSampler repeats each prompt
    return reward(prompts=[r["prompt"] for r in inputs], completions=[[{"role": "assistant", "content": t}]
                                                                      for t in texts],
                  **{k: [r[k] for r in inputs] for k in inputs[0] if k != "prompt"})


def _by_length(body: dict[str, Any]) -> Reply:
    return ruler_reply(body, lambda tid, text: min(1.0, len(text) / 100))


def test_ruler_reward_judges_each_prompt_group_in_one_call(judge_server: JudgeServer) -> None:
    judge_server.reply = _by_length
    env = _env(RulerVerifier(base_url=judge_server.url, model="m"))
    reward = VerifierReward(env)
    texts = ["red", "blue!", "green.", "a" * 50, "teal", "b" * 30]  # 2 prompts x 3 generations
    rewards = _grpo_call(reward, to_dataset(env), texts, 3)
    assert len(judge_server.requests) == 2 and all(len(ids_in(b)) == 3 for b in judge_server.requests)
    goals = sorted(re.search(r"number (\d)", b["messages"][1]["content"]).group(1)  # type: ignore[union-attr]
                   for b in judge_server.requests)
    assert goals == ["0", "1"]
    assert rewards == [min(1.0, len(text) / 100) for text in texts]


def test_judge_failure_is_masked_in_trl(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply('{"scores": []}')
    env = _env(RulerVerifier(base_url=judge_server.url, model="m"), n=1)
    rewards = _grpo_call(VerifierReward(env), to_dataset(env), ["red", "blue"], 2)
    assert rewards == [None, None]  # TRL turns None into NaN and masks it; never a 0


def test_pointwise_judge_reward_gets_the_prompt(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply('{"reasoning": "ok", "score": 0.75}')
    env = _env(JudgeVerifier(base_url=judge_server.url, model="m"), n=1)
    assert _grpo_call(VerifierReward(env), to_dataset(env), ["red", "blue"], 2) == [0.75, 0.75]
    assert all("Name a colour, number 0." in b["messages"][1]["content"] for b in judge_server.requests)


@pytest.mark.slow
@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_two_step_grpo_run_with_ruler_reward(judge_server: JudgeServer, tiny_dir: Path, tmp_path: Path) -> None:
    from rlvr.runners.train.grpo import build_grpo_config

    judge_server.reply = _by_length
    env = _env(RulerVerifier(base_url=judge_server.url, model="m"), n=4)
    reward = VerifierReward(env, name="ruler")
    args = build_grpo_config(tmp_path, 2, {"num_generations": 2, "per_device_train_batch_size": 4,
                                           "max_completion_length": 8})
    trainer = trl.GRPOTrainer(model=str(tiny_dir), reward_funcs=[reward], args=args, train_dataset=to_dataset(env))
    trainer.train()
    assert trainer.state.global_step == 2 and reward.calls == 2
    # each step: 4 completions = 2 prompts x 2 generations, judged as 2 groups of 2 (fewer if texts repeat)
    assert 2 <= len(judge_server.requests) <= 4 and all(len(ids_in(b)) <= 2 for b in judge_server.requests)
    assert all(v.status in ("correct", "incorrect", "no_answer") for v in reward.last_verdicts)
    logged = [h for h in trainer.state.log_history if "rewards/ruler/mean" in h]
    assert len(logged) == 2 and all("rlvr/ruler/error" in h for h in logged)
    assert all(json.loads(v.detail)["group_size"] == 2 for v in reward.last_verdicts if v.status != "no_answer")
