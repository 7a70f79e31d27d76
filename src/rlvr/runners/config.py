"""A command's options as one frozen, validated value: the base of `EvalConfig`, `SynthConfig` and `TrainConfig`.

Frozen and `extra="forbid"`, so a typo in a field name fails loudly and a config can be recorded
or compared as a whole; `build` turns pydantic's validation errors into one `ConfigError` whose
message names each bad field and says what it must be.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from rlvr.core.errors import ConfigError

__all__: list[str] = []

_Config = TypeVar("_Config", bound="CommandConfig")


class CommandConfig(BaseModel):
    """Base of the options of one run of an `rlvr` command (each field documented on the subclass)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def build(cls: type[_Config], **options: Any) -> _Config:
        """`cls(**options)`, a bad value raised as `ConfigError` naming the field and the fix.

        Raises:
            ConfigError: a missing, unknown or invalid field, or inconsistent fields (e.g. eval's k > n);
                several problems are joined with `; `, each `FIELD: why` (cross-field ones without FIELD).
        """
        try:
            return cls(**options)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                where = ".".join(str(part) for part in error["loc"])
                message = str(error["msg"]).removeprefix("Value error, ")
                problems.append(f"{where}: {message}" if where else message)
            raise ConfigError("; ".join(problems)) from None
