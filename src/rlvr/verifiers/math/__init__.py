"""Math answer verification: extraction, normalisation and symbolic/numeric equivalence."""

from rlvr.verifiers.math.config import MathConfig
from rlvr.verifiers.math.verifier import MathVerifier

__all__ = ["MathConfig", "MathVerifier"]
