"""`rlvr serve` of a tool env over OpenEnv's `/mcp`: OpenEnv's MCPToolClient plays it; `openenv validate` passes.

`tools/list` is the env's OpenAI tool schemas as MCP tools plus `submit_answer`; `tools/call` steps that
session's episode (a native tool call; `submit_answer` the final answer), to the reward the same
actions earn in-process.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from openenv.core.mcp_client import MCPToolClient

import rlvr
from openenv_serving import Serving, wait_for
from rlvr.adapters.openenv.server import FINAL_ANSWER_TOOL
from rlvr.core.types import Message, Task
from rlvr.environments.base import Environment
from rlvr.rollout.driver import EpisodeRun

pytestmark = pytest.mark.extras


async def _in_process(env: Environment, task: Task, actions: list[Message]) -> tuple[str, list[float | None]]:
    run = EpisodeRun(env.episode_copy(), task)
    try:
        await run.reset()
        for message in actions:
            await run.act(message)
        assert run.done and run.verdict is not None
        return run.verdict.status, list(run.rewards)
    finally:
        run.env.close_episode()


async def _over_mcp(url: str, task: Task, actions: list[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    """Play `actions` through MCPToolClient: each tool call a `tools/call`, the final answer `submit_answer`."""
    async with MCPToolClient(base_url=url) as client:
        await client.reset(task_id=task.id)
        names = [t.name for t in await client.list_tools()]
        results = []
        for message in actions:
            for call in message.tool_calls or ():
                results.append(await client.call_tool(call.name, **json.loads(call.arguments)))
            if not message.tool_calls:
                results.append(await client.call_tool(FINAL_ANSWER_TOOL, answer=message.content))
        return names, [r["structuredContent"] for r in results]


def _play_both(url: str, env: Environment, task: Task, actions: list[Message]) -> None:
    status, rewards = asyncio.run(_in_process(env, task, actions))
    names, shown = asyncio.run(_over_mcp(url, task, actions))
    assert names == [t["function"]["name"] for t in env.spec.tools] + [FINAL_ANSWER_TOOL]
    assert [s["done"] for s in shown] == [False] * (len(shown) - 1) + [True]
    assert shown[-1]["verdict"]["status"] == status
    assert [s["reward"] for s in shown] == rewards  # the same per-step rewards as the in-process episode


def test_mcp_tool_client_lists_the_envs_tools_as_mcp_tools(serve_env: Serving, tool_env: Environment) -> None:
    async def listed(url: str) -> list[Any]:
        async with MCPToolClient(base_url=url) as client:
            return list(await client.list_tools())

    with serve_env(tool_env) as (url, _):
        tools = asyncio.run(listed(url))
        stateless = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "tools/list", "id": 1}, timeout=10)
    (schema,) = tool_env.spec.tools
    assert [t.name for t in tools] == [schema["function"]["name"], FINAL_ANSWER_TOOL]
    assert tools[0].input_schema == schema["function"]["parameters"]
    assert tools[0].description == schema["function"]["description"]
    assert tools[1].input_schema["required"] == ["answer"]
    assert [t["name"] for t in stateless.json()["result"]["tools"]] == [t.name for t in tools]


def test_mcp_tool_client_plays_the_oracle_and_a_wrong_answer_to_the_in_process_rewards(
        serve_env: Serving, tool_env: Environment) -> None:
    task = tool_env.tasks[0]
    oracle = tool_env.reference_actions(task)
    assert oracle is not None and oracle[0].tool_calls
    wrong = [oracle[0], Message(role="assistant", content="-987654")]
    with serve_env(tool_env) as (url, host):
        _play_both(url, tool_env, task, oracle)
        _play_both(url, tool_env, task, wrong)
        wait_for(lambda: not host.sessions(), 5, "the MCP sessions to close")
    status, rewards = asyncio.run(_in_process(tool_env, task, oracle))
    assert status == "correct" and rewards[-1] == 1.0  # the comparison above compared a real win


def test_a_tools_call_with_no_episode_or_after_the_end_is_an_error_not_a_step(serve_env: Serving,
                                                                             tool_env: Environment) -> None:
    task = tool_env.tasks[1]

    async def main(url: str) -> None:
        async with MCPToolClient(base_url=url) as client:
            with pytest.raises(RuntimeError, match="no episode"):
                await client.call_tool(FINAL_ANSWER_TOOL, answer="1")
            await client.reset(task_id=task.id)
            with pytest.raises(RuntimeError, match=FINAL_ANSWER_TOOL):
                await client.call_tool(FINAL_ANSWER_TOOL, text="1")  # not its argument: no turn spent
            ended = await client.call_tool(FINAL_ANSWER_TOOL, answer="-987654")
            assert ended["structuredContent"]["verdict"]["status"] == "incorrect"
            with pytest.raises(RuntimeError, match="episode is over"):
                await client.call_tool(FINAL_ANSWER_TOOL, answer=str(task.reference))

    with serve_env(tool_env) as (url, _):
        asyncio.run(main(url))


def test_mcp_git_v1_served_plays_to_the_in_process_verdict(serve_env: Serving) -> None:
    env = rlvr.make("mcp/git-v1", size=2)
    try:
        with serve_env(env) as (url, _):
            for task in env.tasks:
                actions = env.reference_actions(task)
                assert actions is not None
                _play_both(url, env, task, actions)
    finally:
        env.close()


def test_openenv_validate_passes_and_its_mcp_check_is_true(serve_env: Serving, tool_env: Environment) -> None:
    openenv_cli = Path(sys.executable).with_name("openenv")
    with serve_env(tool_env) as (url, _):
        done = subprocess.run([str(openenv_cli), "validate", "--url", url, "--json"], capture_output=True,
                              text=True, timeout=120, check=False)
        listed = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "tools/list", "id": 1}, timeout=10)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], done.stdout + done.stderr
    criteria = {c["id"]: c for c in report["criteria"]}
    assert criteria["mcp_endpoint"]["passed"]
    assert listed.json()["result"]["tools"]  # and the endpoint it checked serves the env's tools
