"""Tool definitions for the model, argument parsing and the text of results."""

from __future__ import annotations

import json

import pytest

from autovend.agents.llm.toolcalls import MALFORMED_KEY, openai_tools, parse_arguments, result_text, sanitized_arguments
from autovend.agents.llm.transcript import Transcript, read_transcript
from autovend.session import ToolResult, ToolSession
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
    assert error.startswith(
        "place_order: the arguments: not valid JSON (Expecting value at line 1 column 12, character 11); the text "
        """was '{"items": ['. The call was not run"""
    )
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


@pytest.mark.parametrize(
    "raw,message",
    [
        pytest.param('{"page": 1' + "0" * 5000 + "}", "page in the arguments is an integer of 5,001 digits", id="int"),
        pytest.param("[" * 100_000 + "]" * 100_000, "the arguments: nested too deeply to read", id="deep"),
        pytest.param('{"page": 1, "page": 2}', "the arguments: the key 'page' is given twice", id="duplicate"),
        pytest.param('{"price_min": NaN}', "price_min in the arguments is NaN, which is not JSON", id="nan"),
        pytest.param(
            '{"text": "\\ud800"}', "text in the arguments holds a lone UTF-16 surrogate (U+D800)", id="surrogate"
        ),
        pytest.param(
            '{"q": "' + "x" * 200_000 + '"}', "the arguments: over the limit of 131,072 characters", id="huge"
        ),
    ],
)
def test_hostile_arguments_from_a_model_are_an_error_not_a_traceback(raw, message):
    value, error = parse_arguments("get_catalog", raw)
    assert value is None and error.startswith(f"get_catalog: {message}")
    assert error.endswith("The call was not run; send the arguments as one JSON object of the tool's parameters.")
    assert len(error) < 800  # the text is quoted, not repeated
    assert json.loads(sanitized_arguments(raw)) == {MALFORMED_KEY: raw}


def test_a_transcript_holds_a_lone_surrogate_as_its_escape(tmp_path):
    transcript = Transcript(tmp_path / "t.jsonl", fresh=True)
    transcript.write("response", 1, message={"content": "a\ud800b"})
    transcript.close()
    raw = (tmp_path / "t.jsonl").read_bytes()
    assert b'"content":"a\\ud800b"' in raw
    assert read_transcript(tmp_path / "t.jsonl")[0]["message"]["content"] == "a\ud800b"
