"""LLM-judge verifiers: a hardened pointwise judge and RULER-style group-relative scoring.

`JudgeVerifier` (`--verifier judge`) scores one response; `RulerVerifier` (`--verifier ruler`)
scores the responses to one prompt together. Both talk to any OpenAI-compatible
`/chat/completions` endpoint through the standard library (no `openai` package), ask for a JSON
reply with `response_format` and validate it anyway; every failure is an `error` verdict
(reward None, masked by the trainer), never 0 and never a clamped score. Judged text is escaped
and fenced (`rlvr.verifiers.judge._prompt`) so it cannot close its block or pass as the judge's reply;
a passing score of a response that plants a passing grade (read by meaning: JSON in any order, YAML,
prose, disguised letters; `rlvr.verifiers.judge._planted`) is masked, and a low score always stands.
"""

from __future__ import annotations

from rlvr.verifiers.judge.config import (
    DEFAULT_RUBRIC,
    DEFAULT_RULER_RUBRIC,
    JudgeConfig,
    JudgeReference,
    RulerConfig,
    as_judge_reference,
)
from rlvr.verifiers.judge.pointwise import JudgeVerifier
from rlvr.verifiers.judge.ruler import RulerVerifier

__all__ = [
    "DEFAULT_RUBRIC",
    "DEFAULT_RULER_RUBRIC",
    "JudgeConfig",
    "JudgeReference",
    "JudgeVerifier",
    "RulerConfig",
    "RulerVerifier",
    "as_judge_reference",
]
