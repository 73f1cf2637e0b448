"""docs/tools.md stays in step with the code: it is generated from the registry, so every tool, parameter and
result field, and the SQL schema as the agent sees it, are in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autovend.tools.docs import outline, parameters_text, render_tools_doc, shown_description, type_text
from autovend.tools.registry import TOOLS, TOOLS_BY_NAME
from autovend.tools.sql import schema_text

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tools.md"


def test_the_committed_doc_is_the_generated_one():
    # regenerate with: python -m autovend.tools.docs > docs/tools.md   (or: make docs)
    assert DOC.read_text(encoding="utf-8") == render_tools_doc()


def test_the_module_prints_the_doc_as_utf8():
    out = subprocess.run(
        [sys.executable, "-m", "autovend.tools.docs"],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    ).stdout
    assert out.decode("utf-8") == render_tools_doc()


def test_every_tool_and_parameter_is_documented():
    text = DOC.read_text(encoding="utf-8")
    for tool in TOOLS:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{tool.name}` |"))
        assert f"| {tool.kind} |" in row
        for param in tool.input_schema["properties"]:
            assert param in row, (tool.name, param)
        assert f"### `{tool.name}`\n" in text and f"`{tool.result.__name__}`" in text


def test_every_result_field_is_in_the_outline():
    for tool in TOOLS:
        lines = "\n".join(outline(tool.output_schema))
        for name in tool.output_schema["properties"]:
            assert f"`{name}`" in lines, (tool.name, name)
    warehouse = outline(TOOLS_BY_NAME["get_warehouse"].output_schema)
    assert warehouse[0] == "- `day` (integer): Simulation day (day 1 = the first day of the run)."
    table = next(line for line in warehouse if line.startswith("- `columns`, `rows` (table)"))
    assert "`next_expiry_day` integer or null, `unit_cost` CNY, `value_at_cost` CNY" in table
    assert "- `note`? (string or null): Present when the page is past the last page." in warehouse


def test_parameters_and_types_read_like_the_paper():
    assert parameters_text(TOOLS_BY_NAME["place_order"]) == "`items[{sku_id, qty, supplier_id?}]`"
    assert parameters_text(TOOLS_BY_NAME["get_device_detail"]) == "`device_id, window_days?`"
    assert parameters_text(TOOLS_BY_NAME["end_day"]) == "none"
    assert type_text({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "integer or null"
    assert type_text({"type": "array", "prefixItems": [{"type": "number"}] * 2}) == "[number, number]"
    assert type_text({"enum": [1, 3]}) == "one of 1, 3"


def test_descriptions_show_where_the_world_fills_in_numbers():
    restock = shown_description(TOOLS_BY_NAME["restock"])
    assert restock.startswith("[on site: <visit_fee> per machine per day touched, working days only]")
    assert "<memory_chars> characters" in shown_description(TOOLS_BY_NAME["write_memory"])
    assert "The SQL schema" in shown_description(TOOLS_BY_NAME["query_sql"])


@pytest.mark.parametrize("line", schema_text().splitlines())
def test_the_sql_schema_is_documented_verbatim(line):
    assert line in DOC.read_text(encoding="utf-8")
