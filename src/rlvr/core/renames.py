"""Renamed names that keep working: a keyword argument, a config field or a run-record key under its old name.

One word, one meaning: when a word was renamed, code written with the old name still runs (a
`DeprecationWarning` names the new one) and files written with it still load. Used by the
functions and pydantic models whose parameters were renamed (`renamed_kwargs`,
`renamed_fields`) and by the run record, which compares a recorded configuration on resume
(`RENAMED_KEYS`, `renamed_keys`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

__all__ = ["RENAMED_KEYS", "RENAMED_VALUES", "old_names", "renamed_attribute", "renamed_fields", "renamed_keys",
           "renamed_kwargs", "renamed_parameters"]

F = TypeVar("F", bound=Callable[..., Any])

RENAMED_KEYS: dict[str, str] = {
    "model_engine": "generator",
    "backend": "provider",
    "isolation": "scoring",
    "compare": "rules",
}
"""Run-record keys under their old names (top level and in nested configurations), old → new."""

RENAMED_VALUES: dict[tuple[str, str], str] = {
    ("empty_gold", "compare"): "score",
}
"""Run-record values under their old names: (key, old value) → new value."""


def old_names(names: set[str]) -> set[str]:
    """The old names (`RENAMED_KEYS`) of `names`: options still accepted, e.g. by an unknown-option check."""
    return {old for old, new in RENAMED_KEYS.items() if new in names}


def _moved(values: dict[str, Any], renames: Mapping[str, str], where: str, *, warn: bool) -> dict[str, Any]:
    for old, new in renames.items():
        if old not in values:
            continue
        if warn:
            warnings.warn(f"{where}: {old!r} was renamed {new!r}; use {new}=...", DeprecationWarning, stacklevel=4)
        values[new] = values.pop(old)
    return values


def renamed_kwargs(kwargs: dict[str, Any], renames: Mapping[str, str], where: str) -> dict[str, Any]:
    """Move keyword arguments given under an old name (`renames`: old → new) to the new one, warning.

    Args:
        kwargs: the keyword arguments, changed in place (also returned).
        renames: old name → new name.
        where: the callable, named in the warning.

    The old name wins when both are given: only a merge (`{**config.model_dump(), **overrides}`)
    gives both, and there the old name is the override. Warns `DeprecationWarning` per old name used.
    """
    return _moved(kwargs, renames, where, warn=True)


def renamed_parameters(renames: Mapping[str, str]) -> Callable[[F], F]:
    """Decorator: the function also takes its keyword arguments under their old names (`renamed_kwargs`)."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **renamed_kwargs(kwargs, renames, fn.__qualname__))

        return cast(F, inner)

    return wrap


def renamed_attribute(namespace: Mapping[str, Any], renames: Mapping[str, str], module: str, name: str) -> Any:
    """A module `__getattr__` body: the object renamed from `name` (warning), else AttributeError."""
    if name not in renames:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(f"{module}.{name} was renamed {renames[name]}", DeprecationWarning, stacklevel=3)
    return namespace[renames[name]]


def renamed_fields(data: Any, renames: Mapping[str, str], where: str) -> Any:
    """`renamed_kwargs` for a pydantic `model_validator(mode="before")`: `data` when it is not a dict."""
    if isinstance(data, dict) and any(old in data for old in renames):
        return _moved(dict(data), renames, where, warn=True)
    return data


def renamed_keys(record: Mapping[str, Any], renames: Mapping[str, str] = RENAMED_KEYS) -> dict[str, Any]:
    """A recorded configuration with old key names and values replaced (nested dicts too), silently."""
    out = _moved(dict(record), renames, "", warn=False)
    return {key: renamed_keys(value, renames) if isinstance(value, dict)
            else RENAMED_VALUES.get((key, value), value) if isinstance(value, str) else value
            for key, value in out.items()}
