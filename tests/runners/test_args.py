"""parse_env_args: KEY=VALUE strings to typed keyword arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.core.errors import ConfigError
from rlvr.runners.args import parse_env_args, parse_value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100", 100), ("0.5", 0.5), ("true", True), ("False", False), ("null", None), ("None", None),
        ("data/x.jsonl", "data/x.jsonl"), ('{"a": [1, "+"]}', {"a": [1, "+"]}), ('["+", "-"]', ["+", "-"]),
        ("", ""), ("a=b", "a=b"), ('"007"', "007"),
    ],
    ids=["int", "float", "json-bool", "py-bool", "null", "py-none", "path", "object", "list", "empty", "eq",
         "quoted"],
)
def test_parse_value(text: str, value: Any) -> None:
    assert parse_value(text) == value


def test_parse_env_args_nesting_and_override() -> None:
    args = parse_env_args(["size=8", "config.min_terms=2", "config.ops=[\"+\"]", "size=9", "path=a=b.jsonl"])
    assert args == {"size": 9, "config": {"min_terms": 2, "ops": ["+"]}, "path": "a=b.jsonl"}
    assert parse_env_args(None) == {}


@pytest.mark.parametrize("item", ["noequals", "=1", "1bad=2", "a..b=1"])
def test_malformed_items(item: str) -> None:
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_env_args([item])


def test_nesting_under_a_plain_value() -> None:
    with pytest.raises(ConfigError, match="cannot nest"):
        parse_env_args(["config=3", "config.a=1"])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(json_values)
def test_json_round_trip(value: Any) -> None:
    assert parse_env_args([f"k={json.dumps(value)}"]) == {"k": value}
