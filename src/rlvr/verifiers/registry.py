"""Verifiers selectable by name (`rlvr verify --verifier math`), resolved lazily.

Names map to `"module:Class"` entry points imported on first use, so listing names costs
nothing. A name containing `:` is itself taken as an entry point, which lets a user (or a
test) plug in their own verifier class: `--verifier mypkg.graders:MyVerifier`.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.registry import load_attr
from rlvr.verifiers.base import Verifier

__all__ = ["VERIFIERS", "get_verifier", "verifier_names"]

VERIFIERS: dict[str, str] = {
    "math": "rlvr.verifiers.math:MathVerifier",
    "reasoning_gym": "rlvr.verifiers.reasoning_gym:ReasoningGymVerifier",
    "constant": "rlvr.verifiers.testing:ConstantVerifier",
    "code": "rlvr.verifiers.code:UnitTestVerifier",
    "sql": "rlvr.verifiers.sql:SQLVerifier",
    "terminal": "rlvr.verifiers.terminal:TerminalVerifier",
    "judge": "rlvr.verifiers.judge:JudgeVerifier",
    "ruler": "rlvr.verifiers.judge:RulerVerifier",
    "state": "rlvr.verifiers.state:StateVerifier",
}
"""Built-in verifier names → `"module:Class"`. SQL and code verifiers register here when they land."""


def verifier_names() -> list[str]:
    """The built-in verifier names, sorted."""
    return sorted(VERIFIERS)


def get_verifier(name: str, **config: Any) -> Verifier:
    """Build the verifier called `name` with keyword configuration `config`.

    Args:
        name: a built-in name (`math`, `reasoning_gym`, `constant`) or a `"module:Class"` entry point.
        **config: keyword arguments for the class (e.g. config fields such as `timeout_s=5`).

    Returns:
        A `Verifier` instance.

    Raises:
        ConfigError: unknown name (with close matches), an import failure, a config the class
            rejects, or an entry point that does not build a `Verifier`.
    """
    spec = VERIFIERS.get(name, name if ":" in name else None)
    if spec is None:
        close = difflib.get_close_matches(name, VERIFIERS, n=2)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown verifier {name!r}.{hint} Known: {', '.join(verifier_names())}, "
                          "or give 'module:Class'")
    cls = load_attr(spec)
    try:
        verifier = cls(**config)
    except (TypeError, ValueError) as exc:  # pydantic ValidationError is a ValueError
        raise ConfigError(_config_message(name, cls, config, exc)) from exc
    if not isinstance(verifier, Verifier):
        raise ConfigError(f"verifier entry point {spec!r} built a {type(verifier).__name__}, not a Verifier")
    _reject_unknown(name, cls, verifier, config)
    return verifier


def _config_message(name: str, cls: Any, config: dict[str, Any], exc: Exception) -> str:
    """Say which option was wrong: unknown names listed with the known ones, else the validation text."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        extra = sorted(str(e["loc"][-1]) for e in exc.errors() if e["type"] == "extra_forbidden")
        if extra:
            fields = sorted(_config_fields(cls))
            return (f"verifier {name!r} rejected its configuration: unknown option(s) {', '.join(extra)}; "
                    f"known: {', '.join(fields)}")
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return f"verifier {name!r} rejected its configuration {config!r}: {problems}"
    return f"verifier {name!r} rejected its configuration {config!r}: {exc}"


def _config_fields(cls: Any) -> set[str]:
    """Option names a verifier class accepts: its `__init__` parameters and its config model's fields."""
    params = inspect.signature(cls.__init__).parameters.values()
    named = {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)} - {"self"}
    config_type = inspect.get_annotations(cls, eval_str=False).get("config")
    model = getattr(load_attr(f"{cls.__module__}:{config_type}"), "model_fields", {}) if isinstance(
        config_type, str) and config_type.isidentifier() else {}
    return named | set(model)


def _reject_unknown(name: str, cls: Any, verifier: Verifier, config: dict[str, Any]) -> None:
    """Fail loudly on an option that is neither an `__init__` parameter nor a config field.

    A class taking `**overrides` could otherwise drop a typo (`timout_s=5`) without a word.
    """
    params = inspect.signature(cls.__init__).parameters.values()
    named = {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    fields = set(type(verifier.config).model_fields)
    unknown = sorted(set(config) - named - fields)
    if unknown:
        raise ConfigError(f"verifier {name!r} rejected its configuration: unknown option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted((named | fields) - {'self'}))}")
