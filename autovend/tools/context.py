"""What a tool handler works on (`ToolContext`), and the error it raises for a bad call (`ToolError`)."""

from __future__ import annotations

from dataclasses import dataclass

from autovend.sim import Simulator
from autovend.tools.errors import ToolError
from autovend.tools.sql import SqlSandbox
from autovend.tools.views import Views

__all__ = ["ToolContext", "ToolError"]  # ToolError is defined in tools.errors; handlers import both from here


@dataclass(eq=False)
class ToolContext:
    """One episode's state as the handlers see it: the simulator, its views, the SQL sandbox, the notebook."""

    sim: Simulator
    views: Views
    sql: SqlSandbox
    notebook: str = ""
    memory_limit: int = 6_000
