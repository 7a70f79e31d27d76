"""The default environment registry and the built-in environment ids."""

from __future__ import annotations

from typing import Any

from rlvr.core.registry import Registry

__all__ = ["make", "registry"]

registry = Registry()
"""The process-wide default registry (plugins from the `rlvr.environments` entry-point group)."""

registry.register(
    "math/gsm8k-v1",
    "rlvr.environments.math:make_gsm8k",
    description="GSM8K grade-school word problems (HF openai/gsm8k or a local jsonl/parquet path).",
)
registry.register(
    "math/math-v1",
    "rlvr.environments.math:make_math",
    description="MATH / MATH-500 style rows with problem/answer (HF id or local path).",
)
registry.register(
    "math/reasoning-gym-v1",
    "rlvr.environments.math:make_reasoning_gym",
    description="Procedural tasks from any reasoning-gym generator, seeded and offline.",
)


def make(id: str, **kwargs: Any) -> Any:
    """Build the environment registered as `id` in the default registry.

    Example:
        >>> env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=4)
    """
    return registry.make(id, **kwargs)
