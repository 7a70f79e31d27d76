"""A minimal OpenAI-compatible chat-completions client on the standard library (no `openai` package).

One `ChatClient` per judge: a semaphore caps the calls in flight (`max_concurrency`); HTTP 408, 409,
429 and 5xx, timeouts and connection errors are retried with exponential backoff (a `Retry-After`
header is honoured up to 30 s); every attempt is recorded as a `Call` (model, latency, HTTP status,
raw reply or error) so a verdict can show what the judge really said.

`timeout_s` is one limit for the whole HTTP attempt: connecting, the status line, the headers and
the body alike. A `_Deadline` timer shuts the connection's socket down when it runs out, so a server
that drips its reply a byte at a time (each read within a per-read timeout) cannot hold a call past
it; the attempt is then a timeout (retried like one). Over TLS the timer is armed once the handshake
is done; the handshake's reads are each bounded by the time left.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from rlvr.verifiers.judge.config import JudgeConfig

__all__ = ["ChatClient"]

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_RAW_CHARS = 4000
_MAX_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class Call:
    """One HTTP attempt to the judge.

    Attributes:
        model: the model asked.
        latency_s: wall-clock time of the attempt, seconds.
        status: the HTTP status (None: no response, e.g. a timeout or refused connection).
        content: the reply's message content (None when there is none).
        error: why the attempt failed as transport (None on a 2xx reply with a readable body).
        finish_reason: the choice's `finish_reason`, when present.
        refusal: the message's `refusal` text, when the server set one.
    """

    model: str
    latency_s: float
    status: int | None
    content: str | None
    error: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None

    def record(self) -> dict[str, Any]:
        """The attempt as a JSON-ready dict (raw reply cut to 4000 characters)."""
        out: dict[str, Any] = {"model": self.model, "latency_s": round(self.latency_s, 4), "http_status": self.status}
        if self.content is not None:
            out["raw"] = self.content[:_RAW_CHARS]
        for name in ("error", "finish_reason", "refusal"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value[:_RAW_CHARS] if isinstance(value, str) else value
        return out


class ChatClient:
    """POST chat requests to `config.base_url/chat/completions` with a concurrency cap and backoff."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._slots = threading.BoundedSemaphore(config.max_concurrency)

    def chat(self, messages: list[dict[str, str]], schema: dict[str, Any] | None, name: str,
             max_tokens: int | None = None) -> list[Call]:
        """Ask for one reply; returns every attempt made, the last one being the outcome.

        Args:
            messages: chat messages (`role`, `content`).
            schema: JSON schema of the reply, sent as `response_format` when `structured_output` is on.
            name: the schema's name.
            max_tokens: most tokens of the reply (None: `config.max_tokens`).
        """
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": self.config.temperature,
                                "max_tokens": max_tokens or self.config.max_tokens}
        if schema is not None and self.config.structured_output:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": name, "schema": schema, "strict": True}}
        data = json.dumps(body).encode()
        calls: list[Call] = []
        for attempt in range(self.config.retries + 1):
            with self._slots:
                call, retry_after = self._post(data)
            calls.append(call)
            if not self._retryable(call) or attempt == self.config.retries:
                break
            delay = retry_after if retry_after is not None else self.config.backoff_s * 2**attempt
            time.sleep(min(delay, 30.0))
        return calls

    @staticmethod
    def _retryable(call: Call) -> bool:
        if call.error is None:
            return False
        return call.status is None or call.status in _RETRY_STATUS

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key_env:
            key = os.environ.get(self.config.api_key_env, "")
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, data: bytes) -> tuple[Call, float | None]:
        """One attempt under one deadline (`timeout_s`); never raises for network trouble (`Call.error`)."""
        url = f"{self.config.base_url}/chat/completions"
        request = urllib.request.Request(url, data=data, headers=self._headers(), method="POST")
        start = time.monotonic()
        model = self.config.model
        deadline = _Deadline(self.config.timeout_s)
        late = f"timeout after {self.config.timeout_s} s (one limit for the whole call: status line, headers, body)"
        try:
            opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline))
            with opener.open(request, timeout=self.config.timeout_s) as response:
                raw = _read(response)
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            text = _safe_read(exc)
            if deadline.expired:
                return Call(model, time.monotonic() - start, None, None, late), None
            retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            return Call(model, time.monotonic() - start, exc.code, None, f"HTTP {exc.code}: {text}"), retry_after
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            if deadline.expired or isinstance(reason, TimeoutError):
                return Call(model, time.monotonic() - start, None, None, late), None
            return Call(model, time.monotonic() - start, None, None, f"connection error: {reason}"), None
        finally:
            deadline.cancel()
        if deadline.expired:  # the timer fired as the last byte came in: the call was late all the same
            return Call(model, time.monotonic() - start, None, None, late), None
        return _parse_body(model, time.monotonic() - start, status, raw), None


class _Deadline:
    """One limit for a whole HTTP attempt: at `seconds` from now the armed socket is shut down (reads end)."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        """Seconds left (at least 1 ms, so a socket timeout stays valid)."""
        return max(0.001, self.at - time.monotonic())

    def arm(self, sock: socket.socket) -> None:
        """Watch `sock` (the connected socket, TLS-wrapped or not); shut it at once if already expired."""
        with self._lock:
            self._sock = sock
            if self.expired:
                self._shut()

    def cancel(self) -> None:
        """Stop the timer; the socket is never touched after this returns (it may be closed and reused)."""
        self._timer.cancel()
        with self._lock:
            self._sock = None

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shut()

    def _shut(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):  # socket.socket's own shutdown: under TLS too, without TLS state
                socket.socket.shutdown(self._sock, socket.SHUT_RDWR)


def _deadline_connection(base: type[http.client.HTTPConnection], deadline: _Deadline) -> Any:
    """`base` whose connect takes at most the time left and arms `deadline` on the connected socket."""

    class Connection(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            self.timeout = deadline.left()
            super().connect()
            deadline.arm(self.sock)

    return Connection


class _HTTPHandler(urllib.request.HTTPHandler):
    """urllib's HTTP handler (proxies and redirects as usual) on deadline-armed connections."""

    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_deadline_connection(http.client.HTTPConnection, self.deadline), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    """urllib's HTTPS handler (default TLS context) on deadline-armed connections."""

    def __init__(self, deadline: _Deadline) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(context=self.tls)
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_deadline_connection(http.client.HTTPSConnection, self.deadline), req, context=self.tls)


def _read(response: Any) -> bytes:
    """Read the body in chunks up to `_MAX_BODY` (the `_Deadline` ends a slow one)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > _MAX_BODY:
            raise ValueError(f"reply body over {_MAX_BODY} bytes")


def _safe_read(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read(_RAW_CHARS).decode("utf-8", "replace")
    except OSError:
        return ""


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _parse_body(model: str, latency: float, status: int, raw: bytes) -> Call:
    """The chat-completions body → a Call; an unreadable body is a (non-retried) error."""
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
        choice = body["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        return Call(model, latency, status, None, f"not a chat-completions body ({type(exc).__name__}): {text[:500]}")
    content = message.get("content") if isinstance(message, dict) else None
    refusal = message.get("refusal") if isinstance(message, dict) else None
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return Call(model, latency, status, content if isinstance(content, str) else None, None,
                finish if isinstance(finish, str) else None, refusal if isinstance(refusal, str) and refusal else None)
