"""What a tool handler works on (`ToolContext`) and the error it raises for a bad call (`ToolError`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autovend.errors import AutoVendError
from autovend.sim import Simulator
from autovend.tools.views import Views

if TYPE_CHECKING:
    from autovend.tools.sql import SqlSandbox


class ToolError(AutoVendError):
    """A tool call that cannot be carried out (malformed arguments, unknown id, refused query, ...).

    It never escapes a session: the session turns it into an error result whose message says what
    was wrong and how to call the tool instead; nothing was changed by the call.
    """


@dataclass(eq=False)
class ToolContext:
    """One episode's state as the handlers see it: the simulator, its views, the SQL sandbox, the notebook."""

    sim: Simulator
    views: Views
    sql: SqlSandbox
    notebook: str = ""
    memory_limit: int = 6_000
