"""One limit for the whole judge call (issue 31 item 10): a server that drips its status line, headers or body a
byte at a time (each byte well within a per-read timeout) cannot hold `verify()` past `timeout_s`. Tested against a
real slow HTTP server on a loopback socket."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from rlvr.verifiers.judge import JudgeVerifier
from rlvr.verifiers.judge.testing import Reply, chat_body

REF = {"prompt": "What is 2 + 3?", "reference": "5"}
BODY = chat_body(Reply('{"reasoning": "The sum is 5.", "score": 1.0}'), "m")
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)


class SlowServer:
    """A loopback socket server: reads one HTTP request, then sends `parts` (bytes, delay before each)."""

    def __init__(self, parts: list[tuple[bytes, float]]) -> None:
        self.parts = parts
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            while len(body) < length:
                body += conn.recv(65536)
            try:
                for chunk, delay in self.parts:
                    time.sleep(delay)
                    conn.sendall(chunk)
            except OSError:
                return  # the client hung up: its deadline ran out

    def close(self) -> None:
        self.closed = True
        self.sock.close()


def _drip(data: bytes, every_s: float) -> list[tuple[bytes, float]]:
    return [(data[i:i + 1], every_s) for i in range(len(data))]


PLANS = {
    "issue-body-byte-every-250ms": [(HEAD, 0.0), *_drip(BODY, 0.25)],
    "headers-dripped": [*_drip(HEAD, 0.1), (BODY, 0.0)],
    "status-line-dripped": [*_drip(HEAD[:17], 0.3), (HEAD[17:] + BODY, 0.0)],
    "silent-then-slow-body": [(HEAD, 1.5), *_drip(BODY, 0.05)],
    "everything-dripped": _drip(HEAD + BODY, 0.05),
}


@pytest.fixture
def slow() -> Iterator[list[SlowServer]]:
    servers: list[SlowServer] = []
    yield servers
    for server in servers:
        server.close()


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_a_dripped_reply_cannot_outlast_timeout_s(slow: list[SlowServer], plan: str) -> None:
    server = SlowServer(PLANS[plan])
    slow.append(server)
    judge = JudgeVerifier(base_url=server.url, model="m", timeout_s=2.0, retries=0, protocol_retries=0, cache=False)
    start = time.monotonic()
    verdict = judge.verify("5", REF)
    elapsed = time.monotonic() - start
    assert verdict.status == "error" and verdict.reward is None, verdict
    assert elapsed < 3.5, elapsed  # the full drip takes 5 s or more
    (call,) = json.loads(verdict.detail)["calls"]
    assert "timeout after 2.0 s" in call["error"] and call["latency_s"] < 2.5


def test_retries_each_get_the_same_limit(slow: list[SlowServer]) -> None:
    server = SlowServer(PLANS["issue-body-byte-every-250ms"])
    slow.append(server)
    judge = JudgeVerifier(base_url=server.url, model="m", timeout_s=1.0, retries=2, backoff_s=0.01,
                          protocol_retries=0, cache=False)
    start = time.monotonic()
    verdict = judge.verify("5", REF)
    assert verdict.status == "error" and time.monotonic() - start < 5.0  # 3 attempts of 1 s, not 3 x 40 s
    assert len(json.loads(verdict.detail)["calls"]) == 3


def test_a_slow_reply_inside_the_limit_is_scored(slow: list[SlowServer]) -> None:
    server = SlowServer([*_drip(HEAD, 0.002), *_drip(BODY, 0.002)])
    slow.append(server)
    judge = JudgeVerifier(base_url=server.url, model="m", timeout_s=5.0, retries=0, cache=False)
    verdict = judge.verify("5", REF)
    assert verdict.status == "correct" and verdict.reward == 1.0, verdict
