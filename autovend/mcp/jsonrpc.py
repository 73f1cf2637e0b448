"""JSON-RPC 2.0 answers of the MCP server to messages that are none: bad lines (stdio), bad bodies (HTTP), bad ids.

JSON-RPC 2.0 answers a text that is not JSON with -32700 (Parse error) and JSON that is no valid message with
-32600 (Invalid Request), both with id null since the request's id could not be read. MCP adds that a request's
id is a string or an integer, never null. A message that names a request's method (anything but
`notifications/...`) without such an id is therefore an Invalid Request: the SDK would take it for a
notification and never answer, and a client waiting for its answer would wait forever; here it is answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from pydantic import ValidationError

NOTIFICATION_PREFIX = "notifications/"
MAX_REASON_CHARS = 400  # characters of a parser's reason quoted in a parse error


def error(code: int, message: str) -> types.JSONRPCError:
    """A JSON-RPC error answer with id null."""
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))


def parse_error(reason: str) -> types.JSONRPCError:
    """-32700: the text is not JSON (or breaks the JSON rules of `autovend.tools.guard`), for `reason`."""
    reason = reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS] + "..."
    return error(types.PARSE_ERROR, f"Parse error: {reason}; send one JSON-RPC message as one JSON object")


def bad_line_error(exc: Exception) -> types.JSONRPCError:
    """The answer to a stdio line the SDK could not read: -32700 for invalid JSON, else -32600; id null.

    The line itself is not repeated (it may be huge); only the kind of problem and the parser's reason are.
    """
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    invalid = [e for e in errors if e.get("type") == "json_invalid"]
    if errors and not invalid:
        return error(
            types.INVALID_REQUEST,
            "Invalid Request: the line is JSON but not a JSON-RPC 2.0 request, notification or response",
        )
    reason = str((invalid[0].get("ctx") or {}).get("error", "")) if invalid else ""
    where = f" ({reason})" if reason else ""
    return parse_error(f"the line is not valid JSON{where}")


def missing_id_error(method: str) -> types.JSONRPCError:
    """-32600 for a request (by its method) whose id is missing, null or not a string or an integer."""
    shown = method if len(method) <= 60 else method[:60] + "..."
    return error(
        types.INVALID_REQUEST,
        f"Invalid Request: {shown!r} is a request, and a request's id must be a string or an integer (JSON-RPC "
        "2.0, MCP); this one had none, null, or another type (an object, an array, a fraction, true or false). "
        "Nothing was done: send it again with an id such as 1",
    )


def id_problem(message: Any) -> types.JSONRPCError | None:
    """The error for a decoded JSON-RPC message naming a request's method without a valid id, else None."""
    if not isinstance(message, Mapping):
        return None
    method = message.get("method")
    if not isinstance(method, str) or method.startswith(NOTIFICATION_PREFIX):
        return None
    if type(message.get("id")) in (str, int):  # type(): true and false are no ids
        return None
    return missing_id_error(method)
