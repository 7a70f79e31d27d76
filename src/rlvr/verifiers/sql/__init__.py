"""SQL verification: extract the query, run gold and prediction read-only, compare results."""

from rlvr.verifiers.sql.config import EquivalenceRules, SQLConfig, SQLReference
from rlvr.verifiers.sql.verifier import SQLVerifier

__all__ = ["EquivalenceRules", "SQLConfig", "SQLReference", "SQLVerifier"]
