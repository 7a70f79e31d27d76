"""Gymnasium bridges: check_env on views of rlvr envs, and rlvr envs made from text gymnasium envs."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import rlvr
from rlvr.core.errors import ConfigError
from rlvr.core.types import Message
from rlvr.environments.gym import GymnasiumEnv, GymTextEnv, UnicodeText, from_gymnasium, render_messages
from rlvr.environments.multi_turn import tool_call_message

INLINE = {"scoring": "inline"}


class GuessNumber(gymnasium.Env[str, str]):
    """A real text game: guess a secret 1..20 number; the answers are 'higher', 'lower' or 'correct'."""

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(self) -> None:
        self.observation_space = spaces.Text(200, min_length=1, charset=string.ascii_letters + string.digits + " .!?")
        self.action_space = spaces.Text(4, min_length=1, charset=string.digits)
        self.secret = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.secret = int(self.np_random.integers(1, 21))
        return f"Guess my number between 1 and 20 {'odd' if self.secret % 2 else 'even'} one.", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        guess = int(action)
        if guess == self.secret:
            return "correct!", 1.0, True, False, {}
        return ("higher" if guess < self.secret else "lower"), 0.0, False, False, {}


class Corridor(gymnasium.Env[int, int]):
    """Walk right from cell 0 to cell 3 (Discrete observations and actions)."""

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(4)
        self.action_space = spaces.Discrete(2)
        self.pos = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.pos = 0
        return self.pos, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        done = self.pos == 3
        return self.pos, (1.0 if done else -0.1), done, False, {}


gymnasium.register("rlvrtest/GuessNumber-v0", entry_point=GuessNumber, max_episode_steps=8)


def _secret(env: GymTextEnv) -> int:
    return int(env.gym_env.unwrapped.secret)  # type: ignore[attr-defined]


def test_check_env_on_a_view_built_from_id() -> None:
    view = GymnasiumEnv("math/reasoning-gym-v1", env_kwargs={"size": 8, **INLINE}, render_mode="ansi")
    check_env(view)  # every check, render and spec.make included
    obs, info = view.reset(seed=5)
    assert obs.startswith("system: ") and "user: " in obs and info["messages"][-1]["role"] == "user"
    assert obs in view.observation_space and info["task_id"].startswith("rg-basic_arithmetic")
    task = view.env.task
    assert task is not None
    obs, reward, terminated, truncated, info = view.step(f"\\boxed{{{task.reference}}}")
    assert (obs, reward, terminated, truncated) == ("", 1.0, True, False)
    assert info["verdict"]["status"] == "correct" and "elapsed_s" not in info["verdict"]
    assert view.render() == render_messages(view.env.messages)
    view.close()
    view.close()


def test_check_env_on_tool_env_view_and_tool_observations() -> None:
    env = rlvr.make("math/reasoning-gym-tool-v1", size=6, **INLINE)
    view = GymnasiumEnv(env, observation="conversation")
    check_env(view, skip_render_check=True)
    view.reset(options={"task_index": 2})
    assert view.env.task is env.tasks[2]
    expression = env.tasks[2].metadata["entry"]["expression"]
    wire = tool_call_message("calculator", {"expression": expression}).to_openai()
    obs, reward, terminated, _, info = view.step(wire)
    assert not terminated and reward == 0.0
    assert info["messages"] == [{"role": "tool", "content": env.tasks[2].reference, "tool_call_id": "call_0",
                                 "name": "calculator"}]
    assert obs.endswith(f"tool (calculator): {env.tasks[2].reference}") and "<tool_call>" in obs
    view.reset(options={"task_id": env.tasks[1].id})
    assert view.env.task is env.tasks[1]
    with pytest.raises(ConfigError, match="task_index"):
        view.reset(options={"task_index": 99})
    with pytest.raises(ConfigError, match="unknown reset options"):
        view.reset(options={"level": 3})
    view.close()


def test_check_env_on_gsm8k_view(gsm8k_path: Path) -> None:
    view = GymnasiumEnv("math/gsm8k-v1", env_kwargs={"path": str(gsm8k_path), "limit": 20, **INLINE})
    check_env(view)
    view.close()


def test_from_gymnasium_text_env_episode() -> None:
    env = from_gymnasium("rlvrtest/GuessNumber-v0", size=5, seed=10, instructions="Reply with a number only.")
    assert env.spec.id == "gym/guessnumber-v0" and env.max_turns == 8 and len(env.tasks) == 5
    task = env.tasks[0]
    assert task.reference == {"seed": 10} and task.prompt[0].role == "system"
    env.reset_sync(task)
    secret = _secret(env)
    low = env.step_sync("1" if secret != 1 else "2")
    assert low.messages[0].content in ("higher", "lower") and low.reward == 0.0
    bad = env.step_sync("my guess is twelve")
    assert bad.messages[0].content.startswith("Invalid action") and bad.info["components"]["invalid_action"] == 1.0
    last = env.step_sync(f"  {secret}\n")
    assert last.terminated and last.messages[0].content == "correct!"
    assert last.verdict is not None and last.verdict.status == "correct" and last.verdict.reward == 1.0
    assert last.verdict.components["return"] == 1.0
    env.close()


def test_from_gymnasium_truncation_by_time_limit() -> None:
    env = from_gymnasium("rlvrtest/GuessNumber-v0", size=2)
    env.reset_sync(env.tasks[1])
    wrong = "1" if _secret(env) != 1 else "2"
    results = [env.step_sync(wrong) for _ in range(8)]
    assert all(not r.terminated for r in results) and results[-1].truncated
    assert results[-1].verdict is not None and results[-1].verdict.status == "incorrect"
    env.close()


def test_round_trip_view_of_wrapped_gym_env_passes_check_env() -> None:
    view = GymnasiumEnv(from_gymnasium("rlvrtest/GuessNumber-v0", size=10))
    check_env(view, skip_render_check=True)
    obs, _ = view.reset(seed=3)
    assert obs.startswith("user: Guess my number")
    view.close()


def test_from_gymnasium_discrete_with_text_mapping() -> None:
    env = from_gymnasium(Corridor(), env_id="gym/corridor-v1", size=3, max_turns=6, actions=["left", "right"],
                         observation_to_text=lambda cell: f"You are in cell {cell} of 0..3.",
                         reward_weights={"invalid_action": -0.5})
    env.reset_sync(seed=0)
    steps = [env.step_sync(text) for text in ("I go left", "hmm", "RIGHT", "right then right", "right")]
    assert [s.messages[0].content for s in steps[:2]] == [
        "You are in cell 0 of 0..3.", "Invalid action: no action named. Valid actions: left, right."]
    assert steps[-1].terminated and steps[-1].verdict is not None and steps[-1].verdict.status == "correct"
    expected = -0.1 * 3 + 1.0 - 0.5  # env rewards of four gym steps, plus the invalid-action penalty
    assert steps[-1].verdict.reward == pytest.approx(expected)
    assert sum(s.reward for s in steps) == pytest.approx(expected)
    env.close()


def test_from_gymnasium_unsupported_configurations() -> None:
    with pytest.raises(ConfigError, match="observation_to_text"):
        from_gymnasium(Corridor(), actions=["left", "right"])
    with pytest.raises(ConfigError, match="needs actions"):
        from_gymnasium(Corridor(), observation_to_text=str)
    with pytest.raises(ConfigError, match="unsupported action space"):
        env = Corridor()
        env.action_space = spaces.Box(0, 1, (2,))  # type: ignore[assignment]
        from_gymnasium(env, observation_to_text=str)
    with pytest.raises(ConfigError, match="gymnasium cannot make"):
        from_gymnasium("rlvrtest/NoSuchEnv-v0")
    with pytest.raises(ConfigError, match="size"):
        from_gymnasium("rlvrtest/GuessNumber-v0", size=0)


def test_view_options_validation() -> None:
    with pytest.raises(ConfigError, match="observation must be"):
        GymnasiumEnv("math/reasoning-gym-v1", observation="all")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="env must be"):
        GymnasiumEnv(3)  # type: ignore[arg-type]
    space = UnicodeText(5)
    assert "héllo" in space and "toolong" not in space and space.sample() in space
    assert render_messages([Message(role="user", content="a"), Message(role="assistant", content="b")]) == \
        "user: a\n\nassistant: b"


def test_rlvr_check_plays_return_scored_envs_by_episode() -> None:
    """A wrapped env cannot score a lone response: `check` plays episodes instead and passes a sound one."""
    from rlvr import check

    env = from_gymnasium("rlvrtest/GuessNumber-v0", size=4, seed=3)
    try:
        report = check(env, n=4)
    finally:
        env.close()
    by_name = {r.name: r for r in report.results}
    assert report.passed, [r for r in report.results if not r.passed]
    assert "reference_correct" not in by_name and by_name["response_scoring"].items == 0
    assert by_name["episode_protocol"].passed and by_name["noop_episode"].items == 4


@pytest.mark.parametrize("threshold", [float("nan"), float("-inf")])
def test_a_success_threshold_that_is_not_finite_is_a_config_error(threshold: float) -> None:
    """NaN would make no episode correct and -inf every episode the env ended: refused when the env is made."""
    with pytest.raises(ConfigError, match="success_threshold must be a finite number"):
        from_gymnasium("rlvrtest/GuessNumber-v0", size=2, success_threshold=threshold)
