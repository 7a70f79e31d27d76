"""Guest scripts: the code rlvr copies into a sandbox and runs there, with the sandbox's own Python.

Inside a sandbox rlvr is not importable, so every module here imports only the standard library
and its sibling guest modules (`tests/sandbox/test_guest.py` checks it; the one exception is the
grader's pytest, which `rlvr_session_pytest` imports from the grader's own site). On the host they
are ordinary modules of this package (imported for type checking, tests and shared constants); in
the sandbox they run side by side as top-level modules, which is why each file name starts with
`rlvr_`: a task's own `session.py` or `supervisor.py` must never resolve to a supervisor module
already in `sys.modules`.

- `rlvr_supervisor`: the code sandbox's warm worker (one forked child per job; `--once` on E2B).
- `rlvr_session` (+ `rlvr_session_proc`, `rlvr_session_shell`, `rlvr_session_pytest`): pid 1 of
  a persistent terminal sandbox: shell, process plumbing, the grader's pytest runner.
- `rlvr_code_child`: the unit-test verifier's child (runs the candidate and the tests, reports values).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["GUEST_DIR", "SUPERVISOR"]

GUEST_DIR = Path(__file__).parent
"""The folder of the guest scripts, read by the host to copy them into sandboxes."""

SUPERVISOR = GUEST_DIR / "rlvr_supervisor.py"
"""The code sandbox's supervisor script (a pre-started worker of `LocalSandbox.run_python`; `--once` on E2B)."""
