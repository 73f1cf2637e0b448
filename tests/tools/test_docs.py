"""docs/tools.md stays in step with the code: it is generated from the registry, so every tool, parameter and
result field, and the SQL schema as the agent sees it, are in it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from autovend.currency import fill_money
from autovend.env import VendingEnv
from autovend.mcp.server import HTTP_HOST, HTTP_PATH
from autovend.tools.docs import WORDS, outline, parameters_text, render_tools_doc, shown_description, type_text
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
    warehouse = outline(fill_money(TOOLS_BY_NAME["get_warehouse"].output_schema, WORDS))  # as the docs show it
    assert warehouse[0] == "- `day` (integer): Simulation day (day 1 = the first day of the run)."
    table = next(line for line in warehouse if line.startswith("- `columns`, `rows` (table)"))
    assert "`next_expiry_day` integer or null, `unit_cost` money, `value_at_cost` money" in table
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


@pytest.mark.parametrize("line", schema_text("<currency>").splitlines())
def test_the_sql_schema_is_documented_verbatim(line):
    assert line in DOC.read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------- docs/mcp-clients.md

CLIENTS = ROOT / "docs" / "mcp-clients.md"


def _json_blocks(text: str) -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL)]


def test_the_documented_client_configs_serve_the_same_episode():
    desktop, inspector, *_ = _json_blocks(CLIENTS.read_text(encoding="utf-8"))  # then the refusal schema
    app = desktop["mcpServers"]["autovend"]
    assert Path(app["command"]).name == "autovend" and app["args"][:3] == ["serve", "--world", "cn20"]
    local = inspector["mcpServers"]["autovend"]
    assert local["command"] == "autovend" and app["args"][: len(local["args"])] == local["args"]
    http = inspector["mcpServers"]["autovend-http"]
    assert http["url"] == f"http://{HTTP_HOST}:8765{HTTP_PATH}" and http["type"] == "streamable-http"
    assert "--port 8765" in CLIENTS.read_text(encoding="utf-8")


def test_the_desktop_config_starts_a_server_outside_the_checkout(tmp_path):
    desktop, *_ = _json_blocks(CLIENTS.read_text(encoding="utf-8"))
    args = [re.sub(r"^/ABSOLUTE/PATH/TO/", f"{tmp_path}/", a) for a in desktop["mcpServers"]["autovend"]["args"]]
    trajectory = Path(args[args.index("--out") + 1]) / "trajectory.jsonl"  # a scored run folder
    work = tmp_path / "anywhere"  # as an app would start it: not in the checkout
    work.mkdir()

    async def play():
        params = StdioServerParameters(command=sys.executable, args=["-m", "autovend.cli", *args], cwd=str(work))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            weather = await s.call_tool("get_weather", {})
            return tools, weather

    tools, weather = anyio.run(play)
    assert [t.name for t in tools] == [t.name for t in TOOLS]
    served = {t["name"]: t for t in VendingEnv("cn20").tools()}  # the schemas with cn20's currency in their texts
    assert all(t.output_schema == served[t.name]["output_schema"] for t in tools)
    assert weather.structured_content == json.loads(weather.content[0].text)
    assert weather.structured_content["day"] == 1 and len(weather.structured_content["days"]) == 8
    lines = trajectory.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["world"] == "cn20" and json.loads(lines[1])["tool"] == "get_weather"
