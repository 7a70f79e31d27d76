"""SQL verification: extract the query, run gold and prediction read-only, compare results."""

from typing import Any

from rlvr.core.renames import renamed_attribute
from rlvr.verifiers.sql.config import EquivalenceRules, SQLConfig, SQLReference
from rlvr.verifiers.sql.verifier import SQLVerifier

__all__ = ["EquivalenceRules", "SQLConfig", "SQLReference", "SQLVerifier"]


def __getattr__(name: str) -> Any:
    """`CompareRules`, the old name of `EquivalenceRules`, with a DeprecationWarning."""
    return renamed_attribute(globals(), {"CompareRules": "EquivalenceRules"}, __name__, name)
