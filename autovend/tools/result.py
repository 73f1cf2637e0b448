"""`ToolResult`: the outcome of one tool call, as every transport (in process, MCP) returns it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autovend.tools.trajectory import dumps


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call: `ok`, the JSON-ready `content`, and the `error` message when not ok.

    A batch with rejected items is still `ok` (the rejections are in the content); `ok` is False
    only when the call as a whole was refused. `text` is `content` as compact JSON.
    """

    ok: bool
    content: dict[str, Any]
    error: str | None = None
    text: str = field(default="", repr=False)

    def to_json(self) -> str:
        """The content as compact JSON text."""
        return self.text or dumps(self.content)
