"""Tool forms from the tools' JSON input schemas."""

from __future__ import annotations

import re

import pytest

from autovend.console.forms import datalists, tool_form
from autovend.env import VendingEnv

from .conftest import small_world


@pytest.fixture(scope="module")
def tools():
    return {t["name"]: t for t in VendingEnv(small_world()).tools()}


def test_every_tool_gets_a_form(tools):
    assert len(tools) == 18
    for name, tool in tools.items():
        form = tool_form(tool)
        assert f'<form class="tool-form" data-tool="{name}" novalidate>' in form
        keys = set(re.findall(r'data-key="([^"]+)"', form)) | set(re.findall(r'data-array="([^"]+)"', form))
        props = tool["input_schema"]["properties"]
        nested = {k for p in props.values() if p.get("type") == "array" for k in p["items"]["properties"]}
        assert keys == set(props) | nested, name


def test_a_batch_is_a_table_of_rows(tools):
    form = tool_form(tools["place_order"])
    assert '<table class="rows" data-array="items">' in form
    assert '<th title="Product id from the catalog, e.g. &#x27;SKU0001&#x27;.">sku_id *</th>' in form
    assert '<input type="text" data-key="sku_id" list="sku-ids" minlength="1">' in form
    assert '<input type="number" step="1" data-key="qty" min="1">' in form
    assert "<th" in form and "supplier_id</th>" in form  # optional: no *
    assert '<button type="button" class="add-row">+ row</button>' in form


def test_scalars_enums_and_long_text(tools):
    catalog = tool_form(tools["get_catalog"])
    assert '<select data-key="sort_by"><option value="">(default)</option><option value="catalog">' in catalog
    assert '<input type="number" step="1" data-key="page_size" min="1" max="50">' in catalog
    assert '<input type="number" step="any" data-key="price_min" min="0">' in catalog
    assert '<select data-key="in_warehouse_only"><option value="">(default)</option><option>true</option>' in catalog
    assert '<textarea rows="4" data-key="sql" minlength="1"></textarea>' in tool_form(tools["query_sql"])
    assert '<textarea rows="4" data-key="text" maxlength="6000"></textarea>' in tool_form(tools["write_memory"])
    detail = tool_form(tools["get_device_detail"])
    assert '<input type="text" data-key="device_id" list="device-ids" minlength="1">' in detail
    assert re.search(r'<select data-key="window_days">(<option[^>]*>[^<]*</option>){5}</select>', detail)


def test_end_day_has_no_fields(tools):
    form = tool_form(tools["end_day"])
    assert '<p class="facts">no arguments</p>' in form and ">end the day</button>" in form


def test_text_is_escaped():
    tool = {"name": "x", "kind": "remote", "description": "a <b> & c", "input_schema": {"properties": {}}}
    assert "a &lt;b&gt; &amp; c" in tool_form(tool)
    assert '<option value="S&lt;1">n &amp; m</option>' in datalists([], [("S<1", "n & m")])
