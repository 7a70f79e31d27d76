r"""Parse an assistant message into tool calls: native `tool_calls` or text-tag actions.

Two sources, in this order of precedence:

- **native**: `message.tool_calls` (OpenAI chat-completions format, arguments a JSON string).
  When a message has native calls, text tags in its content are not parsed.
- **text**: actions written in the content, for models or servers without tool-call parsing.
  Each environment chooses which `TextTag`s it reads:
  `TextTag.fence("bash", tool="bash", argument="command")` reads ```` ```bash ... ``` ```` blocks,
  `TextTag.xml("sql", tool="execute_sql", argument="query")` reads `<sql>...</sql>`, and
  `TextTag.hermes()` reads Hermes / Qwen2.5 style `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
  (the format of Qwen2.5's chat template and NousResearch's Hermes function calling).

Actions do not nest: a match that starts inside an earlier one (a `<tool_call>` written inside a
```` ```bash ```` block, ```` ``` ```` inside a `<tool_call>` argument) is part of that action's body,
not a second call. Native and text `arguments` are decoded the same way: a JSON object, a
JSON-encoded string holding one (some models double-encode), or null/empty for no arguments.

Parse failures are data, not exceptions: `parse_actions` returns a `ParsedCall` whose `error`
is set (malformed JSON arguments, a `<tool_call>` without a name, an unclosed tag), and the
environment answers it with the error text so the model can fix its call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlvr.core.types import Message

__all__ = ["TextTag", "parse_actions"]

HERMES_RESPONSE_TEMPLATE = "<tool_response>\n{output}\n</tool_response>"
"""How Qwen2.5's chat template wraps a tool's answer; used for text-tag `<tool_call>` answers."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ParsedCall(BaseModel):
    """One tool call found in an assistant message (or the reason it could not be read)."""

    model_config = _FROZEN

    name: str = Field(description="Tool name ('' when the call had none).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Decoded arguments ({} on a parse error).")
    call_id: str | None = Field(default=None, description="Native call id; None for text-tag calls.")
    source: Literal["native", "text"] = Field(description="Where the call came from.")
    tag: TextTag | None = Field(default=None, description="The text tag that matched (text calls only).")
    raw: str = Field(default="", description="The raw arguments text or tag body, as written by the model.")
    error: str | None = Field(default=None, description="Why the call could not be parsed; None when it was.")

    @property
    def ok(self) -> bool:
        """True when the call was parsed (no `error`)."""
        return self.error is None


class TextTag(BaseModel):
    r"""One kind of text-tag action an environment reads from assistant content.

    Build with `TextTag.fence`, `TextTag.xml` or `TextTag.hermes`.

    Attributes:
        kind: 'fence' (```` ```label ... ``` ````), 'xml' (`<label>...</label>`, the body is one
            argument), or 'json' (`<label>{"name": ..., "arguments": {...}}</label>`).
        label: the fence language or tag name.
        tool: tool called with the body ('fence'/'xml'); the JSON names it for 'json'.
        argument: argument name receiving the body ('fence'/'xml').
        response_template: how the tool's answer is written back in the user observation
            message, with `{output}` (and `{name}`) placeholders.
    """

    model_config = _FROZEN

    kind: Literal["fence", "xml", "json"]
    label: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.+-]+$")
    tool: str | None = None
    argument: str | None = None
    response_template: str = "{output}"

    @model_validator(mode="after")
    def _target_named(self) -> TextTag:
        if self.kind != "json" and not (self.tool and self.argument):
            raise ValueError(f"a {self.kind!r} text tag needs tool= and argument= (the tool called with its body)")
        return self

    @classmethod
    def fence(cls, language: str, tool: str, argument: str, response_template: str = "{output}") -> TextTag:
        """Markdown fenced blocks ```` ```language ... ``` ````: call `tool(argument=body)`."""
        return cls(kind="fence", label=language, tool=tool, argument=argument, response_template=response_template)

    @classmethod
    def xml(cls, tag: str, tool: str, argument: str, response_template: str = "{output}") -> TextTag:
        """`<tag>body</tag>`: call `tool(argument=body)`."""
        return cls(kind="xml", label=tag, tool=tool, argument=argument, response_template=response_template)

    @classmethod
    def hermes(cls, tag: str = "tool_call", response_template: str = HERMES_RESPONSE_TEMPLATE) -> TextTag:
        """`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes / Qwen2.5 format)."""
        return cls(kind="json", label=tag, response_template=response_template)

    def pattern(self) -> re.Pattern[str]:
        """Regex matching one action (group 'body'), or an unclosed one at the end (no 'close' group)."""
        label = re.escape(self.label)
        if self.kind == "fence":
            return re.compile(rf"^[ \t]*```{label}[ \t]*\r?\n(?P<body>.*?)(?P<close>^[ \t]*```[ \t]*\r?$|\Z)",
                              re.DOTALL | re.MULTILINE)
        return re.compile(rf"<{label}>(?P<body>.*?)(?P<close></{label}>|\Z)", re.DOTALL)


ParsedCall.model_rebuild()


def _decode_arguments(name: str, arguments: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments dict, error) from a decoded `arguments` value: an object, a JSON string of one, or null."""
    if isinstance(arguments, str):  # a JSON string (native calls), or a double-encoded one
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return {}, f"arguments of the call to {name!r} are not valid JSON: {exc}"
        if isinstance(arguments, str):  # double-encoded: '"{\\"a\\": 1}"'
            return _decode_arguments(name, arguments) if arguments.strip().startswith("{") else \
                ({}, f"arguments of the call to {name!r} must be a JSON object, got str")
    if arguments is None:
        return {}, None
    if not isinstance(arguments, dict):
        return {}, f"arguments of the call to {name!r} must be a JSON object, got {type(arguments).__name__}"
    return arguments, None


def _native(message: Message) -> list[ParsedCall]:
    calls = []
    for call in message.tool_calls or ():
        raw = call.arguments or ""
        arguments, error = _decode_arguments(call.name, raw)
        calls.append(ParsedCall(name=call.name, arguments=arguments, call_id=call.id, source="native", raw=raw,
                                error=error))
    return calls


def _from_json_body(tag: TextTag, body: str) -> ParsedCall:
    """Decode a Hermes-style `{"name": ..., "arguments": {...}}` body ("parameters" is accepted too)."""
    where = f"<{tag.label}>"
    try:
        data = json.loads(body)
    except ValueError as exc:
        return ParsedCall(name="", source="text", tag=tag, raw=body,
                          error=f"the {where} body is not valid JSON: {exc}; write "
                                f'{where}{{"name": "TOOL", "arguments": {{...}}}}</{tag.label}>')
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        return ParsedCall(name="", source="text", tag=tag, raw=body,
                          error=f'the {where} JSON needs a "name" string and an "arguments" object')
    name = data["name"]
    arguments, error = _decode_arguments(name, data.get("arguments", data.get("parameters", {})))
    return ParsedCall(name=name, arguments=arguments, source="text", tag=tag, raw=body, error=error)


def _match_call(match: re.Match[str], tag: TextTag) -> ParsedCall:
    body = match.group("body")
    if not match.group("close"):
        opener = f"```{tag.label}" if tag.kind == "fence" else f"<{tag.label}>"
        closer = "```" if tag.kind == "fence" else f"</{tag.label}>"
        return ParsedCall(name=tag.tool or "", source="text", tag=tag, raw=body,
                          error=f"{opener} is not closed; end it with {closer}")
    if tag.kind == "json":
        return _from_json_body(tag, body.strip())
    text = body.strip("\r\n") if tag.kind == "fence" else body.strip()
    return ParsedCall(name=tag.tool or "", arguments={tag.argument or "": text}, source="text", tag=tag, raw=body)


def _text(content: str, tags: Sequence[TextTag]) -> list[ParsedCall]:
    matches = sorted(((m, tag) for tag in tags for m in tag.pattern().finditer(content)),
                     key=lambda item: (item[0].start(), -item[0].end()))
    calls: list[ParsedCall] = []
    end = 0
    for match, tag in matches:
        if match.start() < end:  # inside an earlier action's body: part of it, not a call of its own
            continue
        end = match.end()
        calls.append(_match_call(match, tag))
    return calls


def parse_actions(message: Message, text_tags: Sequence[TextTag] = (), *, native: bool = True) -> list[ParsedCall]:
    """Tool calls of an assistant message, in the order written.

    Args:
        message: the assistant message.
        text_tags: the text-tag actions to read from the content (none by default).
        native: read `message.tool_calls` (when present, text tags are not read).

    Returns:
        The calls; an entry with `error` set is a call that could not be parsed. An empty list
        means the message is a final answer.
    """
    if native and message.tool_calls:
        return _native(message)
    if not text_tags or not message.content:
        return []
    return _text(message.content, text_tags)


def render_text_results(results: Sequence[tuple[ParsedCall, str]]) -> str:
    """One observation text for the answers to text-tag calls, each in its tag's `response_template`."""
    parts = []
    for call, output in results:
        template = call.tag.response_template if call.tag is not None else "{output}"
        parts.append(template.replace("{name}", call.name).replace("{output}", output))
    return "\n".join(parts)
