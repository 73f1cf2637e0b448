"""docs/tools.md stays in step with the code: every tool, every parameter, the SQL schema as the agent sees it."""

from __future__ import annotations

from pathlib import Path

from autovend.tools.registry import TOOLS
from autovend.tools.sql import schema_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_every_tool_and_parameter_is_documented():
    text = DOC.read_text(encoding="utf-8")
    for tool in TOOLS:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{tool.name}` |"))
        assert f"| {tool.kind} |" in row
        for param in tool.input_schema["properties"]:
            assert param in row, (tool.name, param)


def test_the_sql_schema_is_documented_verbatim():
    text = DOC.read_text(encoding="utf-8")
    for line in schema_text().splitlines():
        assert line in text
