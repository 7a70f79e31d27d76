"""MCPToolEnv against a real MCP server (written with the SDK) that hangs, crashes, floods, lies and escapes.

Each misbehaviour ends as the issue asks: the call gets an error answer or the episode an `error`
verdict (reward None, masked), within the deadline; the server's processes are reaped; nothing it
does reaches outside the sandbox.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_fixtures import misbehaving

from rlvr.core.errors import BackendError, ConfigError
from rlvr.core.types import Message, StepResult, Task
from rlvr.environments.mcp import MCPToolEnv, StdioServer
from rlvr.environments.mcp.connection import STDERR_TAIL_BYTES
from rlvr.environments.multi_turn import tool_call_message
from rlvr.rollout.driver import run_episode
from rlvr.rollout.policies import OraclePolicy
from rlvr.verifiers.math import MathVerifier

pytestmark = pytest.mark.extras

TASK = Task(id="answer-42", prompt=(Message(role="user", content="Say 42."),), reference="42")


@pytest.fixture(scope="module")
def env() -> Iterator[MCPToolEnv]:
    built = MCPToolEnv([TASK], MathVerifier(), misbehaving(), call_timeout_s=3.0)
    yield built
    built.close()


def call(name: str, **arguments: object) -> Message:
    return tool_call_message(name, arguments)


def play(env: MCPToolEnv, *actions: Message | str) -> tuple[MCPToolEnv, list[StepResult]]:
    """Play `actions` in a fresh episode copy until the episode ends."""
    episode = env.episode_copy()
    episode.reset_sync(TASK)
    results = []
    for action in actions:
        results.append(episode.step_sync(action))
        if results[-1].terminated or results[-1].truncated:
            break
    return episode, results


def markers(text: str) -> list[str]:
    """Command lines of live processes containing `text` (this test process excluded)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state not in ("Z", "X"):
            found.append(f"{pid}: {cmdline[:120]}")
    return found


def test_the_listed_tools_are_the_policys_openai_schemas(env: MCPToolEnv) -> None:
    names = [t["function"]["name"] for t in env.spec.tools]
    assert names == ["echo", "hang", "crash", "flood_stderr", "huge", "malformed", "mutate", "escape", "spawn"]
    echo = env.spec.tools[0]
    assert echo["type"] == "function"
    assert echo["function"]["parameters"]["required"] == ["text"]


def test_a_hanging_call_times_out_as_an_answer_and_the_episode_goes_on(env: MCPToolEnv) -> None:
    start = time.monotonic()
    _, (hang, echo, final) = play(env, call("hang", seconds=600), call("echo", text="still here"), "42")
    assert time.monotonic() - start < 60
    assert hang.messages[0].content.startswith("Error: tool 'hang' timed out after")
    assert hang.info["components"]["tool_errors"] == 1.0
    assert echo.messages[0].content == "still here"
    assert final.verdict is not None and final.verdict.status == "correct"


def test_bad_arguments_and_unknown_tools_are_answered_not_sent(env: MCPToolEnv) -> None:
    _, (typo, unknown, final) = play(env, call("echo", text=5), call("rm_rf"), "42")
    assert typo.messages[0].content == "Error: invalid arguments for tool 'echo': text: 5 is not of type 'string'"
    assert unknown.messages[0].content.startswith("Error: unknown tool 'rm_rf'; available tools: echo, hang")
    assert final.verdict is not None and final.verdict.status == "correct"


@pytest.mark.parametrize(("action", "why"), [
    (call("crash"), "the server exited (exit status 3)"),
    (call("huge", mb=8), "a message over 4194304 bytes"),
    (call("malformed"), "a line that is not a JSON-RPC message"),
])
def test_a_broken_server_ends_the_episode_with_a_masked_error(env: MCPToolEnv, action: Message, why: str) -> None:
    start = time.monotonic()
    _, results = play(env, action, "42")
    assert time.monotonic() - start < 60
    (broken,) = results  # the failure ended the episode: the final answer is never scored
    assert broken.terminated and broken.info["masked"]
    assert why in broken.messages[0].content and broken.messages[0].content.startswith("Error: the tool server failed")
    assert broken.verdict is not None and broken.verdict.status == "error" and broken.verdict.reward is None
    assert why in broken.verdict.detail


def test_a_stderr_flood_neither_blocks_the_server_nor_fills_memory(env: MCPToolEnv) -> None:
    episode, (flood, echo) = play(env, call("flood_stderr", mb=64), call("echo", text="after"))
    assert flood.messages[0].content == "flooded"
    assert echo.messages[0].content == "after"
    assert episode.connection is not None
    assert episode.connection.stderr_tail == "e" * STDERR_TAIL_BYTES  # 64 MiB read, 8 KiB kept
    final = episode.step_sync("42")
    assert final.verdict is not None and final.verdict.status == "correct"


def test_a_tool_list_changed_mid_episode_is_an_error_verdict(env: MCPToolEnv) -> None:
    _, (mutate, after) = play(env, call("mutate"), call("echo", text="x"), "42")
    assert mutate.messages[0].content == "mutated"
    assert after.messages[0].content == "Error: the server changed its tool list mid-episode"
    assert after.verdict is not None and after.verdict.status == "error" and after.info["masked"]


def test_invalid_tool_schemas_are_refused_at_build_naming_the_tool() -> None:
    with pytest.raises(ConfigError, match=r"'bad': inputSchema is not a valid JSON Schema.*exclude_tools"):
        MCPToolEnv([TASK], MathVerifier(), misbehaving("--bad-schema"))
    built = MCPToolEnv([TASK], MathVerifier(), misbehaving("--bad-schema"), exclude_tools=("bad",))
    try:
        assert "bad" not in [t["function"]["name"] for t in built.spec.tools]
    finally:
        built.close()


def test_a_server_that_does_not_start_fails_the_build_and_masks_episodes(env: MCPToolEnv) -> None:
    dead = StdioServer(command=("{python}", "-c", "import sys; print('no MCP here', file=sys.stderr); sys.exit(5)"))
    with pytest.raises(BackendError, match="no MCP here"):
        MCPToolEnv([TASK], MathVerifier(), dead)
    broken_task = TASK.model_copy(update={"id": "broken"})
    mixed = MCPToolEnv([TASK, broken_task], MathVerifier(),
                       lambda task: dead if task.id == "broken" else misbehaving(), connect_timeout_s=30)
    try:
        trajectory = __import__("asyncio").run(run_episode(mixed.episode_copy(), broken_task, OraclePolicy()))
    finally:
        mixed.close()
    assert trajectory.verdict is not None and trajectory.verdict.status == "error" and trajectory.error
    assert "exit status 5" in trajectory.verdict.detail


def test_nothing_the_server_does_reaches_outside_the_sandbox(env: MCPToolEnv) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    marker = Path("/tmp/rlvr-mcp-escape-marker")
    marker.unlink(missing_ok=True)
    try:
        _, (escape, _final) = play(env, call("escape", port=listener.getsockname()[1]), "42")
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    seen = __import__("json").loads(escape.messages[0].content)
    assert seen["network"].startswith("refused")
    assert seen["/root/rlvr-mcp-escape-marker"].startswith("refused")
    assert seen["/etc/rlvr-mcp-escape-marker"].startswith("refused")
    assert not marker.exists()  # the sandbox's /tmp is its own
    if os.geteuid() == 0:
        assert seen["uid"] == 65534


def test_the_servers_processes_are_reaped_when_the_episode_ends(env: MCPToolEnv) -> None:
    _, (spawn, final) = play(env, call("spawn"), "42")
    assert spawn.messages[0].content.isdigit()
    assert final.verdict is not None and final.verdict.status == "correct"
    deadline = time.monotonic() + 15
    while markers("rlvr-mcp-orphan-marker") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not markers("rlvr-mcp-orphan-marker")


DRIVER = textwrap.dedent("""
    import asyncio, sys, time
    sys.path.insert(0, {tests!r})
    from mcp_fixtures import misbehaving
    from rlvr.environments.mcp.connection import MCPConnection

    async def main():
        connection = await MCPConnection(misbehaving()).open()
        print((await connection.call("spawn", {{}}, 30))[0], flush=True)
        print("ready", flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
""")


def test_no_orphan_survives_a_kill_9_of_the_driver(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(tests=str(Path(__file__).parent)))
    driver = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        child = driver.stdout.readline().strip()
        assert driver.stdout.readline().strip() == "ready", child
        assert markers("rlvr-mcp-orphan-marker")  # the server's own child is running
    finally:
        driver.kill()  # SIGKILL: no cleanup code of the driver runs
        driver.wait()
        if driver.stdout is not None:
            driver.stdout.close()
    deadline = time.monotonic() + 20
    while (markers("rlvr-mcp-orphan-marker") or markers(str(script))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not markers("rlvr-mcp-orphan-marker")


def test_closing_the_env_stops_the_servers_of_abandoned_episodes() -> None:
    built = MCPToolEnv([TASK], MathVerifier(), misbehaving(), call_timeout_s=10.0)
    try:
        episode = built.episode_copy()
        episode.reset_sync(TASK)
        assert episode.step_sync(call("spawn")).messages[0].content.isdigit()  # then the policy fails: no final
        assert markers("rlvr-mcp-orphan-marker")
    finally:
        built.close()
    deadline = time.monotonic() + 15
    while markers("rlvr-mcp-orphan-marker") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not markers("rlvr-mcp-orphan-marker")
