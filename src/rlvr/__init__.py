r"""rlvr: one environment, one verifier, any trainer.

Verifiers and environments for reinforcement learning with verifiable rewards (RLVR), with
adapters to TRL, OpenRLHF and veRL. `import rlvr` is light: it imports no trainer, torch or
vllm, and attributes load on first use.

Example:
    >>> import rlvr
    >>> rlvr.MathVerifier().verify("The answer is \\\\boxed{42}", "42").status
    'correct'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Message": "rlvr.core.types",
    "Task": "rlvr.core.types",
    "Verdict": "rlvr.core.types",
    "StepResult": "rlvr.core.types",
    "Trajectory": "rlvr.core.types",
    "EnvSpec": "rlvr.core.types",
    "RlvrError": "rlvr.core.errors",
    "Registry": "rlvr.core.registry",
    "MathVerifier": "rlvr.verifiers.math",
    "MathConfig": "rlvr.verifiers.math",
    "Environment": "rlvr.environments.base",
    "SingleTurnEnv": "rlvr.environments.single_turn",
    "make": "rlvr.environments.registry",
    "registry": "rlvr.environments.registry",
    "check": "rlvr.rollout.check",
}

__all__ = [
    "EnvSpec",
    "Environment",
    "MathConfig",
    "MathVerifier",
    "Message",
    "Registry",
    "RlvrError",
    "SingleTurnEnv",
    "StepResult",
    "Task",
    "Trajectory",
    "Verdict",
    "__version__",
    "check",
    "make",
    "registry",
]

if TYPE_CHECKING:
    from rlvr.core.errors import RlvrError
    from rlvr.core.registry import Registry
    from rlvr.core.types import EnvSpec, Message, StepResult, Task, Trajectory, Verdict
    from rlvr.environments.base import Environment
    from rlvr.environments.registry import make, registry
    from rlvr.environments.single_turn import SingleTurnEnv
    from rlvr.rollout.check import check
    from rlvr.verifiers.math import MathConfig, MathVerifier


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlvr' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
