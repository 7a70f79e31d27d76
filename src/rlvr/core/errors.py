"""The rlvr error tree: one root, one subclass per boundary crossed.

```
RlvrError
├── ConfigError      a config, id or argument is wrong (fix the call)
├── DataError        a dataset row or input file is malformed (fix the data)
├── VerifierError    a verifier could not be built or its worker pool failed
├── SandboxError     process isolation could not be set up
├── AdapterError     a trainer's API did not accept what rlvr produced
└── BackendError     a trainer backend, or a service a run needs (Ray, a model server), is missing or failed
```

A wrong answer is never an exception: it is a `Verdict` with `status="incorrect"`.
A grader that breaks while scoring one item yields `status="error"`, `reward=None`; these
exceptions are for failures that stop the whole call.
"""

from __future__ import annotations

__all__ = [
    "AdapterError",
    "BackendError",
    "ConfigError",
    "DataError",
    "MissingExtraError",
    "RlvrError",
    "SandboxError",
    "VerifierError",
]


class RlvrError(Exception):
    """Root of every error rlvr raises on purpose."""


class ConfigError(RlvrError, ValueError):
    """A configuration value, environment id or argument is invalid."""


class DataError(RlvrError, ValueError):
    """A dataset row or input file is malformed; the message names the row/line and field."""


class VerifierError(RlvrError):
    """A verifier could not be constructed or its worker pool cannot run at all."""


class SandboxError(RlvrError):
    """Process isolation could not be set up."""


class AdapterError(RlvrError):
    """A trainer rejected what an adapter produced, or the adapter was misused."""


class BackendError(RlvrError):
    """A trainer backend, or a service a run needs (a Ray cluster, a model server), is missing or failed to launch."""


class MissingExtraError(BackendError, ImportError):
    """An optional dependency is missing; the message names the `pip install` to run."""

    def __init__(self, package: str, extra: str, install: str | None = None) -> None:
        command = install or f"pip install 'rlvr[{extra}]'"
        super().__init__(f"this feature needs the package {package!r}, which is not installed; "
                         f"install it with: {command}")
        self.package = package
        self.extra = extra
