"""`E2BSandbox`: the `run_python` protocol in an E2B cloud sandbox (extra `e2b`).

Selected only by explicit configuration (`UnitTestVerifier(provider="e2b")`, the sandbox provider). Each run ships the
in-sandbox supervisor (`rlvr_supervisor.py --once`, the same code the local workers run) and the job
inside one `commands.run` call, so the job gets the same rlimits, fresh child process, output
caps and deadline as locally, on top of E2B's own VM isolation. Any remote failure (cannot
create the sandbox, connection lost, API error) becomes `ExecResult.error`, which the verifier
turns into an `error` verdict (reward None); running past the time limit is `timed_out`.

Testing: this project cannot reach E2B's cloud; its tests run the real `e2b` SDK with its HTTP
layer pointed at a local fake server (`api_url` and `sandbox_url` options), which implements the
sandbox-creation REST call and envd's `process.Process/Start` Connect RPC (with the SDK's own
generated server stubs) by running the command locally.
"""

from __future__ import annotations

import base64
import json
import shlex
import threading
from collections.abc import Mapping
from typing import Any

from rlvr.core.errors import MissingExtraError, SandboxError
from rlvr.sandbox.config import ExecResult, SandboxConfig
from rlvr.sandbox.guest import SUPERVISOR
from rlvr.sandbox.isolation import rlimits_for
from rlvr.sandbox.pool import decode_reply

__all__ = ["E2BSandbox"]

_GRACE_S = 10.0


class E2BSandbox:
    """Run jobs in one E2B sandbox (created lazily, killed by `close`).

    Args:
        config: limits (`timeout_s`, memory, output caps...) applied by the supervisor in the VM.
        template: E2B template id (default 'base', which has python3).
        api_key: E2B API key (default: `E2B_API_KEY`).
        python: interpreter inside the VM.
        **connection: other `e2b.Sandbox.create` options (`domain`, `api_url`, `sandbox_url`,
            `request_timeout`, ...).

    Raises:
        MissingExtraError: the `e2b` package is not installed.
    """

    isolation = "e2b"

    def __init__(self, config: SandboxConfig | None = None, *, template: str = "base", api_key: str | None = None,
                 python: str = "python3", **connection: Any) -> None:
        try:
            import e2b  # noqa: F401
        except ImportError as exc:
            raise MissingExtraError("e2b", "e2b") from exc
        self.config = config or SandboxConfig()
        self.template = template
        self.api_key = api_key
        self.python = python
        self.connection = connection
        self._sandbox: Any = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        """One line naming the isolation (recorded in verdict details)."""
        return f"e2b (remote VM, template {self.template!r}; rlimits and fresh process per run inside)"

    def _get(self) -> Any:
        from e2b import Sandbox

        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox.create(self.template, api_key=self.api_key, **self.connection)
            return self._sandbox

    def run_python(self, program: str, *, files: Mapping[str, str] | None = None, stdin: bytes | str = b"",
                   timeout_s: float | None = None, prelude: str = "") -> ExecResult:
        """Run Python source `program` in a fresh process in the E2B sandbox (see `LocalSandbox.run_python`)."""
        timeout = timeout_s or self.config.timeout_s
        limits = rlimits_for(self.config, timeout)
        job = {"program": program, "prelude": prelude, "files": dict(files or {}), "timeout_s": timeout,
               "stdin": base64.b64encode(stdin.encode() if isinstance(stdin, str) else stdin).decode(),
               "limits": limits, "env": {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
               "max_output": self.config.max_output_bytes}
        script = base64.b64encode(SUPERVISOR.read_bytes()).decode()
        payload = base64.b64encode(json.dumps(job).encode()).decode()
        command = ("set -e; d=$(mktemp -d); cd \"$d\"; "
                   f"echo {shlex.quote(script)} | base64 -d > sup.py; "
                   f"echo {shlex.quote(payload)} | base64 -d | {shlex.quote(self.python)} -I sup.py --once; "
                   "cd /; rm -rf \"$d\"")
        return self._command(command, timeout)

    def _command(self, command: str, timeout: float) -> ExecResult:
        from e2b import CommandExitException, TimeoutException

        try:
            sandbox = self._get()
            result = sandbox.commands.run(command, timeout=timeout + _GRACE_S)
            stdout, stderr, code = result.stdout, result.stderr, result.exit_code
        except CommandExitException as exc:
            stdout, stderr, code = exc.stdout, exc.stderr, exc.exit_code
        except TimeoutException:
            return ExecResult(timed_out=True, isolation="e2b", error=None, elapsed_s=timeout)
        except Exception as exc:  # any remote failure is an error result, never a verdict of the code
            return ExecResult(isolation="e2b", error=f"e2b: {type(exc).__name__}: {exc}"[:1000])
        outer = ExecResult(exit_code=code, stdout=stdout.encode(), stderr=stderr.encode(), isolation="e2b")
        return decode_reply(outer, "e2b")

    def run(self, argv: Any, **_kwargs: Any) -> ExecResult:
        """Not supported remotely (pytest-format tests need `LocalSandbox`)."""
        raise SandboxError("E2BSandbox runs Python programs only (run_python); use LocalSandbox for commands")

    def close(self) -> None:
        """Kill the remote sandbox."""
        with self._lock:
            sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            try:
                sandbox.kill()
            except Exception:  # the sandbox may be gone already; nothing to clean up then
                return
