"""Test double for judge users: a scripted OpenAI-compatible judge server on loopback (stdlib `http.server`).

A real HTTP server on 127.0.0.1 (a free port) answering `POST /v1/chat/completions` as scripted, so a
pipeline that uses `JudgeVerifier` / `RulerVerifier` can be tested, and each failure mode of a judge
(HTTP errors, timeouts, malformed or out-of-range replies, missing ids) reproduced, without a model:

>>> with JudgeServer() as server:                                                   # doctest: +SKIP
...     server.reply = lambda body: Reply('{"reasoning": "ok", "score": 1.0}')
...     JudgeVerifier(base_url=server.url, model="m").verify("4", {"prompt": "2+2?"}).reward
1.0

`server.reply = fn` sets how it answers: `fn(body) -> Reply`, where `body` is the decoded request
JSON (plus `_path` and `_auth`); every request body is kept in `server.requests`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["JudgeServer", "Reply", "chat_body", "ids_in", "ruler_reply"]


@dataclass
class Reply:
    """What the scripted server sends: an HTTP status and a chat body (or raw bytes), after a delay.

    Attributes:
        content: the assistant message content (None: a null content).
        status: HTTP status code.
        raw: bytes sent instead of a chat-completions body.
        delay_s: seconds to wait before answering (timeouts).
        refusal: the message's `refusal` field.
        finish_reason: the choice's finish reason.
        headers: extra response headers (e.g. `Retry-After`).
    """

    content: str | None = None
    status: int = 200
    raw: bytes | None = None
    delay_s: float = 0.0
    refusal: str | None = None
    finish_reason: str = "stop"
    headers: dict[str, str] | None = None


def chat_body(reply: Reply, model: str) -> bytes:
    """The chat-completions JSON body for `reply`."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    return json.dumps({"id": "x", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}]}).encode()


class JudgeServer:
    """A threaded HTTP server on 127.0.0.1 answering chat requests with `reply(body)`; `url` ends in /v1."""

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
                """Silence the default per-request log."""

            def do_POST(self) -> None:
                """Record the request and send the scripted reply."""
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
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> JudgeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
