"""The error a tool handler raises for a bad call (`ToolError`), and the codes every refused call carries.

A refused call (a `ToolResult` with `ok` False) has a message that says what was wrong and how to
call the tool instead, and a `code` from `REFUSAL_CODES`. Over MCP it is a result with `isError`,
the message as its text and, as its structured content, `{"error": message, "code": code}`, which
`REFUSAL_SCHEMA` describes (published in docs/mcp-clients.md; the in-process content `{"error":
message}` is the same object without the code).
"""

from __future__ import annotations

from typing import Any

from autovend.errors import AutoVendError

REFUSAL_CODES: dict[str, str] = {
    "unknown_tool": "there is no tool of that name; the message lists the tools",
    "invalid_arguments": "the arguments are not an object of the tool's parameters, or break its input schema "
    "(a missing or unknown parameter, a value of the wrong type or out of range); the message names the parameter",
    "input_limit": "the arguments break the input limits of every door (a key given twice, NaN, an integer beyond "
    "2^53 - 1, nesting over 32 levels, a lone UTF-16 surrogate, too much text)",
    "not_found": "an id or a name the world does not have (a device_id, a sku_id, a category)",
    "refused": "a well-formed call that cannot be carried out as asked (a query_sql that is no SELECT or runs "
    "over its time limit, a notebook text over its limit, ...); the message says what to do instead",
    "episode_over": "the episode's days are settled; no tool can be used any more (a scored run: the message says "
    "where its scores are)",
    "run_unavailable": "a scored run that cannot be played: it is finished, its checkpoint is of another run, it "
    "stopped on an error or the server is shutting down; the message says how to go on",
    "internal_error": "a bug in a tool (please report it); nothing was changed",
}
REFUSED = "refused"  # the code of a `ToolError` that names none

REFUSAL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "AutoVend refused tool call",
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "What was wrong and how to call the tool instead."},
        "code": {"enum": list(REFUSAL_CODES), "description": "Why the call was refused (a fixed set of codes)."},
    },
    "required": ["error", "code"],
    "additionalProperties": False,
}


class ToolError(AutoVendError):
    """A tool call that cannot be carried out (malformed arguments, unknown id, refused query, ...).

    It never escapes a session: the session turns it into an error result whose message says what
    was wrong and how to call the tool instead; nothing was changed by the call. `code` is one of
    `REFUSAL_CODES`.
    """

    def __init__(self, message: str, code: str = REFUSED) -> None:
        super().__init__(message)
        if code not in REFUSAL_CODES:
            raise ValueError(f"unknown refusal code {code!r}")
        self.code = code


def refusal_content(message: str, code: str | None) -> dict[str, Any]:
    """The structured content of a refused call (`REFUSAL_SCHEMA`); an unknown or missing code is `refused`."""
    return {"error": message, "code": code if code in REFUSAL_CODES else REFUSED}
