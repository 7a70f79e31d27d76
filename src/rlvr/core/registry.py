"""A registry of named things resolved lazily: environments under versioned ids, verifiers by name.

Modelled on Gymnasium's `envs/registration.py`: a name maps to an entry point `"package.module:attr"`
that is imported only when it is used, so registering costs nothing. One class serves both kinds
(`Registry(kind=...)`): environments (`rlvr.environments.registry`, ids `family/name-vN`) and
verifiers (`rlvr.verifiers.registry`, plain names such as `math`). Third-party packages add entries
through the kind's entry-point group (`rlvr.environments`, `rlvr.verifiers`): one entry per name
(entry name = the id, value = the factory or class), or an entry whose name is not a valid id and
whose value is a function `register(registry)` that registers several.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import ENV_ID_PATTERN

__all__ = ["Kind", "Registry", "load_attr"]

ENTRY_POINT_GROUP = "rlvr.environments"
"""The entry-point group of third-party environments."""


def load_attr(spec: str) -> Any:
    """Import `"package.module:attr.sub"` and return the attribute.

    Raises:
        ConfigError: if the string is malformed, the module cannot be imported or lacks the attr.
    """
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise ConfigError(f"entry point {spec!r} must look like 'package.module:attribute'")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import module {module_name!r} for entry point {spec!r}: {exc}") from exc
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ConfigError(f"module {module_name!r} has no attribute {attr_path!r} (entry point {spec!r})") from exc
    return obj


@dataclass(frozen=True)
class Kind:
    """What a registry holds, for its checks and messages.

    Attributes:
        noun: 'environment' or 'verifier', as messages name an entry.
        pattern: what a valid id looks like; a pattern with `family` and `name` groups lets an
            unknown id list the registered versions of the same family/name.
        form: the id's form for messages, e.g. "'family/name-vN', e.g. 'math/gsm8k-v1'".
        arg_flag: the command-line spelling of one factory argument, for messages (`--env-arg`).
        otherwise: said after the known ids when an id is unknown (e.g. "or give 'module:Class'").
    """

    noun: str
    pattern: re.Pattern[str]
    form: str
    arg_flag: str
    otherwise: str = ""


ENVIRONMENTS = Kind("environment", ENV_ID_PATTERN, "'family/name-vN', e.g. 'math/gsm8k-v1'", "--env-arg")
"""The kind of the environment registry: versioned ids `family/name-vN`."""


@dataclass(frozen=True)
class Registration:
    """One registered entry: its id, factory (or class) and default keyword arguments."""

    id: str
    entry_point: str | Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def load(self) -> Callable[..., Any]:
        """Return the factory, importing it if it is a `"module:attr"` string."""
        if callable(self.entry_point):
            return self.entry_point
        factory = load_attr(self.entry_point)
        if not callable(factory):
            raise ConfigError(f"entry point {self.entry_point!r} of {self.id!r} is not callable")
        return factory  # type: ignore[no-any-return]


class Registry:
    """Ids → factories (environments) or classes (verifiers). An object, not a global dict: make your own for tests.

    Args:
        entry_point_group: the `importlib.metadata` group scanned (once, lazily) for third-party
            entries, or None to disable plugin discovery.
        kind: what the registry holds (default: environments).
    """

    def __init__(self, entry_point_group: str | None = ENTRY_POINT_GROUP, kind: Kind = ENVIRONMENTS) -> None:
        self.kind = kind
        self._entries: dict[str, Registration] = {}
        self._group = entry_point_group
        self._plugins_loaded = entry_point_group is None
        self._lock = threading.RLock()

    def register(
        self,
        id: str,
        entry_point: str | Callable[..., Any],
        *,
        description: str = "",
        override: bool = False,
        **kwargs: Any,
    ) -> None:
        """Register `entry_point` (a `"module:attr"` string or a callable) under `id`.

        Raises:
            ConfigError: if `id` does not have the kind's form, or is taken and `override` is False.
        """
        if not self.kind.pattern.match(id):
            raise ConfigError(f"{self.kind.noun} id {id!r} must look like {self.kind.form}")
        with self._lock:
            if id in self._entries and not override:
                raise ConfigError(f"{self.kind.noun} {id!r} is already registered; pass override=True to replace it")
            self._entries[id] = Registration(id, entry_point, dict(kwargs), description)

    def spec(self, id: str) -> Registration:
        """Return the registration of `id`.

        Raises:
            ConfigError: if `id` is unknown; the message lists close matches and other versions.
        """
        with self._lock:
            if id not in self._entries:
                self._load_plugins()
            if id in self._entries:
                return self._entries[id]
            raise ConfigError(self._unknown_message(id))

    def make(self, id: str, **kwargs: Any) -> Any:
        """Build entry `id`; `kwargs` override the registered defaults.

        Raises:
            ConfigError: unknown id, or arguments the factory does not take / a required one missing
                (named, with the command-line spelling of the fix).
        """
        reg = self.spec(id)
        factory = reg.load()
        merged = {**reg.kwargs, **kwargs}
        try:
            inspect.signature(factory).bind(**merged)
        except TypeError as exc:
            raise ConfigError(
                f"{self.kind.noun} {id!r}: {exc} (pass factory arguments as keywords, on the command line "
                f"{self.kind.arg_flag} KEY=VALUE; docs/environments.md and docs/verifiers/ list each one's arguments)"
            ) from None
        except ValueError:  # no signature (a builtin or C callable): let the call report
            pass
        return factory(**merged)

    def ids(self) -> list[str]:
        """All registered ids (plugins included), sorted."""
        with self._lock:
            self._load_plugins()
            return sorted(self._entries)

    def __contains__(self, id: object) -> bool:
        if not isinstance(id, str):
            return False
        try:
            self.spec(id)
        except ConfigError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids())

    def __len__(self) -> int:
        return len(self.ids())

    def _unknown_message(self, id: str) -> str:
        known = sorted(self._entries)
        noun = self.kind.noun
        match = self.kind.pattern.match(id)
        if match and {"family", "name"} <= set(self.kind.pattern.groupindex):
            stem = f"{match['family']}/{match['name']}-v"
            versions = [k for k in known if k.startswith(stem)]
            if versions:
                return f"unknown {noun} {id!r}; registered versions: {', '.join(versions)}"
        close = difflib.get_close_matches(id, known, n=3, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        otherwise = f", {self.kind.otherwise}" if self.kind.otherwise else ""
        return f"unknown {noun} {id!r}.{hint} Registered: {', '.join(known) or 'none'}{otherwise}"

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        assert self._group is not None
        for ep in entry_points(group=self._group):
            if self.kind.pattern.match(ep.name):
                if ep.name not in self._entries:
                    self._entries[ep.name] = Registration(ep.name, ep.value, {}, f"plugin {ep.value}")
                continue
            hook = ep.load()
            if not callable(hook):
                raise ConfigError(f"entry point {ep.name}={ep.value} in group {self._group!r} is not callable")
            hook(self)
