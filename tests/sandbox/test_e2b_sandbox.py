"""E2BSandbox through the real `e2b` SDK, its HTTP layer pointed at a local fake E2B server.

The cloud cannot be reached here. The fake server implements what the SDK calls: the REST
`POST /v2/sandboxes` (create), `DELETE /sandboxes/{id}` (kill), and envd's Connect RPC
`process.Process/Start` (served with the SDK's own generated `ProcessWSGIApplication`), which runs
the command locally and streams its output back as the SDK's protobuf events.
"""

from __future__ import annotations

import io
import json
import subprocess
import threading
from collections.abc import Iterator
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

import pytest

pytestmark = pytest.mark.extras


class _Quiet(WSGIRequestHandler):
    """wsgiref's handler, plus chunked request bodies (the SDK's Connect client streams its request)."""

    def log_message(self, *args: Any) -> None:
        pass

    def handle(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if not self.parse_request():
            return
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
            del self.headers["Transfer-Encoding"]
            self.headers["Content-Length"] = str(len(body))
            self.rfile = io.BytesIO(body)
        handler = ServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ(),
                                multithread=True)
        handler.request_handler = self
        handler.run(self.server.get_app())


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


def _process_service() -> Any:
    """envd's process service (the SDK's ProcessSync protocol): `start` runs the command locally."""
    from e2b.envd.process.process_connect import ProcessSync

    class Process(ProcessSync):
        def start(self, request: Any, ctx: Any) -> Iterator[Any]:
            return _start(request)

    return Process()


def _start(request: Any) -> Iterator[Any]:
    from e2b.envd.process import process_pb
    from protobuf import Oneof

    ev = process_pb.ProcessEvent
    proc = subprocess.Popen([request.process.cmd, *request.process.args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(request.process.envs) or None)
    yield process_pb.StartResponse(event=ev(event=Oneof("start", ev.StartEvent(pid=proc.pid))))
    out, err = proc.communicate()
    for field, data in (("stdout", out), ("stderr", err)):
        if data:
            yield process_pb.StartResponse(event=ev(event=Oneof("data", ev.DataEvent(output=Oneof(field, data)))))
    end = ev.EndEvent(exit_code=proc.returncode, exited=True, status=f"exit status {proc.returncode}")
    yield process_pb.StartResponse(event=ev(event=Oneof("end", end)))


class FakeE2B:
    """WSGI app: E2B's REST API (create/kill) plus envd's process RPC."""

    def __init__(self) -> None:
        from e2b.envd.process.process_connect import ProcessWSGIApplication

        self.rpc = ProcessWSGIApplication(_process_service())
        self.created = 0
        self.killed = 0
        self.fail_create = False

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
        if path.startswith("/process.Process/"):
            return self.rpc(environ, start_response)
        if method == "POST" and path == "/v2/sandboxes":
            if self.fail_create:
                return self._json(start_response, "500 Internal Server Error", {"code": 500, "message": "boom"})
            self.created += 1
            return self._json(start_response, "201 Created", {
                "templateID": "base", "sandboxID": f"fake{self.created}", "clientID": "local",
                "envdVersion": "0.4.0", "envdAccessToken": "token"})
        if method == "DELETE" and path.startswith("/sandboxes/"):
            self.killed += 1
            start_response("204 No Content", [])
            return [b""]
        return self._json(start_response, "404 Not Found", {"code": 404, "message": f"no route {method} {path}"})

    @staticmethod
    def _json(start_response: Any, status: str, body: dict[str, Any]) -> list[bytes]:
        data = json.dumps(body).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]


@pytest.fixture()
def fake_e2b():
    pytest.importorskip("e2b")
    app = FakeE2B()
    server = make_server("127.0.0.1", 0, app, server_class=_Server, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    yield app, {"api_key": "e2b_test", "api_url": url, "sandbox_url": url, "request_timeout": 10}
    server.shutdown()
    server.server_close()


def test_run_python_through_sdk(fake_e2b):
    from rlvr.sandbox.e2b import E2BSandbox

    app, options = fake_e2b
    box = E2BSandbox(**options)
    result = box.run_python("import sys; print('hi', sys.stdin.read())", stdin="there", timeout_s=5)
    assert result.error is None and result.stdout == b"hi there\n" and result.isolation == "e2b"
    assert box.run_python("while True: pass", timeout_s=1).timed_out
    box.close()
    assert (app.created, app.killed) == (1, 1)


def test_unit_test_verifier_on_e2b_provider(fake_e2b):
    from rlvr.verifiers.code import UnitTestVerifier

    _app, options = fake_e2b
    verifier = UnitTestVerifier(provider="e2b", e2b=options)
    tests = {"format": "assert", "tests": "assert add(2, 3) == 5"}
    good = verifier.verify("def add(a, b):\n    return a + b", tests)
    assert good.status == "correct" and "e2b" in good.detail
    assert verifier.verify("def add(a, b):\n    return a - b", tests).status == "incorrect"
    verifier.close()


def test_remote_failure_is_error_verdict(fake_e2b):
    from rlvr.verifiers.code import UnitTestVerifier

    app, options = fake_e2b
    app.fail_create = True
    verifier = UnitTestVerifier(provider="e2b", e2b=options)
    tests = {"format": "assert", "tests": "assert add(1, 1) == 2"}
    verdict = verifier.verify("def add(a, b):\n    return a + b", tests)
    assert verdict.status == "error" and verdict.reward is None and "e2b" in verdict.detail
    verifier.close()
