"""The 18 agent tools, defined once: arguments, handlers, results, SQL sandbox, views and prompts.

This package sits below the environment (`autovend.env`), which serves these tools to an agent; it imports
nothing from the environment or from the doors above it (`autovend.session` for in-process agents,
`autovend.mcp` for MCP clients; see tests/test_layers.py).
"""

from autovend.tools.registry import TOOLS, TOOLS_BY_NAME, ToolDef
from autovend.tools.result import ToolResult

__all__ = ["TOOLS", "TOOLS_BY_NAME", "ToolDef", "ToolResult"]
