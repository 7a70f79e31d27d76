"""A registry of environments under versioned ids, resolved lazily.

Modelled on Gymnasium's `envs/registration.py`: an id `family/name-vN` maps to an entry point
`"package.module:factory"` that is imported only when the environment is made, so registering
costs nothing. Third-party packages add environments through the entry-point group
`rlvr.environments`, either one entry per environment (name = env id, value = factory) or one
entry whose value is a function `register(registry)` that registers several.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import ENV_ID_PATTERN

__all__ = ["ENTRY_POINT_GROUP", "EnvRegistration", "Registry", "load_attr"]

ENTRY_POINT_GROUP = "rlvr.environments"


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
class EnvRegistration:
    """One registered environment: its id, factory and default keyword arguments."""

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
    """Environment ids → factories. An object, not a global dict: make your own for tests.

    Args:
        entry_point_group: the `importlib.metadata` group scanned (once, lazily) for third-party
            environments, or None to disable plugin discovery.
    """

    def __init__(self, entry_point_group: str | None = ENTRY_POINT_GROUP) -> None:
        self._envs: dict[str, EnvRegistration] = {}
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
            ConfigError: if `id` is not `family/name-vN`, or is taken and `override` is False.
        """
        if not ENV_ID_PATTERN.match(id):
            raise ConfigError(f"environment id {id!r} must look like 'family/name-vN', e.g. 'math/gsm8k-v1'")
        with self._lock:
            if id in self._envs and not override:
                raise ConfigError(f"environment {id!r} is already registered; pass override=True to replace it")
            self._envs[id] = EnvRegistration(id, entry_point, dict(kwargs), description)

    def spec(self, id: str) -> EnvRegistration:
        """Return the registration of `id`.

        Raises:
            ConfigError: if `id` is unknown; the message lists close matches and other versions.
        """
        with self._lock:
            if id not in self._envs:
                self._load_plugins()
            if id in self._envs:
                return self._envs[id]
            raise ConfigError(self._unknown_message(id))

    def make(self, id: str, **kwargs: Any) -> Any:
        """Build environment `id`; `kwargs` override the registered defaults.

        Raises:
            ConfigError: unknown id, or arguments the factory does not take / a required one missing
                (named, with the `--env-arg KEY=VALUE` spelling of the fix).
        """
        reg = self.spec(id)
        factory = reg.load()
        merged = {**reg.kwargs, **kwargs}
        try:
            inspect.signature(factory).bind(**merged)
        except TypeError as exc:
            raise ConfigError(
                f"environment {id!r}: {exc} (pass factory arguments as keywords, on the command line "
                f"--env-arg KEY=VALUE; the README's environment table lists each one's arguments)"
            ) from None
        except ValueError:  # no signature (a builtin or C callable): let the call report
            pass
        return factory(**merged)

    def ids(self) -> list[str]:
        """All registered ids (plugins included), sorted."""
        with self._lock:
            self._load_plugins()
            return sorted(self._envs)

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
        known = sorted(self._envs)
        match = ENV_ID_PATTERN.match(id)
        if match:
            stem = f"{match['family']}/{match['name']}-v"
            versions = [k for k in known if k.startswith(stem)]
            if versions:
                return f"unknown environment {id!r}; registered versions: {', '.join(versions)}"
        close = difflib.get_close_matches(id, known, n=3, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        return f"unknown environment {id!r}.{hint} Registered: {', '.join(known) or 'none'}"

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        assert self._group is not None
        for ep in entry_points(group=self._group):
            if ENV_ID_PATTERN.match(ep.name):
                if ep.name not in self._envs:
                    self._envs[ep.name] = EnvRegistration(ep.name, ep.value, {}, f"plugin {ep.value}")
                continue
            hook = ep.load()
            if not callable(hook):
                raise ConfigError(f"entry point {ep.name}={ep.value} in group {self._group!r} is not callable")
            hook(self)
