"""Between the model and the tools: tool definitions in OpenAI form, argument parsing, result text.

The definitions come from `ToolSession.tools()` (or the MCP server's listing of the same 18 tools),
so there is one source of truth. Results go back to the model as the tool's JSON, errors included
(`{"error": "..."}` with the reason), so the model can correct its call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from autovend.session import ToolResult
from autovend.tools.guard import InputError, loads
from autovend.tools.schemas import quote
from autovend.tools.trajectory import dumps

MALFORMED_KEY = "__malformed_arguments__"


class ToolBackend(Protocol):
    """What the harness needs from a tool session (a `ToolSession`, or the MCP bridge)."""

    @property
    def day(self) -> int:
        """The current day."""

    @property
    def done(self) -> bool:
        """True once the last day is settled."""

    def call(self, name: str, arguments: Any = None) -> ToolResult:
        """Run one tool."""

    def tools(self) -> list[dict[str, Any]]:
        """The tools: name, kind, description, input_schema."""

    def system_prompt(self) -> str:
        """The fixed system prompt."""

    def daily_prompt(self) -> str:
        """Today's prompt."""


def openai_tools(listing: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools as Chat Completions `tools`: {"type": "function", "function": {name, description, parameters}}."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
        }
        for t in listing
    ]


def parse_arguments(name: str, raw: Any) -> tuple[Any, str | None]:
    """The arguments of a tool call from the model's text: (value, None), or (None, error message).

    Empty text means no arguments ({}); an object already decoded by the server is taken as is.
    Valid JSON that is not an object is passed on: the tool session refuses it with its own message.
    The text is read by the JSON rules of every door (`autovend.tools.guard.loads`): a key twice,
    NaN, an integer beyond 2^53, nesting over 32 levels or a lone surrogate is an error, not a guess.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if not isinstance(raw, str):
        return raw, None
    try:
        return loads(raw, "the arguments"), None
    except InputError as exc:
        shown = quote(raw, 200)
        return None, (
            f"{name}: {exc}; the text was {shown}. The call was not run; send the arguments as one JSON "
            "object of the tool's parameters."
        )


def sanitized_arguments(raw: str) -> str:
    """Valid JSON text standing in for malformed arguments in the kept conversation (servers re-parse it)."""
    return dumps({MALFORMED_KEY: raw})


def result_text(name: str, result: ToolResult, max_chars: int, next_report: bool = True) -> str:
    """The text of a tool result for the model: the result JSON, errors as {"error": ...}, long ones cut.

    The observation inside an `end_day` result is left out when `next_report` is True, because
    the next day's prompt carries the same report in full right after it.
    """
    content = result.content
    if name == "end_day" and result.ok and next_report and "observation" in content:
        content = {k: v for k, v in content.items() if k != "observation"}
        content["observation"] = "The full report of the new day follows in the next message."
        text = dumps(content)
    else:
        text = result.to_json()
    if len(text) > max_chars:
        text = (
            text[:max_chars] + f" ... [cut by the harness: this result has {len(text):,} characters, "
            f"{max_chars:,} are shown; ask for less, e.g. a smaller page or a narrower query]"
        )
    return text


def error_text(message: str) -> str:
    """A harness-made error result, in the tools' own shape."""
    return dumps({"error": message})
