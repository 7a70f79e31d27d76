"""Review regressions for the multi-turn layer: tool schemas and failures, action parsing, calculator limits, copies."""

from __future__ import annotations

import asyncio
import copy
import sys
import time
from typing import Annotated

import pytest
from pydantic import Field

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, Task, ToolCall
from rlvr.environments.actions import TextTag, parse_actions
from rlvr.environments.calculator import evaluate
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import Tool, ToolError
from rlvr.verifiers.registry import get_verifier

TAGS = [TextTag.fence("bash", tool="bash", argument="command"),
        TextTag.xml("sql", tool="execute_sql", argument="query"), TextTag.hermes()]


# -- tool schemas ---------------------------------------------------------------------------------
def test_annotated_and_field_default_parameters() -> None:
    def search(q: Annotated[str, Field(description="the query")], k: int = Field(3, ge=1, description="results"),
               lang: Annotated[str, Field(description="ignored: the docstring wins")] = "en") -> str:
        """Search.

        Args:
            lang: language code.
        """
        return f"{q}/{k}/{lang}"

    t = Tool(search)
    props = t.parameters["properties"]
    assert props["q"] == {"description": "the query", "type": "string"}  # not dropped for lack of a docstring entry
    assert props["k"] == {"default": 3, "description": "results", "minimum": 1, "type": "integer"}
    assert props["lang"]["description"] == "language code."
    assert t.parameters["required"] == ["q"]
    assert asyncio.run(t.call({"q": "x"})) == "x/3/en"  # the default value, not the FieldInfo object
    with pytest.raises(ToolError, match="greater than or equal to 1"):
        asyncio.run(t.call({"q": "x", "k": 0}))


def test_generator_tools_are_config_errors() -> None:
    def items():  # type: ignore[no-untyped-def]
        """Yield."""
        yield 1

    async def aitems():  # type: ignore[no-untyped-def]
        """Yield."""
        yield 1

    for fn in (items, aitems):
        with pytest.raises(ConfigError, match="generator function"):
            Tool(fn)


# -- tool failures ------------------------------------------------------------------------------------
class _Custom(BaseException):
    pass


def _exit() -> str:
    """Exit like argparse does on bad input."""
    sys.exit(2)


async def _aexit() -> str:
    """Exit from a coroutine."""
    raise SystemExit(3)


def _custom() -> str:
    """Raise a BaseException subclass."""
    raise _Custom("boom")


def _interrupt() -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


@pytest.mark.parametrize(("fn", "message"),
                         [(_exit, "SystemExit: 2"), (_aexit, "SystemExit: 3"), (_custom, "_Custom: boom")])
def test_system_exit_and_base_exceptions_are_tool_errors(fn: object, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        asyncio.run(Tool(fn, timeout_s=2.0).call({}))  # type: ignore[arg-type]


def test_stop_requests_propagate() -> None:
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(Tool(_interrupt, timeout_s=2.0).call({}))

    async def slow() -> str:
        """Sleep."""
        await asyncio.sleep(10)
        return "late"

    async def cancel_it() -> None:
        task = asyncio.ensure_future(Tool(slow).call({}))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_it())


# -- action parsing ---------------------------------------------------------------------------------
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
    calls = parse_actions(Message(role="assistant", content=content), TAGS)
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
    text = parse_actions(Message(role="assistant", content=f"<tool_call>{body}</tool_call>"), TAGS)
    for parsed in (native[0], text[0]):
        assert parsed.arguments == arguments
        assert (parsed.error is None) if error is None else (error in str(parsed.error))


# -- calculator ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "expected"),
    [("0.30000000000000001 - 0.3", "0.00000000000000001"), ("12345678901234567890.5", "12345678901234567890.5"),
     ("1_000.5 * 2", "2001"), ("1e999 // 1e998", "10"), ("sin(10**100)", "-0.372376123661277"),
     ("log(1 + 10**-40)", "1e-40"), ("exp(-9000) * exp(9000)", "1")],
)
def test_calculator_reads_literals_exactly_and_keeps_argument_digits(expression: str, expected: str) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [("1e-999999", "too large or too small"), ("0." + "0" * 4001 + "1", "too long"),
     ("exp(10**3999)", "exp() argument"),
     ("exp(-10**3999)", "exp() argument"), ("10**(10**3999 + 1/2)", "digits"), ("4**(10**3999)", "digits"),
     ("0.5**(10**400)", "digits"), ("e**(10**100 + 1/2)", "digits"), ("exp(9000) * exp(9000)", "magnitude"),
     ("exp(exp(exp(10)))", "exp() argument")],
)
def test_calculator_refuses_huge_decimal_results_fast(expression: str, message: str) -> None:
    start = time.monotonic()
    with pytest.raises(ToolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(expression)  # before: 35-75 s of CPU (exp(10**3999)), OverflowError (4**(10**3999)), 0 (1e-999999)
    assert time.monotonic() - start < 2.0  # bounded work, generous for a shared CI machine


# -- copies of tool envs ---------------------------------------------------------------------------------------
class WhoAmIEnv(ToolEnv):
    """A tool env whose tool is a bound method reading the episode's task (like SQLToolEnv.execute_sql)."""

    def __init__(self) -> None:
        tasks = [Task(id=f"t{i}", prompt=(Message(role="user", content="q"),), reference=str(i)) for i in range(4)]
        super().__init__(tasks, get_verifier("math", scoring="inline"), EnvSpec(id="test/whoami-v1", max_turns=3),
                         [self.whoami])

    def whoami(self) -> str:
        """Name the current task."""
        return "none" if self.task is None else self.task.id


def test_shallow_copies_rebind_bound_method_tools() -> None:
    proto = WhoAmIEnv()
    clones = [copy.copy(proto) for _ in range(3)]  # what the rollout driver and the TRL adapter do per episode

    async def episode(env: ToolEnv, task: Task) -> str:
        await env.reset(task)
        result = await env.step(tool_call_message("whoami", {}))
        return result.messages[0].content

    async def run() -> list[str]:
        return await asyncio.gather(*(episode(c, t) for c, t in zip(clones, proto.tasks[1:], strict=True)))

    assert asyncio.run(run()) == ["t1", "t2", "t3"]  # before: every copy answered "none" (the prototype's task)
    assert proto.tools["whoami"].fn.__self__ is proto and all(c.verifier is proto.verifier for c in clones)
    assert all(c.tools["whoami"].schema == proto.tools["whoami"].schema for c in clones)
