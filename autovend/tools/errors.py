"""The error a tool handler raises for a bad call (`ToolError`)."""

from __future__ import annotations

from autovend.errors import AutoVendError


class ToolError(AutoVendError):
    """A tool call that cannot be carried out (malformed arguments, unknown id, refused query, ...).

    It never escapes a session: the session turns it into an error result whose message says what
    was wrong and how to call the tool instead; nothing was changed by the call.
    """
