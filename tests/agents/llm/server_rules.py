"""The request rules of real OpenAI-compatible servers, for the scripted server to enforce (`FakeOpenAI(rules=...)`).

Each rule takes a request body and returns None, or the `Fault` that server answers, in its own shape:

- `openai_rules`: what the OpenAI API refuses with HTTP 400 and a `param`: a message without a role, content that
  is neither a string nor null, an empty or non-JSON-text `arguments`, a tool call without an id, a `tool` message
  whose `tool_call_id` answers no call of the assistant message before it, and an assistant message with tool
  calls not followed by one `tool` message for each call id.
- `llamacpp_rules`: the llama.cpp Python server's request schema (llama_cpp.llama_types): content must be a string
  where its TypedDicts say `str` (assistant `content: NotRequired[str]`, so null is refused, absent is fine), and
  `tool_call_id` a string. It answers a request that fails it with HTTP 500 and FastAPI's
  `N validation errors: {'type': ..., 'loc': ('body', 'messages', i, 'ChatCompletionRequest...Message', field),
  ...}` (one error per member of its message union, as the real server does: 7 for an assistant message with
  null content; the text is the real server's, llama-cpp-python 0.3.36).
"""

from __future__ import annotations

import json
from typing import Any

from tests.agents.llm.fake_openai import Fault

ROLES = ("system", "user", "assistant", "tool", "function")


def _openai(message: str, param: str) -> Fault:
    return Fault(400, message=message, param=param, kind="invalid_request_error")


def openai_rules(body: dict[str, Any]) -> Fault | None:
    """The OpenAI API's message rules (see the module docstring)."""
    messages = body.get("messages", [])
    open_calls: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ROLES:
            return _openai(f"Invalid value: {role!r}. Supported values are: {ROLES}.", f"messages.[{i}].role")
        if role != "tool" and open_calls:
            return _openai(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(open_calls)}",
                f"messages.[{i}].role",
            )
        content = m.get("content")
        if content is not None and not isinstance(content, str | list):
            return _openai(f"Invalid type for 'messages[{i}].content'.", f"messages.[{i}].content")
        if role == "assistant":
            for j, tc in enumerate(m.get("tool_calls") or ()):
                if not isinstance(tc.get("id"), str) or not tc["id"]:
                    return _openai("Missing required parameter.", f"messages.[{i}].tool_calls.[{j}].id")
                args = tc.get("function", {}).get("arguments")
                try:
                    json.loads(args)
                except (TypeError, ValueError):
                    return _openai(
                        "Invalid 'arguments': expected a JSON string.",
                        f"messages.[{i}].tool_calls.[{j}].function.arguments",
                    )
                open_calls.append(tc["id"])
        if role == "tool":
            tid = m.get("tool_call_id")
            if tid not in open_calls:
                return _openai(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceding message with "
                    "'tool_calls'.",
                    f"messages.[{i}].tool_call_id",
                )
            open_calls.remove(tid)
    return None


# The llama.cpp server's message union, in its order (typing.Union drops its repeated user member):
# (role, its TypedDict, {field: (required, accepts None)}).
_LLAMACPP_UNION = (
    ("system", "ChatCompletionRequestSystemMessage", {"content": (True, True)}),
    ("user", "ChatCompletionRequestUserMessage", {"content": (True, True)}),
    ("assistant", "ChatCompletionRequestAssistantMessage", {"content": (False, False)}),
    ("tool", "ChatCompletionRequestToolMessage", {"content": (True, True), "tool_call_id": (True, False)}),
    ("function", "ChatCompletionRequestFunctionMessage", {"content": (True, True), "name": (True, False)}),
)


def _pydantic(kind: str, loc: tuple[Any, ...], msg: str, value: Any, **ctx: Any) -> str:
    return repr({"type": kind, "loc": loc, "msg": msg, "input": value, **({"ctx": ctx} if ctx else {})})


def llamacpp_rules(body: dict[str, Any]) -> Fault | None:
    """The llama.cpp Python server's request schema (see the module docstring)."""
    for i, m in enumerate(body.get("messages", [])):
        errors: list[str] = []
        for role, typed_dict, spec in _LLAMACPP_UNION:
            loc = ("body", "messages", i, typed_dict)
            mine: list[str] = []
            if m.get("role") != role:
                mine.append(
                    _pydantic(
                        "literal_error",
                        (*loc, "role"),
                        f"Input should be '{role}'",
                        m.get("role"),
                        expected=f"'{role}'",
                    )  # fmt: skip
                )
            for name, (required, nullable) in spec.items():
                if name not in m:
                    if required:
                        mine.append(_pydantic("missing", (*loc, name), "Field required", m))
                elif m[name] is None and not nullable:
                    mine.append(_pydantic("string_type", (*loc, name), "Input should be a valid string", None))
            if not mine:
                break  # this member of the union takes the message
            errors += mine
        else:
            text = f"{len(errors)} validation errors:\n" + "".join(f"  {e}\n" for e in errors)
            return Fault(500, message=text, kind="internal_server_error")
    return None


def all_rules(body: dict[str, Any]) -> Fault | None:
    """Both servers' rules: a request that passes is taken by OpenAI and by llama.cpp alike."""
    return openai_rules(body) or llamacpp_rules(body)
