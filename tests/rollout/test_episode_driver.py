"""The episode driver: one history (the environment's), budget cuts, misalignment stops, policy errors.

Runs a real tool environment (`math/reasoning-gym-tool-v1`, inline verifier) with the real SmolLM2
tokenizer where tokens are involved, and scripted policies that return fixed ids.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, StepResult, Task
from rlvr.environments.base import Environment, as_message
from rlvr.environments.registry import make
from rlvr.rollout import Episode, EpisodeRun, Generation, TokenBudget, run_episode
from rlvr.verifiers.testing import ConstantVerifier

TASK = Task(id="t0", prompt=(Message(role="user", content="Say something twice."),), reference="1")


class Forgetful(Environment):
    """Ends after two steps and never appends to `self.messages` (a third-party env that keeps no history)."""

    def __init__(self) -> None:
        super().__init__()
        self.spec = EnvSpec(id="test/forgetful-v1", max_turns=2)
        self.verifier = ConstantVerifier()
        self.tasks = [TASK]

    async def step(self, action: Message | str) -> StepResult:
        self.turn += 1
        if self.turn < 2:
            return StepResult(messages=(Message(role="user", content="again"),))
        assert self.task is not None
        verdict = self.verifier.verify(as_message(action).content, self.task.reference)
        return StepResult(reward=verdict.reward or 0.0, terminated=True, verdict=verdict)


class Scripted:
    """A token-in policy that says fixed texts with the ids the tokenizer gives them (plus an end id)."""

    name = "scripted-ids"
    accepts_prompt_ids = True

    def __init__(self, tokenizer: Any, texts: Sequence[str], end: int | None = 2, fail_at: int | None = None) -> None:
        self.tokenizer = tokenizer
        self.texts = list(texts)
        self.end = end
        self.fail_at = fail_at
        self.seen: list[Episode] = []
        self.hints: list[list[int] | None] = []

    async def generate(self, messages: Sequence[Message], *, tools: Any = None, prompt_ids: Any = None,
                       episode: Episode | None = None) -> Generation:
        assert episode is not None
        self.seen.append(episode)
        self.hints.append(list(prompt_ids) if prompt_ids is not None else None)
        if episode.turn == self.fail_at:
            raise RuntimeError("generation server down")
        text = self.texts[episode.turn]
        ids = list(self.tokenizer.encode(text, add_special_tokens=False)) if self.tokenizer is not None else None
        if ids is not None and self.end is not None:
            ids.append(self.end)
        return Generation(message=Message(role="assistant", content=text), completion_ids=ids,
                          prompt_ids=list(prompt_ids) if prompt_ids is not None else None, finish_reason="stop")


@pytest.fixture(scope="module")
def tool_env() -> Any:
    env = make("math/reasoning-gym-tool-v1", task="basic_arithmetic", size=2, scoring="inline")
    yield env
    env.close()


def _calls(n: int) -> list[str]:
    call = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2 + 3"}}\n</tool_call>'
    return [call] * n + ["The answer is \\boxed{5}."]


TRIM = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] | trim + '<|im_end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
"""A ChatML template that trims every message: an assistant turn's trailing newline is rewritten away."""


def _trimming(tok: Any) -> Any:
    """A copy of `tok` with the trimming template."""
    tok2 = type(tok).from_pretrained(tok.name_or_path)
    tok2.chat_template = TRIM
    return tok2


def test_the_environment_keeps_the_only_history() -> None:
    env = Forgetful()
    run = EpisodeRun(env, TASK, tokenizer=None)
    traj = asyncio.run(run.play(Scripted(None, ["one", "two"])))
    assert [m.content for m in env.messages] == ["Say something twice.", "one", "again", "two"]
    assert traj.messages == env.messages and traj.verdict is not None and traj.verdict.status == "correct"


def test_an_environment_that_never_ends_is_an_error_trajectory() -> None:
    class Endless(Forgetful):
        async def step(self, action: Message | str) -> StepResult:
            return StepResult(messages=(Message(role="user", content="more"),))

    traj = asyncio.run(run_episode(Endless(), TASK, Scripted(None, ["x"] * 10), max_steps=3))
    assert traj.error is not None and "did not end the episode after 3" in traj.error
    assert traj.verdict is not None and traj.verdict.status == "error" and traj.reward is None


@pytest.mark.trl
def test_tokens_read_the_environments_history(tool_env: Any, tok: Any) -> None:
    env = tool_env.episode_copy()
    run = EpisodeRun(env, tool_env.tasks[0], tokenizer=tok, layout="episode")
    traj = asyncio.run(run.play(Scripted(tok, _calls(2))))
    assert run.tokens is not None and run.tokens.messages is env.messages
    assert traj.messages == env.messages and [m.role for m in traj.messages].count("assistant") == 3
    assert traj.info["token_layout"] == "episode" and traj.tokens is not None and 0 in traj.tokens.loss_mask


@pytest.mark.trl
def test_budget_cut_scores_the_episode_by_the_environments_rule(tool_env: Any, tok: Any) -> None:
    env = tool_env.episode_copy()
    policy = Scripted(tok, _calls(5))
    run = EpisodeRun(env, tool_env.tasks[0], tokenizer=tok, budget=TokenBudget(60, "completion"))
    traj = asyncio.run(run.play(policy))
    assert run.was_cut and traj.verdict is not None and traj.verdict.status != "error"
    assert run.tokens is not None and len(run.tokens.completion_ids) >= 60
    first = policy.hints[0]
    assert first is not None and len(policy.seen) >= 2
    for episode, hint in zip(policy.seen, policy.hints, strict=True):  # each turn gets what is left of the budget
        assert hint is not None and episode.max_tokens == 60 - (len(hint) - len(first))


@pytest.mark.trl
def test_a_prompt_that_fills_the_budget_is_an_error_verdict(tool_env: Any, tok: Any) -> None:
    run = EpisodeRun(tool_env.episode_copy(), tool_env.tasks[0], tokenizer=tok, budget=TokenBudget(8, "context"))
    traj = asyncio.run(run.play(Scripted(tok, _calls(1))))
    assert traj.verdict is not None and traj.verdict.status == "error" and traj.reward is None
    assert "leaving no room to generate within the token budget of 8" in traj.verdict.detail
    assert traj.info["turns"] == 0


@pytest.mark.trl
def test_stop_on_misalignment_ends_with_an_error_verdict(tool_env: Any, tok: Any) -> None:
    tok2 = _trimming(tok)
    texts = [t + "\n" for t in _calls(2)]  # a trailing newline the trimming template drops
    run = EpisodeRun(tool_env.episode_copy(), tool_env.tasks[0], tokenizer=tok2, stop_on_misalignment=True)
    traj = asyncio.run(run.play(Scripted(tok2, texts)))
    assert traj.verdict is not None and traj.verdict.status == "error"
    assert traj.verdict.detail.startswith("token alignment failed: the chat template renders the assistant turn")
    assert traj.info["turns"] == 1 and traj.info["token_layout"] == "turn"


@pytest.mark.trl
def test_policy_errors_propagate_only_when_asked(tool_env: Any, tok: Any) -> None:
    task = tool_env.tasks[0]
    traj = asyncio.run(EpisodeRun(tool_env.episode_copy(), task, tokenizer=tok).play(Scripted(tok, _calls(2),
                                                                                              fail_at=1)))
    assert traj.error == "RuntimeError: generation server down" and traj.rewards == [0.0]
    with pytest.raises(RuntimeError, match="generation server down"):
        asyncio.run(EpisodeRun(tool_env.episode_copy(), task, tokenizer=tok).play(
            Scripted(tok, _calls(2), fail_at=1), raise_policy_errors=True))


def test_act_refuses_an_ended_episode() -> None:
    run = EpisodeRun(Forgetful(), TASK)
    with pytest.raises(ConfigError, match="call reset"):
        asyncio.run(run.act(Message(role="assistant", content="x")))
    with pytest.raises(ConfigError, match="needs the policy's tokenizer"):
        EpisodeRun(Forgetful(), TASK, budget=TokenBudget(10))


def test_the_episode_layer_imports_no_trainer() -> None:
    import subprocess
    import sys

    code = ("import sys, rlvr.rollout; print(sorted(m for m in ('torch', 'transformers', 'trl', 'vllm', 'verl', "
            "'openrlhf') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the one episode -> training sample rule ----------------------------------------------------------
@pytest.mark.trl
def test_a_lined_up_episode_is_trained_on_as_played(tool_env: Any, tok: Any) -> None:
    run = EpisodeRun(tool_env.episode_copy(), tool_env.tasks[0], tokenizer=tok, stop_on_misalignment=True)
    traj = asyncio.run(run.play(Scripted(tok, _calls(1))))
    sample = run.training_sample()
    assert sample.trajectory is traj and sample.complete and sample.verdict == traj.verdict
    assert sample.verdict.status != "error" and sample.tokens == traj.tokens


@pytest.mark.trl
def test_a_misaligned_episode_is_masked_with_its_tokens_up_to_the_rewrite(tool_env: Any, tok: Any) -> None:
    tok2 = _trimming(tok)
    for stop in (True, False):  # veRL / OpenRLHF stop there; TRL's rollout_func plays on from the messages
        run = EpisodeRun(tool_env.episode_copy(), tool_env.tasks[0], tokenizer=tok2, stop_on_misalignment=stop)
        asyncio.run(run.play(Scripted(tok2, [t + "\n" for t in _calls(2)])))
        sample = run.training_sample()
        assert run.tokens is not None and sample.tokens is not None and not sample.complete
        assert sample.verdict.status == "error" and sample.verdict.reward is None
        assert sample.verdict.detail == f"token alignment failed: {run.tokens.misaligned}"
        assert sample.tokens.prompt_ids == run.tokens.prompt_ids and sample.tokens.loss_mask == run.tokens.loss_mask
    assert sample.trajectory.info["token_layout"] == "turn"


@pytest.mark.trl
def test_a_failed_episode_is_masked(tool_env: Any, tok: Any) -> None:
    run = EpisodeRun(tool_env.episode_copy(), tool_env.tasks[0], tokenizer=tok)
    traj = asyncio.run(run.play(Scripted(tok, _calls(2), fail_at=1)))
    sample = run.training_sample()
    assert traj.error is not None and sample.verdict is traj.verdict and sample.verdict.reward is None
    assert not sample.complete and sample.tokens is not None and sample.tokens.completion_ids


@pytest.mark.trl
def test_an_episode_with_no_sampled_token_is_masked(tool_env: Any, tok: Any) -> None:
    run = EpisodeRun(tool_env.episode_copy(), tool_env.tasks[0], tokenizer=tok)
    asyncio.run(run.reset())
    answer = Message(role="assistant", content="The answer is \\boxed{5}.")
    asyncio.run(run.act(answer, Generation(message=answer, completion_ids=[])))  # a turn that sampled nothing
    sample = run.training_sample()
    assert run.verdict is not None and run.verdict.status != "error"  # the environment's verdict ...
    assert sample.verdict.status == "error" and "no sampled tokens" in sample.verdict.detail  # ... is not trained on
    assert not sample.complete and sample.tokens is not None and sample.tokens.completion_ids == []


def test_an_episode_without_a_verdict_is_masked_and_one_without_tokens_keeps_its_verdict() -> None:
    class Silent(Forgetful):
        async def step(self, action: Message | str) -> StepResult:
            self.turn += 1
            return StepResult(terminated=True)

    run = EpisodeRun(Silent(), TASK)
    asyncio.run(run.play(Scripted(None, ["x"])))
    sample = run.training_sample()
    assert sample.tokens is None and not sample.complete
    assert sample.verdict.status == "error" and "without a verdict" in sample.verdict.detail
    run = EpisodeRun(Forgetful(), TASK, tokenizer=None)  # no tokens recorded (TRL's environment_factory path)
    asyncio.run(run.play(Scripted(None, ["one", "two"])))
    assert run.training_sample().verdict.status == "correct"


def test_a_running_episode_has_no_training_sample() -> None:
    run = EpisodeRun(Forgetful(), TASK)
    asyncio.run(run.reset())
    with pytest.raises(ConfigError, match="needs a finished episode"):
        run.training_sample()
    asyncio.run(run.act(Message(role="assistant", content="one")))
    asyncio.run(run.act(Message(role="assistant", content="two")))  # the environment ends it: act/cut/end suffice
    assert run.training_sample().verdict.status == "correct"


def test_the_environment_draws_the_task_when_none_is_given() -> None:
    env = Forgetful()
    run = EpisodeRun(env, None)
    assert run.task_id == ""
    asyncio.run(run.reset(seed=3))
    assert run.task is TASK and run.reset_info["task_id"] == "t0"


@pytest.mark.trl
def test_batch_rollouts_take_the_token_budget(tool_env: Any, tok: Any) -> None:
    from rlvr.rollout.batch import clone_factory, rollout_samples

    policy = Scripted(tok, _calls(5))
    samples = asyncio.run(rollout_samples(clone_factory(tool_env), policy, tool_env.tasks[:1], n=2, seed=None,
                                          budget=TokenBudget(60, "completion")))
    assert len(samples) == 2 and all(s.complete and s.verdict.status != "error" for s in samples)
    assert all(s.tokens is not None and len(s.tokens.completion_ids) >= 60 for s in samples)
    assert all(e.max_tokens is not None and e.max_tokens <= 60 for e in policy.seen)
