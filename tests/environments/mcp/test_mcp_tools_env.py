"""`rlvr.make("mcp/tools-v1", server=..., tasks=..., verifier=...)`: a JSONL task file, a named verifier, a
stdio command or a streamable-HTTP URL; `rlvr check` with the rows' reference actions."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_fixtures import MISBEHAVING

from rlvr.core.errors import ConfigError, DataError
from rlvr.environments.registry import make
from rlvr.rollout.check import check

pytestmark = pytest.mark.extras

ECHO_42 = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "c0", "type": "function", "function": {"name": "echo", "arguments": json.dumps({"text": "42"})}}]}


def write_tasks(path: Path) -> Path:
    rows = [{"id": "echo-42", "prompt": "Call echo with 42, then answer with what it said.", "reference": "42",
             "reference_actions": [ECHO_42, {"content": "42"}]},
            {"id": "echo-7", "prompt": [{"role": "user", "content": "Answer 7."}], "reference": "7"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(MISBEHAVING), "--http", str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.kill()
        server.wait()


def test_a_stdio_command_with_jsonl_tasks_and_a_named_verifier(tmp_path: Path) -> None:
    env = make("mcp/tools-v1", server="{python} misbehaving.py", files=[str(MISBEHAVING)],
               tasks=str(write_tasks(tmp_path / "t.jsonl")), verifier="math", packages=["mcp"], include_tools=["echo"],
               max_turns=3)
    try:
        assert [t["function"]["name"] for t in env.spec.tools] == ["echo"]
        report = check(env)
        assert report.passed, [(r.name, r.detail) for r in report.failures]
        oracle = next(r for r in report.results if r.name == "oracle_episode")
        assert oracle.items == 1  # the row with reference actions
    finally:
        env.close()


def test_a_streamable_http_url(tmp_path: Path, http_url: str) -> None:
    env = make("mcp/tools-v1", server=http_url, tasks=str(write_tasks(tmp_path / "t.jsonl")), verifier="math",
               exclude_tools=["crash", "hang", "huge", "malformed", "mutate", "spawn", "flood_stderr", "escape"])
    try:
        assert env.spec.resources["transport"] == "http"
        episode = env.episode_copy()
        episode.reset_sync(env.tasks[0])
        echo = episode.step_sync(ECHO_42)
        assert echo.messages[0].content == "42"
        final = episode.step_sync("42")
        assert final.verdict is not None and final.verdict.status == "correct"
    finally:
        env.close()


def test_bad_rows_and_options_fail_with_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "prompt": "hi"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: missing field 'reference'"):
        make("mcp/tools-v1", server="{python} misbehaving.py", files=[str(MISBEHAVING)], tasks=str(bad),
             verifier="math", packages=["mcp"])
    with pytest.raises(ConfigError, match="does not list the tool"):
        make("mcp/tools-v1", server="{python} misbehaving.py", files=[str(MISBEHAVING)],
             tasks=str(write_tasks(tmp_path / "t.jsonl")), verifier="math", packages=["mcp"], include_tools=["nope"])
