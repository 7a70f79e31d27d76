"""Unit-test verifier: code extracted from a response, run against tests in `rlvr.sandbox`.

Pipeline: `extract` (markdown fence or raw text) -> run in the sandbox (`rlvr_code_child` reports values,
`rewrite` turns asserts into probes) -> decide in the parent (`compare`, `verifier`).
"""

from rlvr.verifiers.code.extract import extract_code
from rlvr.verifiers.code.spec import (
    AssertTests,
    CallCase,
    CallTests,
    PytestTests,
    StdioCase,
    StdioTests,
    TestSpec,
    as_test_spec,
)
from rlvr.verifiers.code.verifier import CodeConfig, UnitTestVerifier, score_code

__all__ = [
    "AssertTests",
    "CallCase",
    "CallTests",
    "CodeConfig",
    "PytestTests",
    "StdioCase",
    "StdioTests",
    "TestSpec",
    "UnitTestVerifier",
    "as_test_spec",
    "extract_code",
    "score_code",
]
