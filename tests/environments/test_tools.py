"""Tools: JSON schema golden cases, argument validation, sync/async timeouts, errors as text."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Annotated, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from rlvr.core.errors import ConfigError
from rlvr.environments.tools import Tool, ToolError, run_with_timeout, tool


def documented(city: str, days: int = 3, unit: Literal["c", "f"] = "c", note: Optional[str] = None) -> str:  # noqa: UP045
    """Get the weather forecast.

    Looks the city up in the forecast table.

    Args:
        city: city name, e.g. 'Paris'.
        days: number of days to forecast.
        unit: temperature unit.
        note: free text.

    Returns:
        The forecast.
    """
    return f"{city}:{days}:{unit}:{note}"


class Point(BaseModel):
    x: float
    y: float


def typed(xs: list[int], flag: bool, ratio: float | None = 0.5, tags: tuple[str, ...] = (), point: Point | None = None,
          json: str = "") -> dict[str, object]:
    """Many types."""
    return {"xs": xs, "flag": flag, "ratio": ratio, "point": point.x if point else None, "json": json}


GOLDEN = [
    pytest.param(documented, {
        "type": "function",
        "function": {
            "name": "documented",
            "description": "Get the weather forecast.\n\nLooks the city up in the forecast table.",
            "parameters": {
                "additionalProperties": False,
                "properties": {
                    "city": {"description": "city name, e.g. 'Paris'.", "type": "string"},
                    "days": {"default": 3, "description": "number of days to forecast.", "type": "integer"},
                    "unit": {"default": "c", "description": "temperature unit.", "enum": ["c", "f"], "type": "string"},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                             "description": "free text."},
                },
                "required": ["city"],
                "type": "object",
            },
        },
    }, id="docstring-defaults-literal-optional"),
    pytest.param(typed, {
        "type": "function",
        "function": {
            "name": "typed",
            "description": "Many types.",
            "parameters": {
                "$defs": {"Point": {"properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                                    "required": ["x", "y"], "type": "object"}},
                "additionalProperties": False,
                "properties": {
                    "xs": {"items": {"type": "integer"}, "type": "array"},
                    "flag": {"type": "boolean"},
                    "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": 0.5},
                    "tags": {"default": [], "items": {"type": "string"}, "type": "array"},
                    "point": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}], "default": None},
                    "json": {"default": "", "type": "string"},
                },
                "required": ["xs", "flag"],
                "type": "object",
            },
        },
    }, id="list-bool-union-tuple-model-reserved-name"),
]


@pytest.mark.parametrize(("fn", "expected"), GOLDEN)
def test_schema_golden(fn: object, expected: dict[str, object]) -> None:
    assert Tool(fn).schema == expected  # type: ignore[arg-type]


def test_no_parameters_and_overrides() -> None:
    @tool(name="ping-1", description="Say pong.", timeout_s=1)
    def ping() -> str:
        return "pong"

    assert ping.schema == {"type": "function", "function": {
        "name": "ping-1", "description": "Say pong.",
        "parameters": {"additionalProperties": False, "properties": {}, "type": "object"}}}
    assert ping() == "pong"  # the object still calls the plain function
    assert asyncio.run(ping.call(None)) == "pong"


def test_bound_method_and_async_schema() -> None:
    class Db:
        async def query(self, sql: str) -> list[int]:
            """Run SQL.

            Args:
                sql: the query.
            """
            await asyncio.sleep(0)
            return [len(sql)]

    t = Tool(Db().query)
    assert t.parameters["properties"] == {"sql": {"description": "the query.", "type": "string"}}
    assert asyncio.run(t.call('{"sql": "select 1"}')) == "[8]"


@pytest.mark.parametrize(
    ("fn_src", "match"),
    [
        ("def f(*args: int) -> None: ...", r"\*args"),
        ("def f(**kw: int) -> None: ...", r"\*args/\*\*kwargs"),
        ("def f(a: int, /) -> None: ...", "positional-only"),
    ],
    ids=["varargs", "varkw", "positional-only"],
)
def test_unsupported_signatures(fn_src: str, match: str) -> None:
    scope: dict[str, object] = {}
    exec(fn_src, scope)  # building test functions from source, not user input
    with pytest.raises(ConfigError, match=match):
        Tool(scope["f"])  # type: ignore[arg-type]


def test_bad_name_and_timeout() -> None:
    with pytest.raises(ConfigError, match="must match"):
        Tool(documented, name="has space")
    with pytest.raises(ConfigError, match="timeout_s"):
        Tool(documented, timeout_s=0)
    with pytest.raises(ConfigError, match="no JSON schema"):
        Tool(_takes_lock)


def _takes_lock(lock: threading.Lock) -> None:
    """A parameter type pydantic cannot describe."""


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"city": "Paris"}', "Paris:3:c:None"),
        ({"city": "Oslo", "days": "5", "unit": "f"}, "Oslo:5:f:None"),  # lax: "5" -> 5
        ('{"city": "Rome", "note": "hi"}', "Rome:3:c:hi"),
    ],
)
def test_call_validates_and_coerces(arguments: object, expected: str) -> None:
    assert asyncio.run(Tool(documented).call(arguments)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ("{city: Paris}", "not valid JSON"),
        ('["Paris"]', "must be a JSON object, got list"),
        ("{}", "missing required argument 'city'"),
        ('{"city": "Paris", "weeks": 2}', "unknown argument 'weeks'"),
        ('{"city": "Paris", "unit": "k"}', "argument 'unit'"),
        ('{"city": "Paris", "days": "many"}', "argument 'days'"),
    ],
    ids=["bad-json", "not-object", "missing", "unknown", "bad-literal", "bad-int"],
)
def test_bad_arguments_raise_tool_error(arguments: str, match: str) -> None:
    with pytest.raises(ToolError, match=match):
        asyncio.run(Tool(documented).call(arguments))


def test_nested_model_argument_reaches_function_as_model() -> None:
    out = asyncio.run(Tool(typed).call({"xs": ["1", 2], "flag": True, "point": {"x": 1.5, "y": 2}}))
    assert out == '{"xs":[1,2],"flag":true,"ratio":0.5,"point":1.5,"json":""}'


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # let the abandoned worker thread finish


def test_sync_tool_timeout(release: threading.Event) -> None:
    @tool(timeout_s=0.2)
    def stuck() -> str:
        """Never answers in time."""
        release.wait(30)
        return "late"

    start = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 0\.\d s \(limit 0\.2 s\)"):
        asyncio.run(stuck.call({}))
    assert time.monotonic() - start < 5  # asyncio.run did not join the stuck thread


def test_async_tool_timeout() -> None:
    @tool(timeout_s=0.1)
    async def sleepy() -> str:
        """Sleeps too long."""
        await asyncio.sleep(30)
        return "late"

    with pytest.raises(ToolError, match="timed out"):
        asyncio.run(sleepy.call())


def test_tool_exceptions_become_tool_errors() -> None:
    @tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    @tool
    async def boom() -> None:
        """Raises."""
        raise RuntimeError("kaput")

    @tool
    def refuse() -> None:
        """Reports a problem in the model's input itself."""
        raise ToolError("bad input: try again")

    with pytest.raises(ToolError, match="tool 'divide' failed: ZeroDivisionError"):
        asyncio.run(divide.call({"a": 1, "b": 0}))
    with pytest.raises(ToolError, match="RuntimeError: kaput"):
        asyncio.run(boom.call())
    with pytest.raises(ToolError, match=r"^bad input: try again$"):
        asyncio.run(refuse.call())


def test_output_serialisation_and_cap() -> None:
    @tool(max_output_chars=10)
    def long() -> str:
        """Long output."""
        return "x" * 25

    @tool
    def obj() -> object:
        """Not JSON serialisable."""
        return threading.Lock()

    out = asyncio.run(long.call())
    assert out.startswith("x" * 10 + "\n[output truncated: 25 characters")
    assert "lock" in asyncio.run(obj.call()).lower()


def test_run_with_timeout_passes_results_and_errors() -> None:
    async def main() -> tuple[int, str]:
        value = await run_with_timeout(lambda: 41 + 1, 1.0)
        try:
            await run_with_timeout(lambda: int("x"), 1.0)
        except ValueError as exc:
            return value, str(exc)
        return value, ""

    assert asyncio.run(main()) == (42, "invalid literal for int() with base 10: 'x'")


def _takes_callback(callback: Callable[[int], int]) -> None:
    """Valid for pydantic, but a callable has no JSON schema."""


def test_callable_parameter_has_no_schema() -> None:
    with pytest.raises(ConfigError, match="no JSON schema"):
        Tool(_takes_callback)


def test_stuck_workers_do_not_block_later_calls(release: threading.Event) -> None:
    async def main() -> list[object]:
        stuck = [run_with_timeout(lambda: release.wait(30), 0.1) for _ in range(3)]
        fine = [run_with_timeout(lambda: 7, 5.0) for _ in range(3)]
        return await asyncio.gather(*stuck, *fine, return_exceptions=True)

    results = asyncio.run(main())
    assert [type(r) for r in results[:3]] == [TimeoutError] * 3 and results[3:] == [7, 7, 7]
    release.set()  # the stuck workers finish and are reused
    assert asyncio.run(run_with_timeout(lambda: "again", 5.0)) == "again"


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
