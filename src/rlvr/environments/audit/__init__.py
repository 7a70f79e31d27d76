"""`rlvr check --adversarial`: how hackable is an environment's verifier?

For each of `n` tasks, the audit builds wrong responses: the generic families any verifier gets
(`generic`: empty, prompt echo, format-only, reference-free guesses) and, for a verifier of a known
domain, families of mutation for that domain (math, sql, code, terminal: one module each, pure
functions from a task's reference to `Probe`s), scores them with the environment's own verifier,
and counts how many scored `correct` (false passes). Controls -- right answers written another way -- must score
`correct`, and are reported apart.

Example:
    >>> report = audit("math/gsm8k-v1", n=5, env_kwargs={"path": "gsm8k_test.jsonl"})  # doctest: +SKIP
    >>> report.false_passes, report.controls_failed
    (0, 0)
"""

from rlvr.environments.audit.driver import DOMAINS, GENERIC, AuditReport, FamilyResult, audit, verifier_domain
from rlvr.environments.audit.probe import Probe

__all__ = ["DOMAINS", "GENERIC", "AuditReport", "FamilyResult", "Probe", "audit", "verifier_domain"]
