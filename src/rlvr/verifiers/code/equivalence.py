"""Parent-side equivalence of values reported by the child (call-based and stdio outputs)."""

from __future__ import annotations

import math
from typing import Any

__all__: list[str] = []


def values_equal(got: Any, expected: Any, *, rel_tol: float = 1e-9, abs_tol: float = 1e-9,
                 type_strict: bool = True) -> bool:
    """Deep equality of decoded plain values.

    Type-strict by default: `True` != `1`, `1` != `1.0`, `[1]` != `(1,)`; floats (and complex parts)
    compare with `math.isclose(rel_tol, abs_tol)`; NaN equals NaN. With `type_strict=False`,
    numbers compare by value and lists equal tuples, as Python's `==` does.
    """
    if isinstance(got, float) or isinstance(expected, float):
        if type_strict and type(got) is not type(expected):
            return False
        if isinstance(got, bool) or isinstance(expected, bool):
            return bool(got == expected)
        if not isinstance(got, (int, float)) or not isinstance(expected, (int, float)):
            return False
        if math.isnan(got) and math.isnan(expected):
            return True
        return math.isclose(got, expected, rel_tol=rel_tol, abs_tol=abs_tol)
    if type_strict and type(got) is not type(expected):
        return False
    kw: dict[str, Any] = {"rel_tol": rel_tol, "abs_tol": abs_tol, "type_strict": type_strict}
    if isinstance(got, complex) and isinstance(expected, complex):
        return values_equal(got.real, expected.real, **kw) and values_equal(got.imag, expected.imag, **kw)
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(values_equal(a, b, **kw) for a, b in zip(got, expected, strict=True))
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(values_equal(got[k], expected[k], **kw) for k in got)
    try:
        return bool(got == expected)
    except Exception:  # comparing decoded plain values cannot run foreign code; stay safe anyway
        return False


def normalize_output(text: str) -> list[str]:
    """Stdout as compared for stdio tests: lines with trailing whitespace removed, trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines
