r"""What a server refused in a request, read from its error answer: the message and the exact request fields.

    if is_refusal(status, body_text):                  # a 4xx, or a 5xx whose body is a schema error
        raise LLMError(describe_refusal(exc_body, message, request))

OpenAI-compatible servers report a request they cannot take in several shapes, and the harness names the
rejected field in each, with what it sent there, so the user sees at once what to change:

- OpenAI and servers that copy it: `{"error": {"message", "type", "param", "code"}}`; `param` names the field
  (`messages.[2].content`, `temperature`).
- FastAPI's own answer (HTTP 422): `{"detail": [{"loc": ["body", "messages", 2, "content"], "msg": ...}]}`.
- pydantic errors printed into the message, as the llama.cpp Python server does (it answers a request that
  fails its schema with HTTP 500 and `7 validation errors: {'type': 'string_type', 'loc': ('body',
  'messages', 2, 'typed-dict', 'content'), 'msg': 'Input should be a valid string', 'input': None} ...`), or
  pydantic's text form (`messages.2.content\n  Input should be a valid string [type=string_type, ...]`).

A message of a union of shapes (system, user, assistant, tool) fails once per shape; the errors that say the
role is not that shape's role, or that a field the request never had is missing, belong to the other shapes
and are dropped when an error about a field the request did send remains.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

# A 5xx answer whose text matches this is a request the server's schema refused: retrying cannot help.
_SCHEMA_HINTS = re.compile(
    r"validation errors?\b|'loc':|\"loc\":|\[type=[a-z_]+|Input should be|Field required|invalid_request_error"
    r"|unprocessable|is not valid under any of the given schemas|json schema",
    re.IGNORECASE,
)
_REPR_ERROR = re.compile(r"\{'type': '(?P<type>[^']*)', 'loc': \((?P<loc>[^)]*)\), 'msg': (?P<msg>'[^']*'|\"[^\"]*\")")
_TEXT_ERROR = re.compile(r"^(?P<loc>[\w.\-\[\]]+)\n\s+(?P<msg>.+?) \[type=(?P<type>[a-z_]+)", re.MULTILINE)
_PARAM_PART = re.compile(r"[^.\[\]]+|\[\d+\]")
_RETRYABLE_4XX = (408, 409, 429)  # request timeout, conflict, rate limit: a later try can succeed
_SHOWN = 600  # characters of the server's message quoted in an error


@dataclass(frozen=True)
class Rejected:
    """One request field a server refused: its path (`messages[2].content`), the server's words, the error type."""

    field: str
    problem: str
    kind: str = ""


def is_refusal(status: int | None, text: str) -> bool:
    """True when retrying cannot help: a 4xx other than 408/409/429, or a 5xx whose body is a schema error."""
    if status is None:
        return False
    if 400 <= status < 500:
        return status not in _RETRYABLE_4XX
    return status >= 500 and bool(_SCHEMA_HINTS.search(text))


def server_text(body: Any, message: str) -> str:
    """The server's own words: the `message` (or `detail`) of its error body, else the client's message."""
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, list | dict) and value:
                return json.dumps(value, ensure_ascii=False)
    if isinstance(body, str) and body.strip():
        return body.strip()
    return message.strip()


def _field(parts: list[Any]) -> str:
    """`messages[2].content` from a location ['body', 'messages', 2, 'typed-dict', 'content']."""
    out = ""
    for i, part in enumerate(parts):
        if i == 0 and part == "body":
            continue
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            out += f"[{int(part)}]"
        elif isinstance(part, str) and part and not _is_union_tag(part):
            out += ("." if out else "") + part
    return out


def _is_union_tag(part: str) -> bool:
    """pydantic's names of union members in a location ('typed-dict', 'function-after[...]', 'str', a class)."""
    return (
        part in ("typed-dict", "str", "int", "float", "bool", "list", "dict", "none")
        or any(c in part for c in "[-()")
        or part[:1].isupper()
    )


def _parse_loc(text: str) -> list[Any]:
    try:
        value = ast.literal_eval("(" + text + ",)") if text.strip() else ()
    except (ValueError, SyntaxError):
        return [p.strip().strip("'\"") for p in text.split(",") if p.strip()]
    return list(value)


def _param_field(param: str) -> str:
    """`messages[2].content` from an OpenAI `param` such as 'messages.[2].content' or 'messages.2.content'."""
    parts: list[Any] = []
    for token in _PARAM_PART.findall(param):
        parts.append(int(token[1:-1]) if token.startswith("[") else int(token) if token.isdigit() else token)
    return _field(parts)


def rejected_fields(body: Any, message: str) -> list[Rejected]:
    """Every field the error answer names, in the order given (duplicates dropped)."""
    found: list[Rejected] = []
    if isinstance(body, dict):
        detail = body.get("detail")
        if isinstance(detail, list):
            for err in detail:
                if isinstance(err, dict) and isinstance(err.get("loc"), list | tuple):
                    found.append(Rejected(_field(list(err["loc"])), str(err.get("msg", "")), str(err.get("type", ""))))
        param = body.get("param")
        if isinstance(param, str) and param.strip():
            problem, code = str(body.get("message") or ""), str(body.get("code") or "")
            found.append(Rejected(_param_field(param.strip()), problem, code))
    text = server_text(body, message)
    for m in _REPR_ERROR.finditer(text):
        found.append(Rejected(_field(_parse_loc(m.group("loc"))), m.group("msg")[1:-1], m.group("type")))
    for m in _TEXT_ERROR.finditer(text):
        found.append(Rejected(_param_field(m.group("loc")), m.group("msg"), m.group("type")))
    seen: set[tuple[str, str]] = set()
    out = []
    for r in found:
        if r.field and (r.field, r.problem) not in seen:
            seen.add((r.field, r.problem))
            out.append(r)
    return out


_MISSING = object()


def sent_value(request: dict[str, Any], field: str) -> Any:
    """The value the request held at `field` (`messages[2].content`; `extra_body` keys too), or `_MISSING`."""
    found = _lookup(request, field)
    if found is _MISSING and isinstance(request.get("extra_body"), dict):
        found = _lookup(request["extra_body"], field)
    return found


def _lookup(request: dict[str, Any], field: str) -> Any:
    value: Any = request
    for token in _PARAM_PART.findall(field):
        key: Any = int(token[1:-1]) if token.startswith("[") else token
        in_list = isinstance(key, int) and isinstance(value, list) and -len(value) <= key < len(value)
        in_dict = isinstance(key, str) and isinstance(value, dict) and key in value
        if not (in_list or in_dict):
            return _MISSING
        value = value[key]
    return value


def relevant(rejected: list[Rejected], request: dict[str, Any]) -> list[Rejected]:
    """The errors about what the request did send (see the module docstring); all of them if none is."""
    about_sent = [
        r
        for r in rejected
        if r.kind not in ("missing", "literal_error")
        and not (r.field.endswith((".role", ".type")) and r.problem.startswith("Input should be '"))
        and sent_value(request, r.field) is not _MISSING
    ]
    return about_sent or rejected


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:80] + "..."


def describe_fields(rejected: list[Rejected], request: dict[str, Any]) -> str:
    """'messages[2].content (the assistant message; sent null): Input should be a valid string; ...'."""
    parts = []
    for r in relevant(rejected, request)[:5]:
        notes = []
        head = re.match(r"messages\[(\d+)\]", r.field)
        if head is not None:
            msg = sent_value(request, f"messages[{head.group(1)}]")
            if isinstance(msg, dict) and isinstance(msg.get("role"), str):
                notes.append(f"the {msg['role']} message")
        value = sent_value(request, r.field)
        notes.append("not sent" if value is _MISSING else f"sent {_shown(value)}")
        parts.append(f"{r.field} ({'; '.join(notes)})" + (f": {r.problem}" if r.problem else ""))
    return "; ".join(parts)


def describe_refusal(status: int | None, body: Any, message: str, request: dict[str, Any]) -> str:
    """The server's message (shortened) and, when it names them, the rejected fields with what was sent."""
    fields = describe_fields(rejected_fields(body, message), request)
    text = server_text(body, message)
    if fields:  # the fields say what matters: the server's first line is enough
        text = text.splitlines()[0] if text.strip() else text
    text = " ".join(text.split())
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + "..."
    where = f"; rejected field: {fields}" if fields else ""
    return f"HTTP {status}: {text}{where}"
