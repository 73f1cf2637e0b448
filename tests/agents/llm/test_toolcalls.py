"""Tool definitions for the model, argument parsing and the text of results."""

from __future__ import annotations

import json

from autovend.agents.llm.toolcalls import MALFORMED_KEY, openai_tools, parse_arguments, result_text, sanitized_arguments
from autovend.tools.session import ToolResult, ToolSession
from tests.agents.llm.conftest import make_world


def test_openai_tools_are_the_session_definitions():
    session = ToolSession(make_world(), seed=1)
    tools = openai_tools(session.tools())
    assert len(tools) == 18 and all(t["type"] == "function" for t in tools)
    first = session.tools()[0]
    assert tools[0]["function"] == {
        "name": "place_order",
        "description": first["description"],
        "parameters": first["input_schema"],
    }


def test_parse_arguments():
    assert parse_arguments("end_day", "") == ({}, None)
    assert parse_arguments("end_day", None) == ({}, None)
    assert parse_arguments("get_weather", "  ") == ({}, None)
    assert parse_arguments("x", '{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments("x", {"a": 1}) == ({"a": 1}, None)  # a server that decoded it already
    assert parse_arguments("x", "[1]") == ([1], None)  # valid JSON: the session refuses non-objects itself
    value, error = parse_arguments("place_order", '{"items": [')
    assert value is None
    assert error.startswith("place_order: the arguments are not valid JSON (Expecting value at character 11)")
    assert json.loads(sanitized_arguments('{"items": [')) == {MALFORMED_KEY: '{"items": ['}


def test_result_text():
    session = ToolSession(make_world(), seed=1)
    end = session.call("end_day")
    short = json.loads(result_text("end_day", end, 100_000))
    assert short["observation"] == "The full report of the new day follows in the next message."
    assert short["settled"] == end.content["settled"]
    assert json.loads(result_text("end_day", end, 100_000, next_report=False)) == end.content
    refused = session.call("get_calendar", {"days_ahead": 0})
    assert json.loads(result_text("get_calendar", refused, 100_000)) == {"error": refused.error}
    big = ToolResult(True, {"rows": ["x" * 5000]})
    text = result_text("query_sql", big, 1000)
    assert text.startswith('{"rows":["xxx') and len(text) < 1200
    assert "cut by the harness: this result has 5,013 characters, 1,000 are shown" in text
