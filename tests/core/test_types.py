import json

import pytest
from pydantic import ValidationError

from rlvr.core import EnvSpec, Message, StepResult, Task, ToolCall, Trajectory, Verdict
from rlvr.core.errors import ConfigError, DataError, MissingExtraError, RlvrError
from rlvr.core.types import TokenSample


def test_verdict_reward_none_only_for_error():
    assert Verdict.error("boom").reward is None
    assert Verdict(status="incorrect", reward=0.0).reward == 0.0
    with pytest.raises(ValidationError, match="status='error' must have reward=None"):
        Verdict(status="error", reward=0.0)
    with pytest.raises(ValidationError, match="only allowed with status='error'"):
        Verdict(status="correct", reward=None)
    with pytest.raises(ValidationError, match="finite"):
        Verdict(status="correct", reward=float("nan"))


def test_verdict_is_frozen_and_strict():
    v = Verdict(status="correct", reward=1.0)
    with pytest.raises(ValidationError):
        v.reward = 0.0  # type: ignore[misc]
    with pytest.raises(ValidationError, match="rewrd"):
        Verdict(status="correct", reward=1.0, rewrd=2)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Verdict(status="right", reward=1.0)  # type: ignore[arg-type]


def test_verdict_is_hashable_and_round_trips():
    v = Verdict(status="timeout", reward=0.0, detail="slow", elapsed_s=1.5)
    assert Verdict.model_validate_json(v.model_dump_json()) == v
    assert Verdict.timeout("slow", elapsed_s=1.5) == v


def test_task_is_json_serialisable():
    task = Task(id="t1", prompt=(Message(role="user", content="1+1?"),), reference={"answer": "2"})
    data = json.loads(task.model_dump_json())
    assert data["prompt"][0] == {
        "role": "user", "content": "1+1?", "tool_calls": None, "tool_call_id": None, "name": None
    }
    assert Task.model_validate(data) == task
    with pytest.raises(ValidationError, match="at least one message"):
        Task(id="t2", prompt=(), reference="2")


def test_message_openai_format():
    m = Message(role="assistant", content="", tool_calls=(ToolCall(id="c1", name="calc", arguments='{"x": 1}'),))
    assert m.to_openai() == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "calc", "arguments": '{"x": 1}'}}],
    }
    with pytest.raises(ValidationError):
        Message(role="robot", content="hi")  # type: ignore[arg-type]


def test_trajectory_token_lengths_checked():
    t = Trajectory(
        task_id="t", messages=[Message(role="user", content="q")],
        tokens=TokenSample(prompt_ids=[7], completion_ids=[1, 2, 3], loss_mask=[1, 1, 0]),
    )
    assert t.tokens is not None and t.tokens.loss_mask == [1, 1, 0]
    with pytest.raises(ValidationError, match="loss_mask has length 2 but completion_ids has length 3"):
        Trajectory(task_id="t", messages=[], tokens={"prompt_ids": [], "completion_ids": [1, 2, 3],
                                                     "loss_mask": [1, 1]})
    with pytest.raises(ValidationError, match="logprobs"):
        Trajectory(task_id="t", messages=[], tokens={"prompt_ids": [], "completion_ids": [1], "loss_mask": [1],
                                                     "logprobs": [-0.1, -0.2]})


def test_trajectory_reward_from_verdict():
    t = Trajectory(task_id="t", messages=[], rewards=[0.1, 0.2])
    assert t.reward == pytest.approx(0.3)
    t.verdict = Verdict.error("grader broke")
    assert t.reward is None


def test_env_spec_validates_id_and_range():
    spec = EnvSpec(id="math/gsm8k-v1", reward_range=(0.0, 1.0))
    assert spec.max_turns == 1
    with pytest.raises(ValidationError, match="family/name-vN"):
        EnvSpec(id="gsm8k")
    with pytest.raises(ValidationError, match="low > high"):
        EnvSpec(id="math/x-v1", reward_range=(1.0, 0.0))


def test_step_result_defaults():
    r = StepResult(terminated=True, reward=1.0, verdict=Verdict(status="correct", reward=1.0))
    assert r.messages == () and not r.truncated


def test_error_tree():
    assert issubclass(ConfigError, RlvrError) and issubclass(ConfigError, ValueError)
    assert issubclass(DataError, RlvrError)
    err = MissingExtraError("trl", "trl")
    assert isinstance(err, ImportError) and "pip install 'rlvr[trl]'" in str(err)
