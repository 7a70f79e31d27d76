"""Where a verifier is built: the verifier registry and `VerifierSpec`, the one description of a verifier.

- `registry`: names → `"module:Class"` (`rlvr verify --verifier math`), a `rlvr.core.registry.Registry`
  resolved lazily, so listing names costs nothing. Third-party verifiers register through the
  entry-point group `rlvr.verifiers` (entry name = verifier name, value = `"module:Class"`).
- `VerifierSpec`: a frozen value naming a verifier (a registered name or `"module:Class"`), its
  configuration and an optional wrapper (`FormatReward`). `spec.build()` makes a new verifier;
  `spec.cached()` returns the one verifier of this process for that spec (trainer workers score every
  sample with it). The spec a verifier was built from is remembered (`VerifierSpec.of(verifier)`; a
  wrapper records its inner verifier's plus itself): an export writes it down, and a trainer process
  rebuilds the verifier from it.
- `get_verifier(name, **config)`: `VerifierSpec(name=name, config=config).build()`.
"""

from __future__ import annotations

import atexit
import inspect
import json
import re
import threading
import weakref
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlvr.core.errors import ConfigError
from rlvr.core.registry import Kind, Registry, load_attr
from rlvr.verifiers.base import Verifier

__all__ = ["VerifierSpec", "get_verifier", "registry"]

ENTRY_POINT_GROUP = "rlvr.verifiers"
"""The entry-point group of third-party verifiers (entry name = verifier name, value = `"module:Class"`)."""

VERIFIERS = Kind("verifier", re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$"), "a name of letters, digits, '_' and '-' "
                 "(e.g. 'math')", "--verifier-arg", "or give 'module:Class'")
"""The kind of the verifier registry: plain names."""

registry = Registry(ENTRY_POINT_GROUP, VERIFIERS)
"""The process-wide verifier registry (plugins from the `rlvr.verifiers` entry-point group)."""

for _name, _entry, _about in (
    ("math", "rlvr.verifiers.math:MathVerifier", "Final math answers: extraction, symbolic/numeric equivalence."),
    ("reasoning_gym", "rlvr.verifiers.reasoning_gym:ReasoningGymVerifier", "reasoning-gym's own grader per task."),
    ("constant", "rlvr.verifiers.testing:ConstantVerifier", "Always the same verdict (a test double)."),
    ("code", "rlvr.verifiers.code:UnitTestVerifier", "Code against unit tests, run in rlvr.sandbox."),
    ("sql", "rlvr.verifiers.sql:SQLVerifier", "SQL scored by execution against a gold query."),
    ("terminal", "rlvr.verifiers.terminal:TerminalVerifier", "Terminal-Bench / Harbor / AgentBench-OS grading."),
    ("judge", "rlvr.verifiers.judge:JudgeVerifier", "A pointwise LLM judge (OpenAI-compatible endpoint)."),
    ("ruler", "rlvr.verifiers.judge:RulerVerifier", "RULER: one judge call scores a prompt's group."),
    ("state", "rlvr.verifiers.state:StateVerifier", "The state an episode's tools left, checked after it ends."),
):
    registry.register(_name, _entry, description=_about)


def verifier_names() -> list[str]:
    """The registered verifier names (plugins included), sorted."""
    return registry.ids()


class WrapperSpec(BaseModel):
    """A wrapper around the verifier of a spec: `Class(verifier, **args)`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The wrapper class as 'module:Class' (e.g. 'rlvr.verifiers.wrappers:FormatReward').")
    args: dict[str, Any] = Field(default_factory=dict, description="Its keyword arguments besides the verifier.")


class VerifierSpec(BaseModel):
    """Everything needed to build a verifier in any process; frozen, JSON-serialisable.

    Example:
        >>> spec = VerifierSpec(name="math", config={"timeout_s": 5})
        >>> verifier = spec.build()
        >>> VerifierSpec.of(verifier) == spec, verifier.config.timeout_s
        (True, 5.0)
        >>> verifier.close()
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="A registered verifier name (`verifier_names()`) or 'module:Class'.")
    config: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments of the class (config "
                                   "fields such as timeout_s; for `constant`, status and reward).")
    wrapper: WrapperSpec | None = Field(default=None, description="A wrapper around the built verifier, e.g. "
                                        "FormatReward.")

    @staticmethod
    def of(verifier: Verifier) -> VerifierSpec | None:
        """The spec `verifier` was built from (`build`, or `record`), None when it was built otherwise."""
        return _BUILT_FROM.get(verifier)

    def record(self, verifier: V) -> V:
        """Remember that `verifier` is what this spec describes (`of`); returns `verifier`.

        `build` records what it builds; a wrapper built directly records its inner verifier's spec with
        itself added (`with_wrapper`).
        """
        _BUILT_FROM[verifier] = self
        return verifier

    @classmethod
    def parse(cls, value: VerifierSpec | Mapping[str, Any] | str) -> VerifierSpec:
        """A spec from itself, its mapping or its JSON (as exports store it).

        Raises:
            ConfigError: `value` is not a spec (e.g. the spec of another `rlvr export` format).
        """
        if isinstance(value, VerifierSpec):
            return value
        try:
            return cls.model_validate_json(value) if isinstance(value, str) else cls.model_validate(dict(value))
        except (ValidationError, TypeError, ValueError) as exc:
            raise ConfigError(f"verifier spec {str(value)[:120]!r} is not one this rlvr writes ({_problems(exc)}); "
                              "re-run `rlvr export`") from exc

    def key(self) -> str:
        """The spec as canonical JSON (sorted keys): equal specs, equal keys."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)

    def with_wrapper(self, name: str, **args: Any) -> VerifierSpec:
        """This spec with `name(verifier, **args)` around its verifier."""
        return self.model_copy(update={"wrapper": WrapperSpec(name=name, args=args)})

    def build(self) -> Verifier:
        """A new verifier as this spec describes (`verifier.spec` is this spec).

        Raises:
            ConfigError: unknown name (with close matches), an import failure, a configuration the
                class rejects (unknown options are named with the known ones), or a class that does not
                build a `Verifier`.
        """
        cls = registry.spec(self.name).load() if ":" not in self.name else load_attr(self.name)
        verifier = self.model_copy(update={"wrapper": None}).record(_construct(self.name, cls, self.config))
        if self.wrapper is not None:
            wrapper = load_attr(self.wrapper.name)
            try:
                verifier = wrapper(verifier, **self.wrapper.args)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"verifier wrapper {self.wrapper.name!r} rejected its arguments "
                                  f"{self.wrapper.args!r}: {exc}") from exc
            if not isinstance(verifier, Verifier):
                raise ConfigError(f"verifier wrapper {self.wrapper.name!r} built a {type(verifier).__name__}, "
                                  "not a Verifier")
            self.record(verifier)
        return verifier

    def cached(self) -> Verifier:
        """The verifier of this spec in this process, built on first use and closed at exit.

        Trainer processes (veRL `compute_score`, OpenRLHF reward files, group rewards) score every
        sample with it. Close them all with `close_cached_verifiers`.

        Raises:
            ConfigError: see `build`.
        """
        key = self.key()
        with _CACHE_LOCK:
            verifier = _CACHE.get(key)
            if verifier is None:
                if not _CACHE:
                    atexit.register(close_cached_verifiers)
                verifier = _CACHE[key] = self.build()
            return verifier


V = TypeVar("V", bound=Verifier)

_BUILT_FROM: weakref.WeakKeyDictionary[Verifier, VerifierSpec] = weakref.WeakKeyDictionary()
"""Verifier → the spec it was built from (`VerifierSpec.of`); forgotten with the verifier."""

_CACHE: dict[str, Verifier] = {}
_CACHE_LOCK = threading.Lock()


def close_cached_verifiers() -> None:
    """Close and forget every verifier `VerifierSpec.cached` built (stops their worker pools)."""
    with _CACHE_LOCK:
        closing = list(_CACHE.values())
        _CACHE.clear()
    for verifier in closing:
        verifier.close()


def get_verifier(name: str, **config: Any) -> Verifier:
    """Build the verifier called `name` with keyword configuration `config` (`VerifierSpec(...).build()`).

    Args:
        name: a registered name (`math`, `code`, `sql`, ...) or a `"module:Class"` entry point.
        **config: keyword arguments for the class (e.g. config fields such as `timeout_s=5`).

    Raises:
        ConfigError: see `VerifierSpec.build`.
    """
    return VerifierSpec(name=name, config=config).build()


def _problems(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
    return str(exc)


def _construct(name: str, cls: Any, config: Mapping[str, Any]) -> Verifier:
    """`cls(**config)`, with a message naming the wrong option when the class rejects it."""
    if not (isinstance(cls, type) and issubclass(cls, Verifier)):
        raise ConfigError(f"verifier entry point {name!r} names a {getattr(cls, '__name__', type(cls).__name__)}, "
                          "not a Verifier class")
    try:
        verifier = cls(**config)
    except (TypeError, ValueError) as exc:  # pydantic ValidationError is a ValueError
        raise ConfigError(_config_message(name, cls, dict(config), exc)) from exc
    _reject_unknown(name, cls, verifier, config)
    return verifier


def _init_names(cls: Any) -> set[str]:
    """Keyword names of `cls.__init__` besides `self` and `*args`/`**kwargs`."""
    params = inspect.signature(cls.__init__).parameters.values()
    return {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)} - {"self"}


def _config_message(name: str, cls: Any, config: dict[str, Any], exc: Exception) -> str:
    """Say which option was wrong: unknown names listed with the known ones, else the validation text."""
    if isinstance(exc, ValidationError):
        extra = sorted(str(e["loc"][-1]) for e in exc.errors() if e["type"] == "extra_forbidden")
        if extra:
            known = _init_names(cls) | set(getattr(getattr(cls, "config_type", None), "model_fields", {}))
            return (f"verifier {name!r} rejected its configuration: unknown option(s) {', '.join(extra)}; "
                    f"known: {', '.join(sorted(known))}")
        return f"verifier {name!r} rejected its configuration {config!r}: {_problems(exc)}"
    return f"verifier {name!r} rejected its configuration {config!r}: {exc}"


def _reject_unknown(name: str, cls: Any, verifier: Verifier, config: Mapping[str, Any]) -> None:
    """Fail loudly on an option that is neither an `__init__` parameter nor a config field.

    A class taking `**overrides` could otherwise drop a typo (`timout_s=5`) without a word.
    """
    named = _init_names(cls)
    fields = set(type(verifier.config).model_fields)
    unknown = sorted(set(config) - named - fields)
    if unknown:
        raise ConfigError(f"verifier {name!r} rejected its configuration: unknown option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(named | fields))}")
