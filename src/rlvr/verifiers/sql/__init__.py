"""SQL verification: extract the query, run gold and prediction read-only, compare results."""

from rlvr.verifiers.sql.config import CompareRules, SQLConfig, SQLReference
from rlvr.verifiers.sql.verifier import SQLVerifier

__all__ = ["CompareRules", "SQLConfig", "SQLReference", "SQLVerifier"]
