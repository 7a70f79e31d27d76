"""Unit-test verifier: code extracted from a response, run against tests in `rlvr.sandbox`.

Pipeline: `extract` (markdown fence or raw text) -> run in the sandbox (`execution`; `rlvr_code_child`
reports values, `rewrite` turns asserts into probes, `pytest_format` runs pytest files) -> decide in the
parent (`equivalence`, `verifier`).
"""

from rlvr.verifiers.code.config import CodeConfig
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
from rlvr.verifiers.code.verifier import UnitTestVerifier, score_code

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
