"""The 18 agent tools (one definition), the in-process `ToolSession` and the MCP server.

`from autovend.tools import ToolSession` for in-process use; the MCP server lives in
`autovend.tools.mcp_server` (imported on demand: the SDK is slow to import).
"""

from autovend.tools.registry import TOOLS, TOOLS_BY_NAME, ToolDef
from autovend.tools.session import ToolResult, ToolSession

__all__ = ["TOOLS", "TOOLS_BY_NAME", "ToolDef", "ToolResult", "ToolSession"]
