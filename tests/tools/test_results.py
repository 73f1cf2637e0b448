"""Typed results: every tool's result model matches what it returns, and its output schema validates the JSON.

A scripted episode on a toy world reaches every tool and every shape of result (accepted and
rejected items, notes, truncated SQL, the last day); each successful result must come back as its
tool's model, dump back to the JSON the agent read, and pass the tool's output schema.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from autovend.session import ToolResult, ToolSession
from autovend.tools.registry import TOOLS, TOOLS_BY_NAME
from autovend.tools.results import EndDayResult, GetWeatherResult, PlaceOrderResult
from autovend.world.model import Economics
from autovend.world.toy import toy_world

from .conftest import stock_warehouse

DAYS = 12
D0, D1 = "CN_WORKSITE_01", "CN_CAMPUS_01"


def _walk(node: Any):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_tool_declares_a_self_contained_object_schema(tool):
    schema = tool.output_schema
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["description"] == tool.result.__doc__.strip()
    assert all("$ref" not in n and "$defs" not in n and "title" not in n for n in _walk(schema))


@pytest.fixture(scope="module")
def played() -> list[tuple[str, dict[str, Any], ToolResult]]:
    """Every tool, with accepted and rejected items, notes and the end of the episode."""
    session = ToolSession(toy_world(3, 12, seed=0, economics=Economics(horizon_days=DAYS)), seed=1)
    calls: list[tuple[str, dict[str, Any], ToolResult]] = []

    def call(name: str, args: dict[str, Any] | None = None) -> ToolResult:
        res = session.call(name, args or {})
        calls.append((name, args or {}, res))
        return res

    call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 5}, {"sku_id": "X", "qty": 1, "supplier_id": None}]})
    call("restock", {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 1}]})  # a holiday: rejected
    call("get_catalog", {"category_l1": "cakes", "sort_by": "margin"})  # a note
    call("get_warehouse", {"page": 3})  # past the last page: a note
    call("get_device_detail", {"device_id": "X"})  # an error result
    stock_warehouse(session, {"SKU0001": 40, "SKU0002": 30})
    call("get_warehouse")
    call(
        "restock",
        {
            "items": [
                {"device_id": D0, "sku_id": "SKU0001", "qty": 20},
                {"device_id": D1, "sku_id": "SKU0002", "qty": 10},
            ]
        },
    )
    call("restock", {"items": [{"device_id": D1, "sku_id": "SKU0009", "qty": 1}]})  # nothing in the warehouse
    call(
        "reduce",
        {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 2}, {"device_id": D0, "sku_id": "SKU0002", "qty": 1}]},
    )
    call("delist", {"items": [{"device_id": D1, "sku_id": "SKU0002"}, {"device_id": D1, "sku_id": "SKU0003"}]})
    call("discard", {"items": [{"sku_id": "SKU0002", "qty": 3}, {"sku_id": "SKU0004", "qty": 1}]})
    call(
        "adjust_price",
        {
            "items": [
                {"device_id": D0, "sku_id": "SKU0001", "price": 3.5},
                {"device_id": D0, "sku_id": "SKU0001", "price": 99},
            ]
        },
    )
    call("end_day")
    call("end_day")
    call("get_device_detail", {"device_id": D0, "window_days": 7})
    call("get_sku_across_devices", {"sku_id": "SKU0001", "window_days": 3})
    call("get_sales_history", {"window_days": 30})
    call("get_categories", {"category_l1": "drinks"})
    call("get_catalog", {"in_warehouse_only": True, "page_size": 5})
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600) SELECT i FROM n"
    call("query_sql", {"sql": many})  # truncated, with a note
    call("query_sql", {"sql": "SELECT x'00ff', 1e999, NULL, 2.5, replace(hex(zeroblob(1500)), '0', 'x')"})
    call("get_calendar", {"days_ahead": 60})
    call("get_weather")
    call("write_memory", {"text": "two machines stocked"})
    call("read_memory")
    call("write_memory", {"text": ""})
    while not session.done:
        call("end_day")
    call("get_weather")  # after the episode: an error result
    session.close()
    return calls


def test_every_tool_and_every_batch_outcome_is_reached(played):
    assert {name for name, _, res in played if res.ok} == set(TOOLS_BY_NAME)
    for tool in TOOLS:
        if "items" in tool.args.model_fields:  # the six batch tools
            results = [res.data for name, _, res in played if name == tool.name and res.ok]
            assert any(r.n_accepted for r in results) and any(r.n_rejected for r in results), tool.name
    assert played[-2][2].data.done is True and played[-2][2].data.final is not None


def test_every_result_is_its_tools_model_and_dumps_to_the_text(played):
    for name, args, res in played:
        if not res.ok:
            continue
        tool = TOOLS_BY_NAME[name]
        assert type(res.data) is tool.result, (name, args)
        shown = json.loads(res.text)
        assert res.data.model_dump(mode="json", exclude_unset=True) == shown, (name, args)
        assert res.structured_content() == shown
        Draft202012Validator(tool.output_schema).validate(shown)


def test_error_results_carry_no_typed_result(played):
    errors = [res for _, _, res in played if not res.ok]
    assert len(errors) == 2
    assert all(res.data is None and res.structured_content() is None for res in errors)


def test_typed_results_hold_the_numbers(played):
    order = played[0][2].data
    assert isinstance(order, PlaceOrderResult)
    assert (order.n_accepted, order.n_rejected) == (1, 1)
    assert order.accepted[0].item.qty == 5 and order.accepted[0].total_cost == 10.05  # 5 x 2.01
    assert order.cash == 40_000 - 12 - 10.05  # the day's fee, then the order
    assert order.rejected[0].code == "unknown_sku" and order.rejected[0].item.supplier_id is None
    wh = next(res.data for name, args, res in played if name == "get_warehouse" and not args)
    assert dict(zip(wh.column("sku_id"), wh.column("units"), strict=True)) == {"SKU0001": 45, "SKU0002": 30}  # 5 + 40
    assert wh.totals.units == 75
    sql = next(res.data for name, _, res in played if name == "query_sql")
    assert (sql.row_count, sql.truncated, sql.rows[-1]) == (500, True, [500])
    cells = [res.data for name, _, res in played if name == "query_sql"][1]
    assert cells.rows[0][:4] == ["x'00ff'", "inf", None, 2.5] and cells.cells_cut == 1
    ends = [res.data for name, _, res in played if name == "end_day"]
    days = [e.settled.day for e in ends]  # from the day the stock was in the warehouse
    assert days == list(range(days[0], DAYS + 1)) and days[0] > 1
    assert all(isinstance(e, EndDayResult) for e in ends)
    balance = ends[0].observation.balance
    assert round(balance.cash + balance.inventory_at_cost, 2) == balance.net_assets
    pnl = ends[0].observation.pnl
    assert pnl.column("window") == ["yesterday", "last_7d", "last_30d"]
    assert pnl.rows[0][pnl.columns.index("net")] == ends[0].settled.net
    assert ends[-1].observation is None and ends[-1].final.net_assets == ends[-1].settled.net_assets


def _typed(text: str, ok: bool = True) -> Any:
    return ToolResult(ok, json.loads(text), None if ok else "refused", text, GetWeatherResult).data


def test_a_result_that_drifts_from_its_model_is_logged_and_left_untyped(caplog):
    good = '{"day":1,"days":[]}'
    assert _typed(good) == GetWeatherResult(day=1, days=[])
    assert _typed(good, ok=False) is None  # an error result has no typed form
    with caplog.at_level(logging.ERROR, logger="autovend.tools.result"):
        assert _typed('{"day":1,"days":[],"extra":true}') is None
        assert _typed('{"day":"1","days":[]}') is None  # strict: no coercion
    assert caplog.text.count("does not match GetWeatherResult") == 2
