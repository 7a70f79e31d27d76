"""A real MCP stdio server (the SDK's low-level `Server`) whose tools misbehave on request.

    python misbehaving.py [--bad-schema] [--slow-start SECONDS] [--http PORT]

Tools: `echo(text)`; `hang(seconds)` (sleeps in the event loop, ignoring nothing but a kill);
`crash()` (the process exits mid-call); `flood_stderr(mb)`; `huge(mb)` (one answer of `mb` MiB);
`malformed()` (writes a non-JSON line on the protocol pipe, then answers); `mutate()` (adds a tool and
sends `notifications/tools/list_changed`); `escape(port)` (tries the network, the host's files and
/tmp, and says what happened); `spawn()` (starts a long-sleeping child and answers its pid).
`--bad-schema` adds a tool whose inputSchema is not a valid JSON Schema; `--http PORT` serves streamable
HTTP on 127.0.0.1:PORT/mcp instead of stdio.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

WIRE = os.dup(1)  # the protocol pipe, kept before the SDK points fd 1 at stderr
MUTATED = []


def tool(name: str, properties: dict, required: tuple = ()) -> types.Tool:
    return types.Tool(name=name, description=f"the {name} tool",
                      input_schema={"type": "object", "properties": properties, "required": list(required)})


TOOLS = [
    tool("echo", {"text": {"type": "string"}}, ("text",)),
    tool("hang", {"seconds": {"type": "number"}}),
    tool("crash", {}),
    tool("flood_stderr", {"mb": {"type": "integer"}}, ("mb",)),
    tool("huge", {"mb": {"type": "integer"}}, ("mb",)),
    tool("malformed", {}),
    tool("mutate", {}),
    tool("escape", {"port": {"type": "integer"}}, ("port",)),
    tool("spawn", {}),
]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def escape(port: int) -> dict:
    seen = {}
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
            conn.sendall(b"escaped\n")
        seen["network"] = "connected"
    except OSError as exc:
        seen["network"] = f"refused: {type(exc).__name__}"
    for path in ("/tmp/rlvr-mcp-escape-marker", "/root/rlvr-mcp-escape-marker", "/etc/rlvr-mcp-escape-marker"):
        try:
            with open(path, "w") as f:
                f.write("escaped")
            seen[path] = "written"
        except OSError as exc:
            seen[path] = f"refused: {type(exc).__name__}"
    seen["uid"] = os.getuid()
    seen["cwd"] = os.getcwd()
    return seen


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name == "echo":
        return text(str(args["text"]))
    if name == "hang":
        await anyio.sleep(float(args.get("seconds", 3600)))
        return text("woke up")
    if name == "crash":
        os._exit(3)
    if name == "flood_stderr":
        chunk = b"e" * (1 << 20)
        for _ in range(int(args["mb"])):
            os.write(2, chunk)
        return text("flooded")
    if name == "huge":
        return text("x" * (int(args["mb"]) << 20))
    if name == "malformed":
        os.write(WIRE, b"this is not JSON-RPC\n")
        return text("ok")
    if name == "mutate":
        MUTATED.append(tool("surprise", {}))
        await ctx.session.send_tool_list_changed()
        return text("mutated")
    if name == "escape":
        return text(json.dumps(escape(int(args["port"]))))
    if name == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)  # rlvr-mcp-orphan-marker"],
                                 start_new_session=True)
        return text(str(child.pid))
    if name in ("bad", "surprise"):
        return text(name)
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"no tool {name}")], is_error=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bad-schema", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--http", type=int, default=0)
    options = parser.parse_args()
    time.sleep(options.slow_start)
    extra = [types.Tool(name="bad", description="an invalid schema",
                        input_schema={"type": "object", "properties": {"x": {"type": "no-such-type"}}})] \
        if options.bad_schema else []

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[*TOOLS, *extra, *MUTATED])

    server = Server("misbehaving", on_list_tools=list_tools, on_call_tool=call_tool)
    if options.http:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=options.http, log_level="warning")
        return

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
