"""An MCP server's tool listing as the OpenAI tool schemas a policy sees, and argument checks against it.

`openai_tools(listing)` maps `tools/list` entries (wire JSON: `name`, `description`, `inputSchema`)
to `{"type": "function", "function": {"name", "description", "parameters"}}`. A tool is refused
when the model could not be shown or call it faithfully: a name outside OpenAI's function names
(`^[a-zA-Z0-9_-]{1,64}$`), a name listed twice, an `inputSchema` that is not an object schema or
not a valid JSON Schema (checked with `jsonschema`'s validator for the schema's own `$schema`,
Draft 2020-12 by default, as MCP specifies). `ArgumentCheck` validates a call's arguments against
the listed schema before anything is sent, so a malformed call is answered by rlvr in the same
words for every server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__: list[str] = []

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Tool names the OpenAI API accepts (chat-completions `function.name`)."""


@dataclass(frozen=True)
class InvalidTool:
    """A listed tool that cannot be offered, and why."""

    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name!r}: {self.reason}"


def _validator_class(schema: Mapping[str, Any]) -> Any:
    import jsonschema.validators

    return jsonschema.validators.validator_for(schema, default=jsonschema.validators.Draft202012Validator)


def _schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot be a tool's parameters (None when it can)."""
    import jsonschema.exceptions

    if not isinstance(schema, dict):
        return f"inputSchema is a {type(schema).__name__}, not a JSON object"
    if schema.get("type") != "object":
        return f"inputSchema has type {schema.get('type')!r}; MCP tool inputs are object schemas"
    try:
        _validator_class(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return f"inputSchema is not a valid JSON Schema: {exc.message}"
    except (TypeError, ValueError, RecursionError) as exc:  # a $schema URI jsonschema rejects, deep nesting
        return f"inputSchema cannot be checked: {type(exc).__name__}: {exc}"
    return None


def openai_tools(listing: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[InvalidTool]]:
    """(OpenAI tool schemas, refused tools) of a `tools/list` listing, in listing order.

    A refused tool is left out of the schemas (a name listed twice: both copies).
    """
    counts: dict[str, int] = {}
    for entry in listing:
        counts[str(entry.get("name"))] = counts.get(str(entry.get("name")), 0) + 1
    tools: list[dict[str, Any]] = []
    invalid: list[InvalidTool] = []
    for entry in listing:
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            invalid.append(InvalidTool(str(name), "the name is not an OpenAI function name "
                                                  "(^[a-zA-Z0-9_-]{1,64}$)"))
            continue
        if counts[name] > 1:
            invalid.append(InvalidTool(name, f"listed {counts[name]} times"))
            continue
        problem = _schema_problem(entry.get("inputSchema"))
        if problem is not None:
            invalid.append(InvalidTool(name, problem))
            continue
        description = entry.get("description")
        tools.append({"type": "function", "function": {
            "name": name, "description": description if isinstance(description, str) else "",
            "parameters": dict(entry["inputSchema"])}})
    return tools, invalid


class ArgumentCheck:
    """Validates call arguments against the tools' listed parameter schemas (one compiled validator per tool)."""

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None:
        self._validators = {t["function"]["name"]: _validator_class(t["function"]["parameters"])(
            t["function"]["parameters"]) for t in tools}

    def problem(self, name: str, arguments: Any) -> str | None:
        """Why `arguments` do not fit tool `name`'s schema, for the model (None when they do)."""
        validator = self._validators[name]
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        shown = []
        for error in errors[:3]:
            where = "/".join(str(p) for p in error.absolute_path)
            shown.append(f"{where or 'arguments'}: {_short(error.message)}")
        more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
        return f"invalid arguments for tool {name!r}: " + "; ".join(shown) + more


def _short(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


def same_tools(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> bool:
    """True when two tool-schema lists are equal (order included)."""
    return json.dumps(list(a), sort_keys=True) == json.dumps(list(b), sort_keys=True)
