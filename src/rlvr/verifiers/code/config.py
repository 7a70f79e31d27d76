"""Configuration of the unit-test verifier (`CodeConfig`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rlvr.sandbox.config import SandboxConfig
from rlvr.verifiers.base import VerifierConfig

__all__: list[str] = []


class CodeConfig(VerifierConfig):
    """Settings of `UnitTestVerifier` (plus the shared `VerifierConfig` fields)."""

    timeout_s: float = Field(default=30.0, gt=0, description="Wall-clock limit of one whole verification, seconds.")
    test_timeout_s: float = Field(default=5.0, gt=0, description="Limit of one test (a task may override), seconds.")
    reward: Literal["binary", "fraction"] = Field(
        default="binary", description="'binary': 1 only if every test passes; 'fraction': share of tests passed.")
    rel_tol: float = Field(default=1e-6, ge=0, description="Relative float tolerance of call-based comparisons.")
    abs_tol: float = Field(default=1e-6, ge=0, description="Absolute float tolerance of call-based comparisons.")
    type_strict: bool = Field(default=True, description="Call-based: types must match (True != 1, [1] != (1,)).")
    language: str = Field(default="python", description="Fence language to extract (only Python runs today).")
    provider: Literal["local", "e2b"] = Field(
        default="local", description="Sandbox provider: 'local' (LocalSandbox) or 'e2b' (E2BSandbox, extra `e2b`; "
        "only when asked).")
    e2b: dict[str, Any] = Field(default_factory=dict, description="E2BSandbox options (template, api_key, domain, "
                                "api_url, sandbox_url, ...).")
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig, description="Isolation and limits.")
    require_full_isolation: bool = Field(default=False, description="Refuse to score without bubblewrap.")
