"""An MCP tool listing as OpenAI tool schemas: what is refused and why; argument checks against the listing."""

from __future__ import annotations

import pytest

from rlvr.environments.mcp.tools import ArgumentCheck, openai_tools

pytestmark = pytest.mark.extras

GOOD = {"name": "add", "description": "Add two numbers.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a", "b"]}}


def test_a_valid_tool_becomes_an_openai_function_schema() -> None:
    tools, invalid = openai_tools([GOOD])
    assert invalid == []
    assert tools == [{"type": "function", "function": {"name": "add", "description": "Add two numbers.",
                                                       "parameters": GOOD["inputSchema"]}}]


@pytest.mark.parametrize(("entry", "reason"), [
    ({**GOOD, "name": "files/read"}, "not an OpenAI function name"),
    ({**GOOD, "name": "x" * 65}, "not an OpenAI function name"),
    ({**GOOD, "name": "bad", "inputSchema": {"type": "string"}}, "MCP tool inputs are object schemas"),
    ({**GOOD, "name": "bad", "inputSchema": ["type", "object"]}, "not a JSON object"),
    ({**GOOD, "name": "bad", "inputSchema": {"type": "object", "properties": {"a": {"type": "int"}}}},
     "not a valid JSON Schema"),
    ({**GOOD, "name": "bad", "inputSchema": {"type": "object", "required": "a"}}, "not a valid JSON Schema"),
], ids=["slash-name", "long-name", "string-schema", "list-schema", "unknown-type", "required-not-list"])
def test_tools_a_model_cannot_be_shown_are_refused_with_the_reason(entry: dict[str, object], reason: str) -> None:
    tools, invalid = openai_tools([GOOD, entry])
    assert [t["function"]["name"] for t in tools] == ["add"]
    (refused,) = invalid
    assert reason in refused.reason


def test_a_name_listed_twice_refuses_both_copies() -> None:
    tools, invalid = openai_tools([GOOD, GOOD])
    assert tools == []
    assert [str(i) for i in invalid] == ["'add': listed 2 times", "'add': listed 2 times"]


def test_argument_check_names_each_problem_for_the_model() -> None:
    tools, _ = openai_tools([GOOD])
    check = ArgumentCheck(tools)
    assert check.problem("add", {"a": 1, "b": 2}) is None
    assert check.problem("add", {"a": "1"}) == ("invalid arguments for tool 'add': arguments: 'b' is a required "
                                                "property; a: '1' is not of type 'integer'")
    assert check.problem("add", []) == "invalid arguments for tool 'add': arguments: [] is not of type 'object'"
