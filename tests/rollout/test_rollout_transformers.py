"""Rollouts with a local transformers policy (tiny random llama + the real SmolLM2 tokenizer).

The policy is token-in: the driver feeds it the interleaved episode ids, so the episode layout is
exact. Re-scoring the whole episode with one forward pass must give back the sampled logprobs at
every masked-in position, which proves that the recorded ids are the ones the model conditioned on
and sampled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from guess_env import GuessEnv
from rlvr.rollout.batch import clone_factory, rollout_sync, token_batch
from rlvr.rollout.policies import Sampling, TransformersPolicy

pytestmark = pytest.mark.trl


@pytest.fixture(scope="module")
def policy(tiny_dir: Path) -> TransformersPolicy:
    return TransformersPolicy(str(tiny_dir), sampling=Sampling(max_tokens=6, temperature=1.0, seed=0))


def _rescore(policy: TransformersPolicy, prompt: list[int], completion: list[int]) -> list[float]:
    import torch

    model: Any = policy._model
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float()
    return torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(completion)[:, None])[:, 0].tolist()


def test_episode_layout_is_token_exact(policy: TransformersPolicy) -> None:
    env = GuessEnv(size=2, max_turns=3)
    trajectories = rollout_sync(clone_factory(env), policy, env.tasks, n=2, concurrency=4, layout="episode")
    for t in trajectories:
        assert t.error is None, t.error
        assert t.info["token_layout"] == "episode" and t.info["turns"] == len(t.rewards)
        assert t.tokens is not None and t.tokens.logprobs is not None
        model_tokens = sum(t.tokens.loss_mask)
        assert 0 < model_tokens <= 6 * t.info["turns"] and 0 in t.tokens.loss_mask  # env turns are in, masked 0
        rescored = _rescore(policy, t.tokens.prompt_ids, t.tokens.completion_ids)
        for lp, again, m in zip(t.tokens.logprobs, rescored, t.tokens.loss_mask, strict=True):
            if m:
                assert lp == pytest.approx(again, abs=2e-3)
            else:
                assert lp == 0.0
        # environment tokens decode to the observations the env sent
        env_text = policy.tokenizer.decode(  # type: ignore[union-attr]
            [i for i, m in zip(t.tokens.completion_ids, t.tokens.loss_mask, strict=True) if not m])
        for message in t.messages[2:]:
            if message.role == "user":
                assert f"<|im_start|>user\n{message.content}<|im_end|>" in env_text
    batch = token_batch(trajectories)
    assert len(batch["env_mask"]) == 4 and batch["env_mask"][0] == trajectories[0].tokens.loss_mask


def test_turn_layout_samples_what_the_model_saw(policy: TransformersPolicy) -> None:
    env = GuessEnv(size=1, max_turns=2)
    [t] = rollout_sync(clone_factory(env), policy, env.tasks, layout="turn")
    assert t.samples is not None and len(t.samples) == len(t.rewards) and t.tokens is None
    for s in t.samples:
        assert s.loss_mask == [1] * len(s.completion_ids)
        assert s.logprobs == pytest.approx(_rescore(policy, s.prompt_ids, s.completion_ids), abs=2e-3)


def test_rlvr_eval_with_a_local_model(tiny_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rlvr.runners.cli import app
    from rlvr.runners.eval import read_trajectories

    out = tmp_path / "eval.jsonl"
    args = ["eval", "--env", "math/reasoning-gym-v1", "-a", "size=2", "-a", "scoring=inline",
            "--model", str(tiny_dir), "-n", "2", "-k", "2", "--max-tokens", "4", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "pass@2" in result.output and "0 / 4" in result.output
    rows = list(read_trajectories(out))
    assert len(rows) == 4 and all(t.error is None and t.info["token_layout"] == "episode" for t in rows)
    assert all(t.tokens and t.tokens.completion_ids and 0 < len(t.tokens.completion_ids) <= 4 and t.tokens.logprobs
               for t in rows)
