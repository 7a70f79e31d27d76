"""MCP tool environments: an MCP server's tools as an rlvr environment (`mcp/tools-v1`, `mcp/git-v1`).

`MCPToolEnv` (`rlvr.environments.mcp.env`) offers the tools a server lists and calls them through the
official MCP Python SDK (`rlvr.environments.mcp.connection`: a stdio server in rlvr's sandbox, or a
streamable-HTTP URL); `rlvr.environments.mcp.git` is the task family on the reference git server.
Importing this package does not import the SDK (the `mcp` extra).
"""

from rlvr.environments.mcp.connection import HTTPServer, StdioServer
from rlvr.environments.mcp.env import MCPToolEnv, StateCheck, StateCheckError, ToolCaller, make_mcp_tools

__all__ = ["HTTPServer", "MCPToolEnv", "StateCheck", "StateCheckError", "StdioServer", "ToolCaller",
           "make_mcp_tools"]
