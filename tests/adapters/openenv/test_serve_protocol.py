"""`rlvr serve` speaks OpenEnv: GenericEnvClient (no rlvr code) plays rlvr episodes against it."""

from __future__ import annotations

import json

import httpx
import pytest
from openenv.core.generic_client import GenericEnvClient

from openenv_serving import Serving, oracle_action, wire
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.base import Environment
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.verifiers.testing import ConstantVerifier

pytestmark = pytest.mark.extras


def test_reset_by_task_id_shows_that_tasks_prompt(serve_env: Serving, math_env: Environment) -> None:
    task = math_env.tasks[2]
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        result = client.reset(task_id=task.id)
        assert result.observation["messages"] == [m.to_openai() for m in task.prompt]
        assert result.observation["task_id"] == task.id and result.done is False and result.reward is None
        assert result.observation["verdict"] is None


def test_the_reference_answer_scores_1_with_a_correct_verdict(serve_env: Serving, math_env: Environment) -> None:
    task = math_env.tasks[1]
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=task.id)
        result = client.step(oracle_action(math_env, task))
        assert result.done is True and result.reward == 1.0
        assert result.observation["verdict"]["status"] == "correct"
        assert result.metadata is not None and result.metadata["status"] == "correct"


def test_a_wrong_answer_is_incorrect(serve_env: Serving, math_env: Environment) -> None:
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=math_env.tasks[0].id)
        result = client.step({"content": "The answer is \\boxed{-987654321}."})
        assert result.done is True and result.reward == 0.0
        assert result.observation["verdict"]["status"] == "incorrect"


@pytest.mark.parametrize("answer", ["The answer is \\boxed{-987654321}.", "no idea"], ids=["incorrect", "no_answer"])
def test_a_failed_episodes_verdict_never_quotes_the_reference(serve_env: Serving, math_env: Environment,
                                                              answer: str) -> None:
    task = math_env.tasks[0]  # else one wasted episode per task harvests every answer for the next ones
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=task.id)
        result = client.step({"content": answer})
        assert result.done is True and result.observation["verdict"]["status"] in ("incorrect", "no_answer")
        shown = {**result.observation, "verdict": {k: v for k, v in result.observation["verdict"].items()
                                                   if k != "elapsed_s"}}  # digits of a float are no quote
        assert str(task.reference) not in json.dumps(shown)


def test_a_broken_grader_is_reward_none_and_an_error_verdict(serve_env: Serving) -> None:
    task = Task(id="t0", prompt=(Message(role="user", content="2+2?"),), reference="4")
    env = SingleTurnEnv([task], ConstantVerifier("error", None), EnvSpec(id="test/broken-v1"))
    with serve_env(env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id="t0")
        result = client.step({"content": "4"})
        assert result.done is True and result.reward is None
        assert result.observation["verdict"]["status"] == "error"


def test_a_step_after_done_is_refused_and_adds_no_reward(serve_env: Serving, math_env: Environment) -> None:
    task = math_env.tasks[0]
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=task.id)
        assert client.step(oracle_action(math_env, task)).reward == 1.0
        with pytest.raises(Exception, match="the episode is over"):
            client.step(oracle_action(math_env, task))
        assert client.reset(task_id=task.id).observation["task_id"] == task.id  # the session goes on


def test_client_metadata_does_not_change_scoring(serve_env: Serving, math_env: Environment) -> None:
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=math_env.tasks[0].id)
        result = client.step({"content": "no idea", "metadata": {"reward": 1.0, "status": "correct",
                                                                  "reference": "no idea"}})
        assert result.reward == 0.0 and result.observation["verdict"]["status"] != "correct"


def test_reset_by_split_and_index_and_unknown_task_id(serve_env: Serving, math_env: Environment) -> None:
    with serve_env(math_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        assert client.reset(split="default", index=3).observation["task_id"] == math_env.tasks[3].id
        with pytest.raises(Exception, match="unknown task_id 'nope'"):
            client.reset(task_id="nope")
        seeded = [client.reset(seed=7).observation["task_id"] for _ in range(2)]
        assert seeded[0] == seeded[1]


def test_task_api_lists_prompts_and_never_references(serve_env: Serving, math_env: Environment) -> None:
    with serve_env(math_env) as (url, host):
        name = httpx.get(f"{url}/list_environments").json()
        assert name == [host.name] == ["math--reasoning-gym-v1"]
        assert httpx.get(f"{url}/{host.name}/splits").json() == [{"name": "default", "type": "validation"}]
        tasks = httpx.post(f"{url}/{host.name}/tasks", json={"split": "default"}).json()["tasks"]
        one = httpx.post(f"{url}/{host.name}/task", json={"split": "default", "index": 1}).json()["task"]
        some = httpx.post(f"{url}/{host.name}/task_range", json={"split": "default", "start": 1, "stop": 3}).json()
        count = httpx.post(f"{url}/{host.name}/num_tasks", json={"split": "default"}).json()["num_tasks"]
    assert count == len(tasks) == len(math_env.tasks) and one == tasks[1] and some["tasks"] == tasks[1:3]
    assert [t["id"] for t in tasks] == [t.id for t in math_env.tasks]
    text = json.dumps(tasks)
    for task in math_env.tasks:
        assert set(tasks[0]) == {"id", "index", "prompt"}
        assert f'"{task.reference}"' not in text and "reference" not in text


def test_schema_names_the_env_and_a_tool_envs_tools(serve_env: Serving, math_env: Environment,
                                                     tool_env: Environment) -> None:
    with serve_env(math_env) as (url, _):
        plain = httpx.get(f"{url}/schema").json()["action"]
    with serve_env(tool_env) as (url, _):
        action = httpx.get(f"{url}/schema").json()["action"]
    assert plain["x-rlvr-env"] == "math/reasoning-gym-v1" and "tools" not in plain
    assert action["x-rlvr-env"] == "math/reasoning-gym-tool-v1"
    assert action["tools"] == [dict(t) for t in tool_env.spec.tools] and action["tools"]
    assert (action["x-rlvr-max-turns"], action["x-rlvr-reward-range"]) == (tool_env.spec.max_turns,
                                                                         list(tool_env.spec.reward_range))


def test_a_tool_call_is_answered_with_a_tool_message(serve_env: Serving, tool_env: Environment) -> None:
    task = tool_env.tasks[0]
    actions = tool_env.reference_actions(task)
    assert actions is not None and actions[0].tool_calls
    rewards = []
    with serve_env(tool_env) as (url, _), GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=task.id)
        first = client.step(wire(actions[0]))
        assert first.done is False
        tool_msgs = first.observation["messages"]
        assert tool_msgs and tool_msgs[0]["role"] == "tool"
        assert tool_msgs[0]["tool_call_id"] == actions[0].tool_calls[0].id
        rewards.append(first.reward)
        for action in actions[1:]:
            result = client.step(wire(action))
            rewards.append(result.reward)
    assert result.done is True and result.observation["verdict"]["status"] == "correct"
    assert sum(r or 0.0 for r in rewards) == pytest.approx(result.observation["verdict"]["reward"])
