"""A scripted OpenAI-compatible judge server on loopback (stdlib `http.server`, a real HTTP socket).

Lives in tests/ (on sys.path through tests/conftest.py) so judge, runner and adapter tests share it;
import the `judge_server` fixture from here.

`judge_server.reply = fn` sets how it answers: `fn(body) -> Reply`, where `body` is the decoded
request JSON; every request body is kept in `judge_server.requests`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """What the scripted server sends: an HTTP status and a chat body (or raw bytes), after a delay."""

    content: str | None = None
    status: int = 200
    raw: bytes | None = None
    delay_s: float = 0.0
    refusal: str | None = None
    finish_reason: str = "stop"
    headers: dict[str, str] | None = None


def chat_body(reply: Reply, model: str) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    return json.dumps({"id": "x", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}]}).encode()


class JudgeServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: Callable[[dict[str, Any]], Reply] = lambda body: Reply('{"reasoning": "ok", "score": 1.0}')
        self.lock = threading.Lock()
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                body["_path"] = self.path
                body["_auth"] = self.headers.get("Authorization")
                with server.lock:
                    server.requests.append(body)
                reply = server.reply(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = reply.raw if reply.raw is not None else chat_body(reply, body.get("model", ""))
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (reply.headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def serve() -> Iterator[JudgeServer]:
    """A started `JudgeServer`, closed after use (the body of each folder's `judge_server` fixture)."""
    server = JudgeServer()
    try:
        yield server
    finally:
        server.close()


judge_server = pytest.fixture(serve, name="judge_server")


def ids_in(body: dict[str, Any]) -> list[str]:
    """The trajectory ids of a RULER request, in the order shown."""
    return re.findall(r'<trajectory id="([^"]+)">', body["messages"][1]["content"])


def ruler_reply(body: dict[str, Any], score: Callable[[str, str], float]) -> Reply:
    """A well-formed RULER reply: `score(id, fenced response text)` for every id in the request."""
    text = body["messages"][1]["content"]
    blocks = {tid: re.sub(r"\A.*?\n(`{3,})\n(.*)\n\1\Z", r"\2", block, flags=re.DOTALL)
              for tid, block in re.findall(r'<trajectory id="([^"]+)">\n(.*?)\n</trajectory>', text, re.DOTALL)}
    scores = [{"trajectory_id": tid, "explanation": "e", "score": score(tid, blocks[tid])} for tid in ids_in(body)]
    return Reply(json.dumps({"scores": scores}))
