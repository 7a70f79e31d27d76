r"""Serve an rlvr environment over OpenEnv (`rlvr serve`) and play it with OpenEnv's own client.

Starts `rlvr serve math/reasoning-gym-tool-v1` (easy arithmetic with a `calculator` tool) in a child
process on a free local port, waits for `/health`, then plays two episodes with OpenEnv's
`GenericEnvClient`, which knows nothing of rlvr: the first asks the server's calculator tool and answers
with its result, the second answers a wrong number. The server never sends the reference: the client
reads the problem from the prompt. Needs the `openenv` extra (`pip install '.[openenv]'`).

    python examples/serve_openenv.py [--port 0]

Prints each observation and the verdicts; exits 1 unless the first episode is correct and the second is not.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any

from openenv.core.generic_client import GenericEnvClient

ENV_ID = "math/reasoning-gym-tool-v1"


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, timeout_s: float = 120.0) -> subprocess.Popen[bytes]:
    """`rlvr serve` in a child process, returned once `/health` answers; RuntimeError if it exits first."""
    server = subprocess.Popen([sys.executable, "-m", "rlvr.runners.cli", "serve", ENV_ID, "--env-arg", "size=8",
                               "--port", str(port), "--max-sessions", "4", "--log-level", "warning"])
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"rlvr serve exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise RuntimeError(f"rlvr serve did not answer /health within {timeout_s:g} s")


def calculator_call(expression: str) -> dict[str, Any]:
    """One assistant message calling the server's `calculator` tool (OpenAI format)."""
    call = {"id": "call_0", "type": "function",
            "function": {"name": "calculator", "arguments": json.dumps({"expression": expression})}}
    return {"content": "", "tool_calls": [call]}


def play(client: Any, seed: int, honest: bool) -> dict[str, Any]:
    """One episode: ask the calculator, then answer its result (or, if not `honest`, a wrong number)."""
    first = client.reset(seed=seed)
    question = first.observation["messages"][-1]["content"]
    print(f"episode {first.observation['task_id']}: {question!r}")
    expression = re.search(r"Calculate (.+?)\.?$", question.strip())
    answered = client.step(calculator_call(expression[1] if expression else question))
    result = answered.observation["messages"][-1]["content"].strip()
    print(f"  calculator -> {result!r} (reward {answered.reward}, done {answered.done})")
    value = re.search(r"-?\d+(?:\.\d+)?", result)
    answer = value[0] if value else result
    if not honest:
        answer = f"{answer}1"
    final = client.step({"content": f"The final answer is \\boxed{{{answer}}}."})
    verdict: dict[str, Any] = final.observation["verdict"]
    print(f"  answer {answer}: reward {final.reward}, done {final.done}, verdict {verdict['status']}")
    return verdict


def main(argv: list[str] | None = None) -> int:
    """Serve, play two episodes, stop the server; 0 when the verdicts are right and the server exited 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="server port (0: a free one)")
    args = parser.parse_args(argv)

    port = args.port or free_port()
    server = start_server(port)
    try:
        with GenericEnvClient(base_url=f"http://127.0.0.1:{port}").sync() as client:
            right = play(client, seed=0, honest=True)
            wrong = play(client, seed=1, honest=False)
    finally:
        server.terminate()  # SIGTERM: the server closes every session and exits 0
        code = server.wait(timeout=30)
    print(f"server exited with code {code}")
    ok = right["status"] == "correct" and wrong["status"] == "incorrect" and code == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
