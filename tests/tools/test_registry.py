"""The single tool definition: the paper's 18 tools (Table 3), their kinds, parameters and JSON schemas."""

from __future__ import annotations

import re

import pytest

from autovend.sim.records import RECORD_TABLES
from autovend.tools.registry import MUTATION_TOOLS, TOOLS, TOOLS_BY_NAME
from autovend.tools.schemas import json_schema

# Table 3 of the paper: name -> (kind, required parameters, optional parameters)
TABLE3: dict[str, tuple[str, list[str], list[str]]] = {
    "place_order": ("remote", ["items"], []),
    "adjust_price": ("remote", ["items"], []),
    "discard": ("remote", ["items"], []),
    "end_day": ("remote", [], []),
    "get_catalog": (
        "remote",
        [],
        [
            "query",
            "category_l1",
            "category_l2",
            "price_min",
            "price_max",
            "in_warehouse_only",
            "sort_by",
            "page",
            "page_size",
        ],
    ),
    "get_categories": ("remote", [], ["category_l1"]),
    "get_warehouse": ("remote", [], ["page", "page_size"]),
    "get_device_detail": ("remote", ["device_id"], ["window_days"]),
    "get_sku_across_devices": ("remote", ["sku_id"], ["window_days"]),
    "get_sales_history": ("remote", [], ["window_days"]),
    "query_sql": ("remote", ["sql"], []),
    "get_calendar": ("remote", [], ["days_ahead"]),
    "get_weather": ("remote", [], []),
    "restock": ("physical", ["items"], []),
    "reduce": ("physical", ["items"], []),
    "delist": ("physical", ["items"], []),
    "read_memory": ("memory", [], []),
    "write_memory": ("memory", ["text"], []),
}
ITEM_FIELDS: dict[str, tuple[list[str], list[str]]] = {
    "place_order": (["sku_id", "qty"], ["supplier_id"]),
    "adjust_price": (["device_id", "sku_id", "price"], []),
    "discard": (["sku_id", "qty"], []),
    "restock": (["device_id", "sku_id", "qty"], []),
    "reduce": (["device_id", "sku_id", "qty"], []),
    "delist": (["device_id", "sku_id"], []),
}


def test_eighteen_tools_in_table3_order():
    assert [t.name for t in TOOLS] == list(TABLE3)
    assert len(TOOLS) == 18
    kinds = [t.kind for t in TOOLS]
    assert (kinds.count("remote"), kinds.count("physical"), kinds.count("memory")) == (13, 3, 2)


@pytest.mark.parametrize("name", list(TABLE3))
def test_parameters_match_table3(name):
    kind, required, optional = TABLE3[name]
    tool = TOOLS_BY_NAME[name]
    schema = tool.input_schema
    assert tool.kind == kind
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == required + optional
    assert schema.get("required", []) == required
    assert "$defs" not in str(schema) and "title" not in schema


@pytest.mark.parametrize("name", MUTATION_TOOLS)
def test_batch_schema(name):
    items = TOOLS_BY_NAME[name].input_schema["properties"]["items"]
    assert (items["type"], items["minItems"], items["maxItems"]) == ("array", 1, 100)
    item = items["items"]
    required, optional = ITEM_FIELDS[name]
    assert item["additionalProperties"] is False
    assert item["required"] == required
    assert list(item["properties"]) == required + optional
    if "qty" in item["properties"]:
        assert item["properties"]["qty"] == {
            "description": "Units, a positive integer.",
            "minimum": 1,
            "type": "integer",
        }


def test_windows_pages_and_days_in_schemas():
    window = TOOLS_BY_NAME["get_device_detail"].input_schema["properties"]["window_days"]
    assert window["enum"] == [1, 3, 7, 30]
    page_size = TOOLS_BY_NAME["get_catalog"].input_schema["properties"]["page_size"]
    assert (page_size["minimum"], page_size["maximum"]) == (1, 50)
    days = TOOLS_BY_NAME["get_calendar"].input_schema["properties"]["days_ahead"]
    assert (days["minimum"], days["maximum"]) == (1, 400)
    sort = TOOLS_BY_NAME["get_catalog"].input_schema["properties"]["sort_by"]
    assert sort["enum"] == ["catalog", "price_asc", "price_desc", "margin"]


def test_listing_fills_descriptions(session):
    listing = session.tools()
    assert [t["name"] for t in listing] == list(TABLE3)
    for t in listing:
        assert not re.search(r"\{[a-z_]+\}", t["description"]), t["name"]  # no placeholder left
        prefix = {"remote": "[remote, free]", "physical": "[on site: 35 per machine", "memory": "[memory"}
        assert t["description"].startswith(prefix[t["kind"]])
    memory = next(t for t in listing if t["name"] == "write_memory")
    assert memory["input_schema"]["properties"]["text"]["maxLength"] == 6000
    assert "6,000 characters" in memory["description"]


def test_query_sql_description_documents_every_table_and_column(session):
    desc = next(t for t in session.tools() if t["name"] == "query_sql")["description"]
    for table in RECORD_TABLES:
        line = next(x for x in desc.splitlines() if x.startswith(f"- {table.name}("))
        assert re.findall(r"\((.*?)\)", line)[0].split(", ") == list(table.column_names)


def test_json_schema_drops_null_alternative_but_keeps_description():
    from autovend.tools.schemas import GetSalesHistoryArgs

    assert json_schema(GetSalesHistoryArgs) == {
        "additionalProperties": False,
        "properties": {
            "window_days": {
                "enum": [1, 3, 7, 30],
                "type": "integer",
                "description": "Days of history to cover: 1, 3, 7 or 30 (default 30).",
            }
        },
        "type": "object",
    }
