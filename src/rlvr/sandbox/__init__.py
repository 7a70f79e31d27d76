"""Process isolation for untrusted code: bubblewrap, then `unshare` namespaces, then rlimits.

`LocalSandbox` runs a command (`run`) or a Python program in a pre-started worker (`run_python`)
with a fresh work directory, an unprivileged uid, rlimits, a parent-side wall-clock watchdog and
capped output; `ExecResult` is the raw evidence (exit status, output, result channel). Deciding
what the evidence means is the verifier's job. `rlvr.sandbox.e2b.E2BSandbox` (extra `e2b`) runs
the same `run_python` protocol in an E2B cloud sandbox.

`SandboxSession` is the long-lived kind, for terminal tasks: one bubblewrap sandbox with a
persistent shell, clean one-off processes, pytest for grading and an export of its work
directory; `rlvr.sandbox.container.ContainerSession` runs the same session in a podman/docker
container of a task's image.

Where things live: `config` (SandboxConfig, ProcessLimits, ExecResult), `isolation` (the bubblewrap
pieces, rlimits, the sandbox's Python, host directories), `local` (LocalSandbox), `pool` (its
pre-started workers), `session` + `session_types` (SandboxSession), `container` + `runtimes`,
`host_process` (one host process under a watchdog), `e2b`, `site_packages`, `guest/` (the scripts that
run inside a sandbox, standard library only).
"""

from __future__ import annotations

from rlvr.sandbox.config import ISOLATION_LEVELS, ExecResult, Isolation, SandboxConfig
from rlvr.sandbox.isolation import find_bwrap
from rlvr.sandbox.local import LocalSandbox
from rlvr.sandbox.session import CommandResult, Mount, SandboxSession, SessionConfig

__all__ = ["ISOLATION_LEVELS", "CommandResult", "ExecResult", "Isolation", "LocalSandbox", "Mount", "SandboxConfig",
           "SandboxSession", "SessionConfig", "find_bwrap"]
