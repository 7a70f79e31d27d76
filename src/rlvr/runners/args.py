"""Parsing of `KEY=VALUE` command-line arguments (`--env-arg`, `--verifier-arg`, `--trainer-arg`).

`parse_env_args`: values arrive as strings; each is JSON-decoded when it is valid JSON, so `size=100`
gives the int 100, `strict=true` the bool True, `config={"min_terms": 2}` a dict, and
`path=data.jsonl` stays the string `"data.jsonl"`. Python spellings `True`/`False`/`None` are
accepted too. A dotted key nests: `config.min_terms=2` gives `{"config": {"min_terms": 2}}`.

`parse_flat_args` (the trainer options of veRL and OpenRLHF): dotted keys are kept whole (hydra
paths such as `trainer.save_freq`) and values stay the strings typed; the backend's command builder
reads them.

Example:
    >>> parse_env_args(["size=8", "task=chain_sum", "config.max_terms=3", "strict=True"])
    {'size': 8, 'task': 'chain_sum', 'config': {'max_terms': 3}, 'strict': True}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from rlvr.core.errors import ConfigError

__all__ = ["parse_env_args"]

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PYTHON_WORDS: dict[str, Any] = {"True": True, "False": False, "None": None}


def parse_value(text: str) -> Any:
    """Decode one value: JSON when it parses, Python's True/False/None, else the string itself.

    Args:
        text: the raw value (the part after the first `=`).

    Returns:
        An int, float, bool, None, list, dict or str.
    """
    stripped = text.strip()
    if stripped in _PYTHON_WORDS:
        return _PYTHON_WORDS[stripped]
    try:
        return json.loads(stripped)
    except ValueError:
        return text


def parse_env_args(items: Iterable[str] | None) -> dict[str, Any]:
    """Turn `["KEY=VALUE", ...]` into keyword arguments, decoding each value with `parse_value`.

    Args:
        items: strings of the form `KEY=VALUE` (the value may contain `=`); None gives `{}`.

    Returns:
        A dict of keyword arguments; dotted keys become nested dicts; a later key wins.

    Raises:
        ConfigError: if an item has no `=`, or its key is not an identifier (optionally dotted),
            or a dotted key collides with a plain value.
    """
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise ConfigError(f"argument {item!r} must look like KEY=VALUE (e.g. size=100 or config.min_terms=2)")
        *parents, leaf = key.split(".")
        target = out
        for i, part in enumerate(parents):
            node = target.setdefault(part, {})
            if not isinstance(node, dict):
                prefix = ".".join(parents[: i + 1])
                raise ConfigError(f"argument {item!r}: {prefix!r} was already given a plain value, so it cannot nest")
            target = node
        target[leaf] = parse_value(raw)
    return out


def parse_flat_args(items: Iterable[str] | None) -> dict[str, str]:
    """Turn `["KEY=VALUE", ...]` into `{KEY: VALUE}`: dotted keys kept whole, values the strings typed.

    Args:
        items: strings of the form `KEY=VALUE` (the value may contain `=`); None gives `{}`.

    Returns:
        A flat dict; a later key wins.

    Raises:
        ConfigError: an item without `=` or with an empty key.
    """
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"trainer argument {item!r} must look like KEY=VALUE (e.g. trainer.save_freq=10)")
        out[key.strip()] = raw
    return out
