"""An rlvr environment's tools as methods of a TRL `environment_factory` class.

TRL 1.16 turns every public method of an `environment_factory` class into a tool, its schema read
by transformers' `get_json_schema` from the signature and google docstring. `tool_methods(env)`
makes one method per tool of an rlvr environment with the tool's own signature and description
(from its rlvr `Tool`, or from its OpenAI schema alone when the tool runs elsewhere, e.g. on a
remote OpenEnv server); each method calls `self._call_tool(name, arguments)`, one episode step of
the generated class (`rlvr.adapters.trl.agent`).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rlvr.core.errors import AdapterError, ConfigError

if TYPE_CHECKING:
    from rlvr.environments.base import Environment
    from rlvr.environments.tools import Tool

__all__: list[str] = []


def _google_docstring(tool: Tool) -> str:
    """A google-style docstring for `tool`: description, then `Args:` with every parameter.

    transformers' `get_json_schema` (which TRL uses for environment methods) requires a description
    for every argument; a parameter rlvr documents without one gets its name as description.
    """
    lines = [tool.description.strip() or tool.name]
    properties = tool.parameters.get("properties", {})
    if properties:
        lines += ["", "Args:"]
        for pname, schema in properties.items():
            text = " ".join(str(schema.get("description") or pname).split())
            lines.append(f"    {pname}: {text}")
    return "\n".join(lines)


def _tool_method(tool: Tool) -> Callable[..., str]:
    """A method `(self, <tool parameters>) -> str` named after `tool` that runs it in the rlvr env."""
    signature = inspect.signature(tool.fn)
    try:
        hints = typing.get_type_hints(tool.fn)
    except (NameError, TypeError) as exc:
        raise AdapterError(f"tool {tool.name!r}: cannot resolve its type hints for TRL: {exc}") from exc
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY if p.kind is inspect.Parameter.KEYWORD_ONLY
                         else inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hints.get(p.name, p.annotation))
               for p in signature.parameters.values()]
    name = tool.name
    names = list(signature.parameters)

    def method(self: Any, *args: Any, **kwargs: Any) -> str:
        # every argument goes to the rlvr tool, whose validation answers unknown/missing/mistyped ones for the model
        arguments = {**dict(zip(names, args, strict=False)), **kwargs}
        answer: str = self._call_tool(name, arguments)
        return answer

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _google_docstring(tool)
    # no return annotation: transformers would add a "return" entry that rlvr's schema does not have
    method.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    method.__annotations__ = {k: v for k, v in hints.items() if k != "return"}
    return method


_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                               "object": dict}


def _json_annotation(name: str, tool: str, schema: Mapping[str, Any]) -> Any:
    """The Python type transformers' `get_json_schema` turns back into `schema` (JSON types, enums)."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return typing.Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    options = schema.get("anyOf", schema.get("oneOf"))
    if kind is None and isinstance(options, list) and all(isinstance(o, Mapping) for o in options):
        kind = [o.get("type") for o in options]  # pydantic's Optional[X]: anyOf [{type: X}, {type: null}]
    if isinstance(kind, list):  # ["string", "null"] and the like
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind not in _JSON_TYPES:
        raise ConfigError(f"tool {tool!r}: parameter {name!r} has no single JSON type ({dict(schema)}); TRL's "
                          "environment_factory cannot offer it: train through rollout_func (--multi-turn rollout_func)")
    return _JSON_TYPES[kind]


def _schema_method(schema: Mapping[str, Any]) -> tuple[str, Callable[..., str]]:
    """A method `(self, <parameters>) -> str` for a tool known only by its OpenAI schema.

    The tool's code runs elsewhere (e.g. on a remote OpenEnv server): a call is one episode step
    with a native tool call.

    Returns:
        (tool name, method). Optional parameters default to None and are left out of the call.

    Raises:
        ConfigError: the schema is not an OpenAI function schema, or a parameter has no single JSON type.
    """
    function = schema.get("function") if isinstance(schema, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise ConfigError(f"tool schema {schema!r} is not an OpenAI function schema "
                          '({"type": "function", "function": {"name", "parameters"}})')
    name = function["name"]
    parameters = function.get("parameters") or {}
    properties: Mapping[str, Any] = parameters.get("properties") or {}
    required = set(parameters.get("required") or ())
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    hints: dict[str, Any] = {}
    for pname in sorted(properties, key=lambda n: n not in required):  # required first: no default after one
        kind = _json_annotation(pname, name, properties[pname])
        hints[pname] = kind if pname in required else kind | None
        params.append(inspect.Parameter(pname, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hints[pname],
                                        default=inspect.Parameter.empty if pname in required else None))
    names = [p.name for p in params[1:]]
    optional = set(names) - required

    def method(self: Any, *args: Any, **kwargs: Any) -> str:
        arguments = {**dict(zip(names, args, strict=False)), **kwargs}
        arguments = {k: v for k, v in arguments.items() if not (k in optional and v is None)}
        answer: str = self._call_tool(name, arguments)
        return answer

    method.__name__ = method.__qualname__ = name
    lines = [str(function.get("description") or name).strip()]
    if properties:
        lines += ["", "Args:"]
        lines += [f"    {p}: {' '.join(str(properties[p].get('description') or p).split())}" for p in names]
    method.__doc__ = "\n".join(lines)
    method.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    method.__annotations__ = hints
    return name, method



def check_trl_schema(env_id: str, name: str, method: Callable[..., str]) -> None:
    """Fail now, naming the tool, when transformers' `get_json_schema` (TRL's tool schemas) cannot read `method`."""
    try:
        from transformers.utils import get_json_schema
    except ImportError:  # without transformers there is no TRL to show the schema to
        return
    try:
        get_json_schema(method)
    except Exception as exc:  # transformers raises TypeHintParsingException / DocstringParsingException
        raise ConfigError(f"tool {name!r} of {env_id!r} cannot be offered through TRL's environment_factory: "
                          f"transformers' get_json_schema, which TRL uses for tool schemas, fails on it ({exc}). "
                          "Give its parameters JSON types (str, int, float, bool, list, dict, Literal, Optional, "
                          "Enum), or train with the rollout_func path (rlvr.adapters.trl.rollout), which uses "
                          "rlvr's own schema") from exc


def tool_methods(env: Environment) -> list[tuple[str, Callable[..., str], Any]]:
    """(name, method, source) per tool of `env`.

    From its rlvr `Tool`s (a `ToolEnv`), else from its tool schemas alone (`spec.tools`: tools that
    run elsewhere, e.g. on a remote OpenEnv server); the source is the Tool or the schema.
    """
    tools = getattr(env, "tools", None)
    if isinstance(tools, Mapping):
        tools = list(tools.values())
    if isinstance(tools, Sequence) and not isinstance(tools, str) and tools:
        return [(t.name, _tool_method(t), t) for t in tools]
    return [(*_schema_method(schema), schema) for schema in env.spec.tools]

