"""Tools: typed Python functions offered to the policy with an OpenAI JSON schema.

`tool` turns a sync or async function into a `Tool`. The parameter schema comes from the
signature through pydantic (`create_model(...).model_json_schema()`), so types, defaults,
`Optional`, `Literal`, lists and pydantic models map the way pydantic maps them; descriptions
come from the google-style docstring (parsed by `docstring-parser`): the summary and body
describe the tool, the `Args:` section describes each parameter.

`await Tool.call(arguments)` validates the model's arguments (a JSON string or a dict) against
the same pydantic model (lax mode: `"3"` is accepted for an `int`), then runs the function under
`timeout_s` seconds: async functions with `asyncio.wait_for`, sync functions in a daemon thread
that the caller stops waiting for at the deadline. Every failure -- arguments that are not JSON,
fail validation or name unknown parameters, a timeout, an exception in the tool -- raises
`ToolError` with a message written for the model; `ToolEnv` sends it back as the tool's answer.
That includes `SystemExit` and other `BaseException`s raised by the tool's own code (argparse
and click call `sys.exit` on bad input); only `KeyboardInterrupt` and the cancellation of the
caller (`asyncio.CancelledError`) propagate: a stop request is never turned into a tool answer.

Timeouts cannot kill a thread (Python has no way to): a sync tool past its deadline keeps its
daemon thread until it returns, and a sync tool that holds the GIL inside one C call (a huge
integer power) cannot even be interrupted. Tools must bound their own work (as the calculator
tool does) or run it in a subprocess.

Example:
    >>> @tool(timeout_s=2.0)
    ... def add(a: int, b: int = 1) -> int:
    ...     '''Add two integers.
    ...
    ...     Args:
    ...         a: first term.
    ...         b: second term.
    ...     '''
    ...     return a + b
    >>> add.schema["function"]["parameters"]["required"]
    ['a']
    >>> import asyncio; asyncio.run(add.call('{"a": 2, "b": "3"}'))
    '5'
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import os
import queue
import re
import threading
import time
import typing
from collections.abc import Callable
from typing import Any, TypeVar, overload

import docstring_parser
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, ValidationError, create_model
from pydantic.fields import FieldInfo

from rlvr.core.errors import ConfigError, RlvrError

__all__ = ["Tool", "tool"]

T = TypeVar("T")

_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Tool names the OpenAI API accepts (`^[a-zA-Z0-9_-]{1,64}$`, chat-completions `function.name`)."""

MAX_OUTPUT_CHARS = 16_000
"""Default cap on the length of a tool's answer, characters; longer answers are cut with a note."""


class ToolError(RlvrError):
    """A tool call failed: bad arguments, timeout, or an exception inside the tool.

    The message is meant for the model (it becomes the tool message's content). Tools may raise
    it themselves to report a problem in the model's input (e.g. "division by zero").
    """


class _DaemonWorkers:
    """Reusable daemon threads for blocking calls.

    A worker runs one job at a time and rejoins the idle list when the job returns, however late:
    a job whose caller stopped waiting keeps its worker until then, and new jobs start new workers.
    At most `max_idle` idle workers are kept; the others exit. Reusing threads saves starting one
    per call; daemon threads never block interpreter exit or `asyncio.run`.
    """

    def __init__(self, max_idle: int = 32) -> None:
        self.max_idle = max_idle
        self._idle: list[queue.SimpleQueue[Callable[[], None]]] = []
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)  # a forked child has none of these threads

    def _forget(self) -> None:
        self._idle = []
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        """Run `job()` (which must not raise) on an idle worker, or on a new one."""
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(inbox,), name="rlvr-worker", daemon=True).start()
        inbox.put(job)

    def _work(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            inbox.get()()
            with self._lock:
                if len(self._idle) >= self.max_idle:
                    return
                self._idle.append(inbox)


_WORKERS = _DaemonWorkers()

_STOP = (KeyboardInterrupt, asyncio.CancelledError, GeneratorExit)
"""Exceptions that always propagate out of `Tool.call`: a stop request, never a tool answer."""


async def run_with_timeout(fn: Callable[[], T], timeout_s: float | None, what: str = "call") -> T:
    """Run the blocking `fn()` in a daemon worker thread and wait at most `timeout_s` seconds for it.

    Unlike `asyncio.to_thread`, the thread is not in the event loop's default executor, so a
    call that never returns does not block `asyncio.run` at shutdown (which joins that executor).
    Threads are reused (`_DaemonWorkers`); one stuck past its deadline stays busy until `fn` returns.

    Args:
        fn: a callable without arguments.
        timeout_s: seconds to wait; None waits forever.
        what: what is running, for the timeout message.

    Returns:
        `fn()`'s result.

    Raises:
        TimeoutError: past `timeout_s` (the thread keeps running until `fn` returns).
        BaseException: whatever `fn` raised.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():  # the caller gave up (timeout or cancel)
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def target() -> None:
        try:
            result: Any = fn()
            ok = True
        except BaseException as exc:  # handed to the waiting coroutine, re-raised there
            result, ok = exc, False
        with contextlib.suppress(RuntimeError):  # the loop closed while this thread ran past its deadline
            loop.call_soon_threadsafe(deliver, ok, result)

    _WORKERS.submit(target)
    try:
        return await asyncio.wait_for(future, timeout_s)
    except asyncio.TimeoutError as exc:  # an alias of TimeoutError from 3.11; distinct on 3.10
        raise TimeoutError(f"{what} did not finish within {timeout_s:g} s") from exc


def _describe_docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """(tool description, {parameter: description}) from a google-style (or other) docstring."""
    doc = inspect.getdoc(fn)
    if not doc:
        return "", {}
    parsed = docstring_parser.parse(doc)
    text = "\n\n".join(part for part in (parsed.short_description, parsed.long_description) if part)
    return text, {p.arg_name: p.description for p in parsed.params if p.description}


def _arguments_model(fn: Callable[..., Any], name: str, param_docs: dict[str, str]) -> type[BaseModel]:
    """A pydantic model with one field per parameter of `fn` (the alias is the parameter name)."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError) as exc:
        raise ConfigError(f"tool {name!r}: cannot resolve the type hints of {fn!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    for i, (pname, param) in enumerate(signature.parameters.items()):
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ConfigError(f"tool {name!r}: *args/**kwargs ({pname!r}) cannot be described by a JSON schema; "
                              "name every parameter")
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise ConfigError(f"tool {name!r}: positional-only parameter {pname!r}; tools are called by keyword")
        annotation = hints.get(pname, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        if isinstance(default, FieldInfo):  # `x: int = Field(1, ge=0)`: pydantic reads it from Annotated
            annotation, default = typing.Annotated[annotation, default], ...
        # a docstring description wins; without one, an `Annotated[..., Field(description=...)]` one stays
        # internal field names avoid pydantic's reserved names ('json', 'schema', '_private');
        # the alias carries the real parameter name into the schema and validation.
        field = Field(default, alias=pname, description=param_docs[pname]) if pname in param_docs else \
            Field(default, alias=pname)
        fields[f"p{i}"] = (annotation, field)
    config = ConfigDict(extra="forbid", populate_by_name=False, arbitrary_types_allowed=False)
    try:
        model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)
    except (TypeError, ValueError, pydantic_core.SchemaError, PydanticUserError) as exc:
        raise ConfigError(f"tool {name!r}: a parameter type has no JSON schema: {exc}") from exc
    return model


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated `title` keys (not part of OpenAI tool schemas)."""
    if isinstance(schema, dict):
        return {k: (_strip_titles_map(v) if k in ("properties", "$defs") else _strip_titles(v))
                for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _strip_titles_map(mapping: Any) -> Any:
    """Strip titles inside each value of a name -> schema map (property names may be 'title')."""
    if isinstance(mapping, dict):
        return {k: _strip_titles(v) for k, v in mapping.items()}
    return mapping


def _format_validation_error(name: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown argument {loc!r}")
        elif err["type"] == "missing":
            problems.append(f"missing required argument {loc!r}")
        else:
            problems.append(f"argument {loc!r}: {err['msg']} (got {err.get('input')!r:.80})")
    return f"invalid arguments for tool {name!r}: " + "; ".join(problems)


def _to_text(value: Any, max_chars: int | None) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    else:
        try:
            text = pydantic_core.to_json(value).decode()
        except pydantic_core.PydanticSerializationError:
            text = str(value)
    return truncate_output(text, max_chars)


def truncate_output(text: str, max_chars: int | None) -> str:
    """`text` cut to its first `max_chars` characters, with a note saying so (None: no cap)."""
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + f"\n[output truncated: {len(text)} characters, showing the first {max_chars}]"
    return text


class Tool:
    """A typed function the policy can call, with its OpenAI JSON schema.

    Build one with the `tool` decorator (or `Tool(fn, ...)`). Calling the object directly
    (`t(a=1)`) runs the plain function, unvalidated and without timeout.

    Args:
        fn: a sync or async function; every parameter is passed by keyword.
        name: tool name (default: the function's `__name__`); `^[a-zA-Z0-9_-]{1,64}$`.
        description: tool description (default: docstring summary and body).
        timeout_s: per-call wall-clock limit, seconds (None: no limit).
        max_output_chars: answers longer than this are cut, with a note (None: no cap).

    Attributes:
        name: the tool name.
        description: the description shown to the model.
        parameters: JSON schema (an object schema) of the arguments.
        fn: the wrapped function.
        timeout_s: per-call limit, seconds.
        arguments_model: the pydantic model that validates arguments.

    Raises:
        ConfigError: bad name, `*args`/`**kwargs`, positional-only parameters, a type without a
            JSON schema, or a non-positive timeout.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout_s: float | None = 10.0,
        max_output_chars: int | None = MAX_OUTPUT_CHARS,
    ) -> None:
        if not callable(fn):
            raise ConfigError(f"Tool needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not _NAME_RE.match(self.name):
            raise ConfigError(f"tool name {self.name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$ (OpenAI function names); "
                              "pass name='...'")
        if timeout_s is not None and not timeout_s > 0:
            raise ConfigError(f"tool {self.name!r}: timeout_s must be > 0 seconds or None, got {timeout_s!r}")
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars
        doc_description, param_docs = _describe_docstring(fn)
        self.description = description if description is not None else doc_description
        self.arguments_model = _arguments_model(fn, self.name, param_docs)
        try:
            schema = self.arguments_model.model_json_schema(by_alias=True)
        except PydanticUserError as exc:  # e.g. a Callable parameter: valid to pydantic, no JSON schema
            raise ConfigError(f"tool {self.name!r}: a parameter type has no JSON schema: {exc}") from exc
        self.parameters: dict[str, Any] = _strip_titles(schema)
        self.parameters.setdefault("properties", {})
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
            raise ConfigError(f"tool {self.name!r} is a generator function; a tool returns its answer "
                              "(collect the items and return them)")

    @property
    def schema(self) -> dict[str, Any]:
        """OpenAI tool schema: `{"type": "function", "function": {"name", "description", "parameters"}}`."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def validate(self, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Parse and validate arguments; return keyword arguments for `fn` (validated, coerced values).

        Raises:
            ToolError: not a JSON object, unknown or missing arguments, or a wrong type.
        """
        if arguments is None or arguments == "":
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise ToolError(f"arguments for tool {self.name!r} are not valid JSON: {exc}") from exc
        if not isinstance(arguments, dict):
            raise ToolError(f"arguments for tool {self.name!r} must be a JSON object, got {type(arguments).__name__}")
        try:
            validated = self.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(_format_validation_error(self.name, exc)) from exc
        fields = self.arguments_model.model_fields
        return {field.alias or key: getattr(validated, key) for key, field in fields.items()}

    async def call(self, arguments: str | dict[str, Any] | None = None) -> str:
        """Validate `arguments`, run the tool under `timeout_s`, return its answer as text.

        Non-string results are serialised to JSON (pydantic's `to_json`), falling back to `str`.

        Raises:
            ToolError: bad arguments, timeout, or an exception inside the tool (message for the model).
        """
        kwargs = self.validate(arguments)
        start = time.monotonic()
        try:
            if self._is_async:
                result = await asyncio.wait_for(self._guarded(self.fn(**kwargs)), self.timeout_s)
            else:
                job = functools.partial(self.fn, **kwargs)
                result = await run_with_timeout(job, self.timeout_s, f"tool {self.name}")
        except ToolError:
            raise
        except (TimeoutError, asyncio.TimeoutError) as exc:
            limit = "none" if self.timeout_s is None else f"{self.timeout_s:g} s"
            raise ToolError(f"tool {self.name!r} timed out after {time.monotonic() - start:.1f} s "
                            f"(limit {limit})") from exc
        except _STOP:
            raise
        except BaseException as exc:  # the tool's own bug, a bad input it did not expect, its sys.exit: report
            raise self._failed(exc) from exc
        return _to_text(result, self.max_output_chars)

    def _failed(self, exc: BaseException) -> ToolError:
        return ToolError(f"tool {self.name!r} failed: {type(exc).__name__}: {exc}")

    async def _guarded(self, coro: typing.Awaitable[Any]) -> Any:
        """Await the tool's coroutine, turning a `SystemExit` (or other non-stop `BaseException`) into `ToolError`.

        asyncio re-raises `SystemExit` out of the event loop when a task raises it, so it must be
        caught inside the task that `wait_for` runs.
        """
        try:
            return await coro
        except _STOP:
            raise
        except Exception:
            raise
        except BaseException as exc:
            raise self._failed(exc) from exc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the plain function (no validation, no timeout)."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<Tool {self.name} timeout_s={self.timeout_s}>"


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float | None = 10.0,
    max_output_chars: int | None = MAX_OUTPUT_CHARS,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float | None = 10.0,
    max_output_chars: int | None = MAX_OUTPUT_CHARS,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a `Tool` from a function: `@tool` or `@tool(name=..., timeout_s=...)`.

    Args:
        fn: the function (when used as `@tool` without parentheses).
        name: tool name (default: the function name).
        description: description (default: from the docstring).
        timeout_s: per-call limit, seconds.
        max_output_chars: cap on the answer's length, characters.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(f, name=name, description=description, timeout_s=timeout_s, max_output_chars=max_output_chars)

    return wrap(fn) if fn is not None else wrap
