"""JSON-RPC 2.0 answers of the MCP server to messages that are none, the same on stdio and over HTTP, in words.

JSON-RPC 2.0 answers a text that is not JSON with -32700 (Parse error) and JSON that is no valid message with
-32600 (Invalid Request), both with id null since the request's id could not be read; a request whose params do
not fit its method gets -32602 (Invalid params) and one of a method the server does not have -32601 (Method not
found), with the request's id. MCP adds that a request's id is a string or an integer, never null. A message
that names a request's method (anything but `notifications/...`) without such an id is therefore an Invalid
Request: the SDK would take it for a notification and never answer, and a client waiting for its answer would
wait forever; here it is answered.

Both doors read a message with the JSON rules of every door (`autovend.tools.guard`), then check its envelope
with `message_problem` before the SDK sees it: a batch (MCP takes none), a value that is no object, a `jsonrpc`
other than "2.0", a `method` that is no string, `params` that are no object. (The SDK's own answers differed by
door: over HTTP -32602 with a pydantic dump, over stdio -32600 naming nothing.) Inside a session, the SDK's
check of a method's params, and its "Method not found", are put in words by the server middleware
`PlainErrors`: `"arguments": "x"` of tools/call gets "params.arguments must be a JSON object, got a string".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from autovend.tools.guard import kind_of

NOTIFICATION_PREFIX = "notifications/"
MAX_REASON_CHARS = 400  # characters of a parser's reason quoted in a parse error


def error(code: int, message: str) -> types.JSONRPCError:
    """A JSON-RPC error answer with id null."""
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))


def wire(answer: types.JSONRPCError) -> bytes:
    """The bytes of an answer as the SDK writes one on stdio (`id` always, no `data` unless given)."""
    return answer.model_dump_json(by_alias=True, exclude_unset=True).encode()


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


# ------------------------------------------------------------------------------------------------ the envelope

REQUEST_EXAMPLE = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def _is_id(value: Any) -> bool:
    return type(value) in (str, int)  # type(): true and false are no ids


def message_problem(message: Any, where: str) -> types.JSONRPCError | None:
    """The JSON-RPC error for a decoded message that is no valid JSON-RPC 2.0 message of MCP, else None.

    `where` names the message for the error: "the line" (stdio) or "the request body" (HTTP). Both doors
    answer with the same codes and words: -32600 (Invalid Request, id null) for a batch, a value that is no
    object, a `jsonrpc` other than "2.0", a `method` that is no string, a request without a valid id, a
    message that is neither a request, a notification nor a response; -32602 (Invalid params, with the
    request's id) for `params` that are not an object.
    """
    if isinstance(message, list):
        return error(
            types.INVALID_REQUEST,
            f"Invalid Request: {where} is a batch ({kind_of(message)}); MCP takes one JSON-RPC message at a time: "
            f"send each on its own ({'one per line' if where == 'the line' else 'one per POST'})",
        )
    if not isinstance(message, Mapping):
        return error(
            types.INVALID_REQUEST,
            f"Invalid Request: {where} is {kind_of(message)}, not a JSON-RPC message: send one JSON object such as "
            f"{REQUEST_EXAMPLE}",
        )
    if message.get("jsonrpc") != "2.0":
        got = f"got {kind_of(message['jsonrpc'])}" if "jsonrpc" in message else "it is missing"
        return error(
            types.INVALID_REQUEST, f'Invalid Request: "jsonrpc" in {where} must be "2.0" (JSON-RPC 2.0); {got}'
        )
    if "method" not in message:
        return _response_problem(message, where)
    method = message["method"]
    if not isinstance(method, str):
        return error(
            types.INVALID_REQUEST,
            f'Invalid Request: "method" in {where} must be a string (the method\'s name), got {kind_of(method)}',
        )
    problem = id_problem(message)
    if problem is not None:
        return problem
    params = message.get("params")
    if params is not None and not isinstance(params, Mapping):
        answer = error(
            types.INVALID_PARAMS,
            f'Invalid params: "params" of {_shown(method)} in {where} must be a JSON object (or left out), '
            f"got {kind_of(params)}",
        )
        return answer.model_copy(update={"id": message.get("id") if _is_id(message.get("id")) else None})
    return None


def _shown(method: str) -> str:
    return repr(method if len(method) <= 60 else method[:60] + "...")


def _response_problem(message: Mapping[str, Any], where: str) -> types.JSONRPCError | None:
    """The error for a message without a method that is no valid response, else None."""
    has_result, has_error = "result" in message, "error" in message
    if "id" not in message or has_result == has_error:
        return error(
            types.INVALID_REQUEST,
            f'Invalid Request: {where} has no "method" (a request or a notification names one) and is no '
            'response either (an "id" with a "result" or an "error"): send a message such as '
            f"{REQUEST_EXAMPLE}",
        )
    if has_result and not isinstance(message["result"], Mapping):
        return error(
            types.INVALID_REQUEST,
            f'Invalid Request: the "result" of a response in {where} must be a JSON object, '
            f"got {kind_of(message['result'])}",
        )
    fault = message.get("error")
    if has_error and not (
        isinstance(fault, Mapping) and type(fault.get("code")) is int and isinstance(fault.get("message"), str)
    ):
        return error(
            types.INVALID_REQUEST,
            f'Invalid Request: the "error" of a response in {where} must be an object with an integer "code" '
            'and a string "message"',
        )
    return None


def invalid_message(where: str) -> types.JSONRPCError:
    """-32600 for a message the SDK's reader refuses that `message_problem` let through (a last resort)."""
    return error(
        types.INVALID_REQUEST,
        f"Invalid Request: {where} is JSON but not a JSON-RPC 2.0 request, notification or response",
    )


# ------------------------------------------------------------------------------------------------ params

_EXPECTED = {
    "dict_type": "a JSON object",
    "model_type": "a JSON object",
    "model_attributes_type": "a JSON object",
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a JSON array",
}
MAX_PARAM_PROBLEMS = 3  # problems named in one Invalid params message


def _param_problem(detail: Mapping[str, Any], method: str) -> str:
    path = ".".join(str(part) for part in detail.get("loc", ()))
    path = path if path.startswith("params") else f"params.{path}".rstrip(".")
    reason = detail.get("type", "")
    if reason == "missing":
        return f"{path} is missing (it is required)"
    if reason in _EXPECTED:
        return f"{path} must be {_EXPECTED[reason]}, got {kind_of(detail.get('input'))}"
    if reason == "literal_error":
        expected = (detail.get("ctx") or {}).get("expected", "?")
        return f"{path} must be one of {expected}, got {kind_of(detail.get('input'))}"
    if reason == "extra_forbidden":
        return f"{path} is not a parameter of {_shown(method)}"
    return f"{path}: {detail.get('msg', 'not valid')}"


def params_error(method: str, exc: ValidationError) -> MCPError:
    """-32602 naming what is wrong with a request's params (`exc` from the SDK's check of them), in words."""
    problems = [_param_problem(d, method) for d in exc.errors()]
    more = len(problems) - MAX_PARAM_PROBLEMS
    text = "; ".join(problems[:MAX_PARAM_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")
    return MCPError(types.INVALID_PARAMS, f"Invalid params of {_shown(method)}: {text}")


class PlainErrors:
    """Server middleware (both doors): the SDK's terse errors about a request, in words.

    Malformed params (the SDK's "Invalid request parameters", no detail) become `params_error`; "Method not
    found" names the method; a request before the session is initialized says so. Codes stay the SDK's.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Run the rest of the chain, rewording its errors."""
        try:
            return await call_next(ctx)
        except ValidationError as exc:
            raise params_error(ctx.method, exc) from None
        except MCPError as exc:
            if exc.code == types.METHOD_NOT_FOUND and exc.message == "Method not found":
                raise MCPError(
                    types.METHOD_NOT_FOUND,
                    f"Method not found: this server has no method {_shown(ctx.method)}",
                    exc.data,
                ) from None
            if exc.code == types.INVALID_PARAMS and exc.message == "Invalid request parameters":
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"{_shown(ctx.method)} before the session is initialized: send initialize, then the "
                    "notification notifications/initialized, then this request again",
                ) from None
            raise
