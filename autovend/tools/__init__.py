"""The 18 agent tools (one definition), the in-process `ToolSession` and the MCP server.

`from autovend.tools import ToolSession` for in-process use; the MCP server lives in
`autovend.tools.mcp_server` (imported on demand: the SDK is slow to import). `ToolSession` is loaded
on first use: it is a transport over `autovend.env`, which itself builds on the tool modules here.
"""

from typing import Any

from autovend.tools.registry import TOOLS, TOOLS_BY_NAME, ToolDef
from autovend.tools.result import ToolResult

__all__ = ["TOOLS", "TOOLS_BY_NAME", "ToolDef", "ToolResult", "ToolSession"]


def __getattr__(name: str) -> Any:
    if name == "ToolSession":
        from autovend.tools.session import ToolSession

        return ToolSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
