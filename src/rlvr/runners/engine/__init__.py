"""Verification engines: where `rlvr verify` (and `rlvr eval`) score rows.

- `local` (default): this machine's warm verifier worker processes.
- `ray`: Ray actors across a cluster (`pip install 'rlvr[ray]'`), see `ray_engine`.

`make_engine(name, verifier, ...)` builds one; `Engine.run(batches, keys)` scores batches of
`(row_id, JSON text)` rows, and `Engine.verify_pairs(pairs)` scores `(response, reference)` pairs.
"""

from __future__ import annotations

from rlvr.core.errors import ConfigError
from rlvr.runners.engine.base import Engine
from rlvr.runners.engine.local import LocalEngine
from rlvr.verifiers.base import Verifier

__all__ = ["ENGINES", "engine_class", "make_engine"]

ENGINES = ("local", "ray")
"""The `--engine` names."""


def engine_class(name: str) -> type[Engine]:
    """The engine class called `name` (`local` or `ray`), without starting anything (Ray is imported lazily).

    Raises:
        ConfigError: unknown engine name.
    """
    if name == "local":
        return LocalEngine
    if name == "ray":
        from rlvr.runners.engine.ray_engine import RayEngine

        return RayEngine
    raise ConfigError(f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}")


def make_engine(name: str, verifier: Verifier, workers: int | None = None, address: str | None = None) -> Engine:
    """Build the engine called `name`.

    Args:
        name: `local` or `ray`.
        verifier: the verifier every worker runs.
        workers: local: verifier processes (default 1); ray: actors (default: every cluster CPU).
        address: ray only: `auto`, `HOST:PORT`, or None (Ray's default: `RAY_ADDRESS` or a new local cluster).

    Raises:
        ConfigError: unknown engine name, or an address given to the local engine.
        MissingExtraError: `ray` without Ray installed.
        BackendError: the Ray cluster cannot be reached or cannot build the verifier.
    """
    if engine_class(name) is LocalEngine:
        if address is not None:
            raise ConfigError("--ray-address needs --engine ray")
        return LocalEngine(verifier, workers or 1)
    from rlvr.runners.engine.ray_engine import RayEngine

    return RayEngine(verifier, workers, address)
