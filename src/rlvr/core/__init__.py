"""rlvr core: the data contract, errors, protocols and the environment registry.

Imports nothing else from rlvr.
"""

from rlvr.core.errors import (
    AdapterError,
    BackendError,
    ConfigError,
    DataError,
    MissingExtraError,
    RlvrError,
    SandboxError,
    VerifierError,
)
from rlvr.core.registry import Registration, Registry
from rlvr.core.types import EnvSpec, Message, Status, StepResult, Task, ToolCall, Trajectory, Verdict

__all__ = [
    "AdapterError",
    "BackendError",
    "ConfigError",
    "DataError",
    "EnvSpec",
    "Message",
    "MissingExtraError",
    "Registration",
    "Registry",
    "RlvrError",
    "SandboxError",
    "Status",
    "StepResult",
    "Task",
    "ToolCall",
    "Trajectory",
    "Verdict",
    "VerifierError",
]
