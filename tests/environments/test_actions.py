"""Action parsing: native tool calls and text-tag actions (```bash, <sql>, Hermes <tool_call>)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rlvr.core.types import Message, ToolCall
from rlvr.environments.actions import TextTag, parse_actions, render_text_results

BASH = TextTag.fence("bash", tool="bash", argument="command")
SQL = TextTag.xml("sql", tool="execute_sql", argument="query")
HERMES = TextTag.hermes()
ALL = (BASH, SQL, HERMES)


def _assistant(content: str = "", calls: tuple[ToolCall, ...] | None = None) -> Message:
    return Message(role="assistant", content=content, tool_calls=calls)


def test_native_calls_in_order() -> None:
    msg = _assistant("thinking <sql>select 1</sql>", (
        ToolCall(id="a", name="calc", arguments='{"expression": "1+1"}'),
        ToolCall(id="b", name="calc", arguments=""),
    ))
    calls = parse_actions(msg, ALL)
    assert [(c.name, c.arguments, c.call_id, c.source, c.ok) for c in calls] == [
        ("calc", {"expression": "1+1"}, "a", "native", True),
        ("calc", {}, "b", "native", True),
    ]  # native calls win: the <sql> tag in the content is not read


@pytest.mark.parametrize(
    ("arguments", "error"),
    [("{expression: 1}", "not valid JSON"), ("[1, 2]", "must be a JSON object, got list"), ('"x"', "got str")],
    ids=["bad-json", "list", "string"],
)
def test_native_malformed_arguments_are_errors(arguments: str, error: str) -> None:
    (call,) = parse_actions(_assistant(calls=(ToolCall(id="c1", name="calc", arguments=arguments),)))
    assert call.name == "calc" and call.call_id == "c1" and not call.ok
    assert error in (call.error or "") and call.raw == arguments


def test_native_off_reads_text_tags() -> None:
    msg = _assistant("<sql>SELECT 2</sql>", (ToolCall(id="a", name="calc", arguments="{}"),))
    (call,) = parse_actions(msg, ALL, native=False)
    assert (call.name, call.arguments, call.source) == ("execute_sql", {"query": "SELECT 2"}, "text")


def test_text_tags_in_document_order() -> None:
    content = (
        "First look at the files.\n"
        "```bash\nls -la /tmp\necho done\n```\n"
        "Then query: <sql>\n  SELECT name FROM t\n</sql>\n"
        'And <tool_call>\n{"name": "calc", "arguments": {"expression": "2*3"}}\n</tool_call>\n'
        "```python\nprint('not an action')\n```\n"
    )
    calls = parse_actions(_assistant(content), ALL)
    assert [(c.name, c.arguments, c.call_id, c.source) for c in calls] == [
        ("bash", {"command": "ls -la /tmp\necho done"}, None, "text"),
        ("execute_sql", {"query": "SELECT name FROM t"}, None, "text"),
        ("calc", {"expression": "2*3"}, None, "text"),
    ]
    assert [c.tag for c in calls] == [BASH, SQL, HERMES]


def test_no_tags_configured_means_final_answer() -> None:
    assert parse_actions(_assistant("<sql>SELECT 1</sql>")) == []
    assert parse_actions(_assistant("The answer is 4."), ALL) == []
    assert parse_actions(_assistant(""), ALL) == []


@pytest.mark.parametrize(
    ("content", "name", "arguments"),
    [
        ('<tool_call>{"name": "calc", "parameters": {"expression": "1"}}</tool_call>', "calc", {"expression": "1"}),
        ('<tool_call>{"name": "calc", "arguments": "{\\"expression\\": \\"2\\"}"}</tool_call>', "calc",
         {"expression": "2"}),
        ('<tool_call>{"name": "ping"}</tool_call>', "ping", {}),
        ('<tool_call>{"name": "ping", "arguments": null}</tool_call>', "ping", {}),
    ],
    ids=["parameters-key", "double-encoded", "no-arguments", "null-arguments"],
)
def test_hermes_variants(content: str, name: str, arguments: dict[str, object]) -> None:
    (call,) = parse_actions(_assistant(content), [HERMES])
    assert call.ok and (call.name, call.arguments) == (name, arguments)


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ('<tool_call>{"name": "calc", "arguments": {"expression": 1+1}}</tool_call>', "not valid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', 'needs a "name" string'),
        ("<tool_call>[1]</tool_call>", 'needs a "name" string'),
        ('<tool_call>{"name": "calc", "arguments": "{oops"}</tool_call>', "arguments of the call to 'calc'"),
        ('<tool_call>{"name": "calc", "arguments": [1]}</tool_call>', "must be a JSON object, got list"),
        ('<tool_call>{"name": "calc", "arguments": {}}', "<tool_call> is not closed; end it with </tool_call>"),
        ("```bash\nls\n", "```bash is not closed; end it with ```"),
        ("<sql>SELECT", "<sql> is not closed"),
    ],
    ids=["bad-json", "no-name", "not-object", "bad-string-args", "list-args", "unclosed-hermes", "unclosed-fence",
         "unclosed-xml"],
)
def test_text_parse_errors_are_data(content: str, error: str) -> None:
    (call,) = parse_actions(_assistant(content), ALL)
    assert not call.ok and error in (call.error or "")
    assert call.source == "text"


def test_fence_needs_its_own_line_and_language() -> None:
    assert parse_actions(_assistant("inline ```bash ls``` is not a block"), [BASH]) == []
    assert parse_actions(_assistant("```sh\nls\n```"), [BASH]) == []
    (call,) = parse_actions(_assistant("  ```bash\nls\n  ```"), [BASH])
    assert call.arguments == {"command": "ls"}


def test_text_tag_validation() -> None:
    with pytest.raises(ValidationError, match="needs tool= and argument="):
        TextTag(kind="xml", label="sql")
    with pytest.raises(ValidationError):
        TextTag.xml("s q l", tool="x", argument="y")


def test_render_text_results_uses_templates() -> None:
    calls = parse_actions(_assistant('<sql>SELECT 1</sql> <tool_call>{"name": "calc"}</tool_call>'), ALL)
    text = render_text_results([(calls[0], "1"), (calls[1], "Error: boom")])
    assert text == "1\n<tool_response>\nError: boom\n</tool_response>"


def test_wire_format_tool_calls_round_trip() -> None:
    msg = _assistant("", (ToolCall(id="a", name="calc", arguments='{"expression": "1"}'),))
    wire = msg.to_openai()
    assert wire["tool_calls"][0] == {"id": "a", "type": "function",
                                     "function": {"name": "calc", "arguments": '{"expression": "1"}'}}
    assert Message.model_validate(wire) == msg
    decoded = Message.model_validate({"role": "assistant", "content": "", "tool_calls": [
        {"id": "b", "type": "function", "function": {"name": "calc", "arguments": {"expression": "2"}}}]})
    (call,) = parse_actions(decoded)
    assert (call.call_id, call.arguments) == ("b", {"expression": "2"})


_TAG_TEXT = st.text(alphabet=st.sampled_from(list("<>/{}[]\":, `\nabcsqltool_cahermbs123")), max_size=120)


@settings(max_examples=200, deadline=None)
@given(content=st.one_of(_TAG_TEXT, st.text(max_size=200)))
def test_parsing_never_raises_on_arbitrary_text(content: str) -> None:
    for call in parse_actions(_assistant(content), ALL):
        assert call.source == "text" and (call.ok or call.error)
        assert call.ok == (call.error is None) and isinstance(call.arguments, dict)


@settings(max_examples=100, deadline=None)
@given(arguments=st.text(max_size=80))
def test_native_arguments_never_raise(arguments: str) -> None:
    (call,) = parse_actions(_assistant(calls=(ToolCall(id="x", name="t", arguments=arguments),)))
    assert isinstance(call.arguments, dict) and (call.ok or "JSON" in (call.error or ""))
    assert call.ok == (call.error is None) and (call.ok or call.arguments == {})


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('<sql>SELECT \'<tool_call>{"name": "x"}</tool_call>\'</sql>',
         [("execute_sql", {"query": 'SELECT \'<tool_call>{"name": "x"}</tool_call>\''})]),
        ('```bash\necho \'<tool_call>{"name": "bash", "arguments": {"command": "rm"}}</tool_call>\'\n```',
         [("bash", {"command": 'echo \'<tool_call>{"name": "bash", "arguments": {"command": "rm"}}</tool_call>\''})]),
        ('<tool_call>{"name": "py", "arguments": {"code": "x = 1\\n```bash\\nls\\n```"}}</tool_call>',
         [("py", {"code": "x = 1\n```bash\nls\n```"})]),
        ("```bash\r\nls -la\r\n```\r\n<sql>SELECT 1</sql>", [("bash", {"command": "ls -la"}),
                                                           ("execute_sql", {"query": "SELECT 1"})]),
    ],
    ids=["hermes-inside-sql", "hermes-inside-fence", "fence-inside-hermes-json", "crlf-fence"],
)
def test_text_actions_do_not_nest(content: str, expected: list[tuple[str, dict[str, str]]]) -> None:
    calls = parse_actions(Message(role="assistant", content=content), ALL)
    assert [(c.name, c.arguments) for c in calls] == expected and all(c.ok for c in calls)


@pytest.mark.parametrize(
    ("raw", "arguments", "error"),
    [("null", {}, None), ('"{\\"a\\": 1}"', {"a": 1}, None), ("   ", {}, None), ('"x"', {}, ""),
     ("[1]", {}, "got list")],
)
def test_native_arguments_decoded_like_text_ones(raw: str, arguments: dict[str, int], error: str | None) -> None:
    # error: None = parsed; a text = an error containing it ('' = any error)
    call = ToolCall(id="1", name="a", arguments=raw)
    native = parse_actions(Message(role="assistant", content="", tool_calls=(call,)))
    body = f'{{"name": "a", "arguments": {raw if raw.strip() else "null"}}}'
    text = parse_actions(Message(role="assistant", content=f"<tool_call>{body}</tool_call>"), ALL)
    for parsed in (native[0], text[0]):
        assert parsed.arguments == arguments
        assert (parsed.error is None) if error is None else (error in str(parsed.error))
