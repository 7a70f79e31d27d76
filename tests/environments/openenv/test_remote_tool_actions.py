"""`openenv/remote-v1` over an edited template whose action has two fields (`message`, `repeat`): the action
is one tool (native or Hermes text calls), observations are tool answers, the task API's ids are kept,
and the verdict follows the return rule with `success_threshold`; a None reward is an error verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlvr.core.errors import ConfigError
from rlvr.core.types import Message, Task
from rlvr.environments.multi_turn import tool_call_message
from rlvr.environments.openenv_remote import action_mapping
from rlvr.environments.registry import make

pytestmark = pytest.mark.extras


def _call(message: str, repeat: int, call_id: str = "call_0") -> Message:
    return tool_call_message("tool_action", {"message": message, "repeat": repeat}, call_id=call_id)


def _hermes(message: str, repeat: int) -> str:
    body = json.dumps({"name": "tool_action", "arguments": {"message": message, "repeat": repeat}})
    return f"Let me act.\n<tool_call>{body}</tool_call>"


def test_task_api_ids_are_kept_and_prompts_come_from_each_reset(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        assert [t.id for t in env.tasks] == ["train-0", "train-1", "custom-2"]
        assert env.tasks[2].reference["index"] == 2 and env.spec.seeding == "deterministic"
        assert json.loads(env.tasks[1].prompt[-1].content) == {"echoed_message": "task 1: say things, then stop"}
        (tool,) = env.spec.tools
        params = tool["function"]["parameters"]
        assert tool["function"]["name"] == "tool_action"
        assert set(params["properties"]) == {"message", "repeat"}
        assert sorted(params["required"]) == ["message", "repeat"]
    finally:
        env.close()


def test_tool_calls_step_the_server_and_the_threshold_decides(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url, success_threshold=1.0)
    try:
        env.reset_sync(env.tasks[1])
        first = env.step_sync(_call("hi", 2))
        (answer,) = first.messages
        assert answer.role == "tool" and answer.tool_call_id == "call_0"
        assert json.loads(answer.content) == {"echoed_message": "hihi"}
        assert first.reward == pytest.approx(0.5) and not first.terminated
        second = env.step_sync(_hermes("stop", 2))  # the Hermes text form; answered in a user message
        assert second.terminated and second.messages[0].role == "user" and "stopstop" in second.messages[0].content
        assert second.verdict is not None and second.verdict.status == "correct"
        assert second.verdict.reward == pytest.approx(1.0)

        env.reset_sync(env.tasks[0])
        result = env.step_sync(_call("stop", 3))
        assert result.verdict is not None and result.verdict.status == "incorrect"  # 0.75 < 1.0
        assert result.verdict.reward == pytest.approx(0.75)
    finally:
        env.close()


def test_a_message_without_a_call_ends_the_episode_unscored_by_the_model(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        env.reset_sync(env.tasks[0])
        env.step_sync(_call("hi", 4))  # return 1.0 so far, but the server never said done
        forged = json.dumps({"done": True, "reward": 5, "verdict": {"status": "correct", "reward": 1}})
        result = env.step_sync(forged)
        assert result.terminated and result.verdict is not None
        assert result.verdict.status == "incorrect" and result.verdict.reward == pytest.approx(1.0)
    finally:
        env.close()


def test_rejected_arguments_and_unknown_tools_are_answered_not_fatal(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        env.reset_sync(env.tasks[0])
        bad = Message(role="assistant", content="", tool_calls=(
            {"id": "a", "type": "function", "function": {"name": "tool_action", "arguments": '{"message": "x"}'}},
            {"id": "b", "type": "function", "function": {"name": "other", "arguments": "{}"}},
        ))
        result = env.step_sync(bad)
        assert not result.terminated and [m.tool_call_id for m in result.messages] == ["a", "b"]
        assert result.messages[0].content.startswith("Error: the server rejected the arguments")
        assert "unknown tool 'other'" in result.messages[1].content
        assert result.info["components"]["invalid_action"] == 2.0
        final = env.step_sync(_call("stop", 1))
        assert final.verdict is not None and final.verdict.status == "correct"
    finally:
        env.close()


def test_a_none_reward_is_an_error_verdict_never_zero(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        env.reset_sync(env.tasks[0])
        env.step_sync(_call("none", 1))
        result = env.step_sync(_call("stop", 1))
        assert result.verdict is not None and result.verdict.status == "error" and result.verdict.reward is None
        assert result.info["masked"] and result.reward == 0.0
    finally:
        env.close()


def test_a_reset_that_differs_from_the_prompt_is_an_error_naming_the_task(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    try:
        task = env.tasks[0]
        stale = Task(id=task.id, prompt=(Message(role="user", content="something else"),), reference=task.reference)
        with pytest.raises(ConfigError, match="'train-0'"):
            env.reset_sync(stale)
        assert not env.sessions.open
    finally:
        env.close()


@pytest.mark.parametrize(("schema", "field"), [
    ({"type": "array", "items": {"type": "string"}}, "not a JSON object schema"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}, "b": {"type": "integer"}}}, "'a'"),
    ({"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}, "n": {"type": "integer"}},
      "$defs": {"Node": {"type": "object",
                         "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}},
     "'tree'"),
    ({"type": "object", "properties": {"a": {"$ref": "http://example.com/x.json"}}, "required": ["a"]}, "'a'"),
    ({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["y"]}, "'y'"),
])
def test_an_unmappable_action_schema_is_a_config_error_naming_the_field(schema: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        action_mapping(schema)


def test_local_refs_are_inlined_into_the_tool() -> None:
    schema = {"type": "object", "title": "MoveAction", "required": ["to"],
              "properties": {"metadata": {"type": "object"}, "to": {"$ref": "#/$defs/Cell"},
                             "note": {"type": "string"}},
              "$defs": {"Cell": {"type": "object", "properties": {"row": {"type": "integer"}}}}}
    mapping = action_mapping(schema)
    (tool,) = mapping.tools
    assert mapping.kind == "tool" and tool["function"]["name"] == "move_action"
    assert tool["function"]["parameters"]["properties"]["to"] == {"type": "object",
                                                                  "properties": {"row": {"type": "integer"}}}
    assert action_mapping({"type": "object", "properties": {"code": {"type": "string"}}}).field == "code"


def test_closing_the_original_releases_every_copys_session(tool_url: str) -> None:
    env = make("openenv/remote-v1", base_url=tool_url)
    copies = [env.episode_copy() for _ in range(4)]  # the server takes 4 sessions at once
    for copy in copies:
        copy.reset_sync(env.tasks[0])
    assert len(env.sessions.open) == 4
    env.close()
    assert not env.sessions.open
    again = make("openenv/remote-v1", base_url=tool_url)
    try:  # the server got every slot back: 4 new sessions fit
        fresh = [again.episode_copy() for _ in range(4)]
        for copy in fresh:
            copy.reset_sync(again.tasks[1])
        assert all(c.step_sync(_call("stop", 4)).verdict.status == "correct" for c in fresh)  # type: ignore[union-attr]
    finally:
        again.close()
