"""Verifiers: pure scoring of responses against references. No trainer imports here.

Where things live: `base` (the `Verifier` classes: `PooledVerifier` scores in worker processes,
`ThreadedVerifier` in watchdog threads for sandbox/HTTP work), `pool` and `threads` (the two pools,
one hard per-call limit), `registry` (names → classes, and `VerifierSpec`, the one way a verifier is described
and built), `wrappers` (`FormatReward`), one package per domain (`math`, `sql`, `code`, `terminal`,
`judge`). Names load lazily so that `import rlvr.verifiers` stays light (sympy loads in worker processes).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Verifier": "rlvr.verifiers.base",
    "VerifierConfig": "rlvr.verifiers.base",
    "PooledVerifier": "rlvr.verifiers.base",
    "ThreadedVerifier": "rlvr.verifiers.base",
    "VerifierSpec": "rlvr.verifiers.registry",
    "get_verifier": "rlvr.verifiers.registry",
    "MathConfig": "rlvr.verifiers.math",
    "MathVerifier": "rlvr.verifiers.math",
    "SQLConfig": "rlvr.verifiers.sql",
    "SQLReference": "rlvr.verifiers.sql",
    "SQLVerifier": "rlvr.verifiers.sql",
    "ConstantVerifier": "rlvr.verifiers.testing",
    "UnitTestVerifier": "rlvr.verifiers.code",
    "TerminalVerifier": "rlvr.verifiers.terminal",
}

__all__ = [
    "ConstantVerifier",
    "MathConfig",
    "MathVerifier",
    "PooledVerifier",
    "SQLConfig",
    "SQLReference",
    "SQLVerifier",
    "TerminalVerifier",
    "ThreadedVerifier",
    "UnitTestVerifier",
    "Verifier",
    "VerifierConfig",
    "VerifierSpec",
    "get_verifier",
]

if TYPE_CHECKING:
    from rlvr.verifiers.base import PooledVerifier, ThreadedVerifier, Verifier, VerifierConfig
    from rlvr.verifiers.code import UnitTestVerifier
    from rlvr.verifiers.math import MathConfig, MathVerifier
    from rlvr.verifiers.registry import VerifierSpec, get_verifier
    from rlvr.verifiers.sql import SQLConfig, SQLReference, SQLVerifier
    from rlvr.verifiers.terminal import TerminalVerifier
    from rlvr.verifiers.testing import ConstantVerifier


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlvr.verifiers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
