"""The paper's tool rules, through ToolSession: batches, partial acceptance, visits, windows, pages, memory, end."""

from __future__ import annotations

import datetime as dt

import pytest

from autovend.env.boundary import episode_of, simulator_of
from autovend.session import ToolSession
from autovend.tools.registry import TOOLS
from autovend.tools.trajectory import read_trajectory

from .conftest import end_days, fail, ok, stock_warehouse

D0, D1 = "CN_WORKSITE_01", "CN_CAMPUS_01"


def _orders(session: ToolSession) -> int:
    return simulator_of(session).records.connection.execute("SELECT COUNT(*) FROM orders").fetchone()[0]


# ----------------------------------------------------------------------------------- malformed batches

GOOD = {"sku_id": "SKU0001", "qty": 5}
MALFORMED = [
    pytest.param({"items": []}, "items needs at least 1 item", id="empty"),
    pytest.param({"items": [GOOD] * 101}, "items holds 101 items, at most 100", id="101-items"),
    pytest.param({}, "items is required", id="no-items"),
    pytest.param({"items": GOOD}, "items must be a list", id="items-not-list"),
    pytest.param({"items": [GOOD, "SKU0002"]}, "items[1] must be an object", id="item-not-object"),
    pytest.param(
        {"items": [GOOD, {**GOOD, "colour": "red"}]}, "items[1].colour is not a known field", id="unknown-key"
    ),
    pytest.param({"items": [GOOD], "urgent": True}, "urgent is not a known field", id="unknown-param"),
    pytest.param({"items": [{"sku_id": "SKU0001", "qty": 1.5}]}, "items[0].qty must be a whole number", id="qty-float"),
    pytest.param({"items": [{"sku_id": "SKU0001", "qty": 2.0}]}, "items[0].qty must be a whole number", id="qty-2.0"),
    pytest.param({"items": [{"sku_id": "SKU0001", "qty": "3"}]}, "items[0].qty must be a whole number", id="qty-str"),
    pytest.param({"items": [{"sku_id": "SKU0001", "qty": True}]}, "items[0].qty must be a whole number", id="qty-bool"),
    pytest.param({"items": [{"sku_id": "SKU0001", "qty": 0}]}, "items[0].qty must be at least 1, got 0", id="qty-0"),
    pytest.param(
        {"items": [{"sku_id": "SKU0001", "qty": -4}]}, "items[0].qty must be at least 1, got -4", id="qty-neg"
    ),
    pytest.param({"items": [{"sku_id": "SKU0001"}]}, "items[0].qty is required", id="qty-missing"),
    pytest.param({"items": [{"sku_id": 7, "qty": 1}]}, "items[0].sku_id must be a string", id="sku-int"),
    pytest.param({"items": [{"sku_id": "", "qty": 1}]}, "items[0].sku_id must not be empty", id="sku-empty"),
]


@pytest.mark.parametrize("args,message", MALFORMED)
def test_malformed_batch_is_rejected_whole(session, args, message):
    cash = simulator_of(session).cash
    # a valid item first: it must not be carried out either
    if isinstance(args.get("items"), list) and args["items"] and len(args["items"]) <= 100:
        args = {**args, "items": [GOOD, *args["items"]]}
        message = message.replace("items[1]", "items[2]").replace("items[0]", "items[1]")
    error = fail(session, "place_order", args)
    assert message in error
    assert "whole batch was rejected and nothing was carried out" in error
    assert simulator_of(session).cash == cash
    assert _orders(session) == 0


@pytest.mark.parametrize(
    "tool,item,message",
    [
        pytest.param(
            "adjust_price",
            {"device_id": D0, "sku_id": "SKU0001", "price": "3.5"},
            "price must be a number",
            id="price-str",
        ),
        pytest.param("adjust_price", {"device_id": D0, "sku_id": "SKU0001"}, "price is required", id="price-missing"),
        pytest.param(
            "restock",
            {"device_id": D0, "sku_id": "SKU0001", "qty": 1.0},
            "qty must be a whole number",
            id="restock-float",
        ),
        pytest.param(
            "reduce", {"device_id": D0, "sku_id": "SKU0001", "qty": 0}, "qty must be at least 1", id="reduce-0"
        ),
        pytest.param(
            "delist",
            {"device_id": D0, "sku_id": "SKU0001", "qty": 2},
            "qty is not a known field (allowed: device_id, sku_id)",
            id="delist-qty",
        ),
        pytest.param("discard", {"sku_id": "SKU0001", "qty": -1}, "qty must be at least 1", id="discard-neg"),
    ],
)
def test_malformed_items_of_every_mutation_tool(session, tool, item, message):
    stock_warehouse(session, {"SKU0001": 10})
    before = simulator_of(session).records.connection.total_changes
    error = fail(session, tool, {"items": [item]})
    assert f"items[0].{message}" in error
    assert simulator_of(session).records.connection.total_changes == before
    assert simulator_of(session).visits_today() == {}


def test_errors_list_every_problem(session):
    error = fail(session, "place_order", {"items": [{"sku_id": 1, "qty": 0}, {"qty": "x", "extra": 1}]})
    for part in (
        "items[0].sku_id must be a string",
        "items[0].qty must be at least 1",
        "items[1].sku_id is required",
        "items[1].qty must be a whole number",
        "items[1].extra is not a known field (allowed: sku_id, qty, supplier_id)",
    ):
        assert part in error


# ----------------------------------------------------------------------------------- partial acceptance


def test_partial_acceptance_and_reasons(session):
    sim = simulator_of(session)
    cost = float(simulator_of(session).world.catalog.loc[1, "unit_cost"])  # SKU0002
    out = ok(
        session,
        "place_order",
        {
            "items": [
                {"sku_id": "SKU9999", "qty": 3},
                {"sku_id": "SKU0002", "qty": 10},
                {"sku_id": "SKU0003", "qty": 5, "supplier_id": "acme"},
                {"sku_id": "SKU0004", "qty": 2_000_000},
            ]
        },
    )
    assert (out["n_accepted"], out["n_rejected"]) == (1, 3)
    assert [a["index"] for a in out["accepted"]] == [1]
    assert [(r["index"], r["code"]) for r in out["rejected"]] == [
        (0, "unknown_sku"),
        (2, "unknown_supplier"),
        (3, "qty_too_large"),
    ]
    assert all(r["message"] for r in out["rejected"])
    assert out["total_cost"] == round(10 * cost, 2)
    assert sim.cash == round(40_000 - 12 - 10 * cost, 2)  # 3 machines x 4.0 fee on day 1
    assert _orders(session) == 1
    assert sim.in_transit_units().sum() == 10


def test_price_band_is_checked_per_item(session):
    ref = float(simulator_of(session).world.catalog.loc[0, "ref_price"])
    out = ok(
        session,
        "adjust_price",
        {
            "items": [
                {"device_id": D0, "sku_id": "SKU0001", "price": round(ref * 2.0, 2)},
                {"device_id": D0, "sku_id": "SKU0002", "price": 0.01},
                {"device_id": "NOPE", "sku_id": "SKU0001", "price": ref},
                {"device_id": D1, "sku_id": "SKU0001", "price": round(ref * 0.5, 2)},
            ]
        },
    )
    assert [a["index"] for a in out["accepted"]] == [0, 3]
    assert [r["code"] for r in out["rejected"]] == ["price_out_of_band", "unknown_device"]
    assert simulator_of(session).price(D0, "SKU0001") == round(ref * 2.0, 2)
    assert simulator_of(session).price(D0, "SKU0002") == float(simulator_of(session).world.catalog.loc[1, "ref_price"])


# ----------------------------------------------------------------------------------- visits


def test_physical_tools_charge_one_visit_per_machine_per_day(session):
    stock_warehouse(session, {"SKU0001": 30, "SKU0002": 30})
    day = session.day
    a = ok(session, "restock", {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 5}]})
    assert (a["new_visits"], a["visits_today"], a["visit_fees_today"]) == ([D0], [D0], 35.0)
    b = ok(
        session,
        "restock",
        {"items": [{"device_id": D0, "sku_id": "SKU0002", "qty": 5}, {"device_id": D1, "sku_id": "SKU0001", "qty": 4}]},
    )
    assert (b["new_visits"], b["visits_today"], b["visit_fees_today"]) == ([D1], [D0, D1], 70.0)
    c = ok(session, "reduce", {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 2}]})
    d = ok(session, "delist", {"items": [{"device_id": D1, "sku_id": "SKU0001"}]})
    assert c["new_visits"] == d["new_visits"] == []
    assert d["accepted"][0]["qty"] == 4
    assert simulator_of(session).visits_today() == {D0: 3, D1: 2}
    settled = ok(session, "end_day")["settled"]
    assert settled["day"] == day
    assert (settled["labor"], settled["visited"]) == (70.0, [D0, D1])


def test_rejected_items_trigger_no_visit(session):
    stock_warehouse(session, {"SKU0001": 10})
    out = ok(
        session,
        "restock",
        {
            "items": [
                {"device_id": D0, "sku_id": "SKU0001", "qty": 11},  # more than the warehouse holds
                {"device_id": D1, "sku_id": "SKU0002", "qty": 1},  # none in the warehouse
                {"device_id": D1, "sku_id": "SKU0001", "qty": 201},  # over capacity (200)
            ]
        },
    )
    assert [r["code"] for r in out["rejected"]] == ["insufficient_stock", "insufficient_stock", "insufficient_stock"]
    out = ok(session, "delist", {"items": [{"device_id": D0, "sku_id": "SKU0001"}]})
    assert out["rejected"][0]["code"] == "not_on_shelf"
    assert out["visits_today"] == [] and simulator_of(session).visits_today() == {}
    assert ok(session, "end_day")["settled"]["labor"] == 0.0


def test_capacity_is_checked(session):
    stock_warehouse(session, {"SKU0001": 150, "SKU0002": 100})
    out = ok(
        session,
        "restock",
        {
            "items": [
                {"device_id": D0, "sku_id": "SKU0001", "qty": 150},
                {"device_id": D0, "sku_id": "SKU0002", "qty": 51},
            ]
        },
    )
    assert [r["code"] for r in out["rejected"]] == ["capacity_exceeded"]
    assert "restock at most 50" in out["rejected"][0]["message"]
    assert simulator_of(session).shelf_units()[0].sum() == 150


def test_no_site_visit_on_a_holiday(session):
    assert session.day == 1 and not simulator_of(session).is_workday  # New Year
    out = ok(session, "restock", {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 1}]})
    assert out["rejected"][0]["code"] == "not_workday"
    assert "the next working day is day 2" in out["rejected"][0]["message"]


# ----------------------------------------------------------------------------------- windows and sales


@pytest.fixture
def trading(world, tmp_path) -> ToolSession:
    """A session with SKU0001/2 on two machines and 8 settled days of sales from day 2 on."""
    s = ToolSession(world, seed=1)
    stock_warehouse(s, {"SKU0001": 120, "SKU0002": 120, "SKU0003": 40})
    ok(
        s,
        "restock",
        {
            "items": [
                {"device_id": D0, "sku_id": "SKU0001", "qty": 50},
                {"device_id": D0, "sku_id": "SKU0002", "qty": 50},
                {"device_id": D1, "sku_id": "SKU0001", "qty": 50},
            ]
        },
    )
    end_days(s, 8)
    yield s
    s.close()


def _sql(session: ToolSession, sql: str) -> list[list]:
    return ok(session, "query_sql", {"sql": sql})["rows"]


@pytest.mark.parametrize("window", [1, 3, 7, 30, None])
def test_device_detail_window_matches_records(trading, window):
    args = {"device_id": D0} if window is None else {"device_id": D0, "window_days": window}
    out = ok(trading, "get_device_detail", args)
    n = window or 30
    last = trading.day - 1
    first = max(1, last - n + 1)
    assert (out["window_days"], out["days_covered"]) == (n, last - first + 1)
    rows = _sql(
        trading,
        f"SELECT sku_id, SUM(units), ROUND(SUM(revenue), 2) FROM daily_sales WHERE device_id = '{D0}' "
        f"AND day BETWEEN {first} AND {last} GROUP BY sku_id ORDER BY sku_id",
    )
    cols = out["products"]["columns"]
    got = {
        r[0]: (r[cols.index("sold")], r[cols.index("revenue")])
        for r in out["products"]["rows"]
        if r[cols.index("sold")]
    }
    assert got == {sku: (u, r) for sku, u, r in rows}
    assert out["units_sold"] == sum(u for _, u, _ in rows)
    assert [d[0] for d in out["daily"]["rows"]] == list(range(first, last + 1))
    assert sum(d[1] for d in out["daily"]["rows"]) == out["units_sold"]
    shelf = simulator_of(trading).shelf_units()[0]
    units = {r[0]: r[cols.index("units")] for r in out["products"]["rows"] if r[cols.index("units")]}
    assert units == {simulator_of(trading).sku_ids[k]: shelf[k] for k in shelf.nonzero()[0]}
    assert out["units_on_shelf"] == shelf.sum() and out["free_capacity"] == 200 - shelf.sum()


@pytest.mark.parametrize(
    "tool,args",
    [
        ("get_device_detail", {"device_id": D0}),
        ("get_sku_across_devices", {"sku_id": "SKU0001"}),
        ("get_sales_history", {}),
    ],
)
@pytest.mark.parametrize("bad", [0, 2, 14, 31, -7, "7", 7.0, True, None])
def test_windows_are_1_3_7_or_30(session, tool, args, bad):
    res = session.call(tool, {**args, "window_days": bad})
    if bad is None:  # null means the default
        assert res.ok and res.content["window_days"] == 30
        return
    assert not res.ok
    assert "window_days must be one of 1, 3, 7 or 30" in res.error


def test_sku_across_devices_and_sales_history_match_records(trading):
    out = ok(trading, "get_sku_across_devices", {"sku_id": "SKU0001", "window_days": 7})
    last = trading.day - 1
    rows = _sql(
        trading,
        f"SELECT device_id, SUM(units) FROM daily_sales WHERE sku_id = 'SKU0001' AND day > {last - 7} GROUP BY device_id",
    )
    cols = out["devices"]["columns"]
    sold = {r[0]: r[cols.index("sold")] for r in out["devices"]["rows"]}
    assert sold == {d: dict(rows).get(d, 0) for d in simulator_of(trading).device_ids}
    assert out["units_sold"] == sum(sold.values())
    assert out["price_band"] == list(simulator_of(trading).price_band("SKU0001"))
    hist = ok(trading, "get_sales_history", {"window_days": 7})
    reports = simulator_of(trading).reports[-7:]
    assert [r[0] for r in hist["daily"]["rows"]] == [r.day for r in reports]
    assert hist["totals"]["units_sold"] == sum(r.units_sold for r in reports)
    assert hist["totals"]["daily_fee"] == 7 * 12.0
    top = hist["top_products"]["rows"]
    units = dict(_sql(trading, f"SELECT sku_id, SUM(units) FROM daily_sales WHERE day > {last - 7} GROUP BY sku_id"))
    assert {r[0]: r[2] for r in top} == units
    assert [r[2] for r in top] == sorted((r[2] for r in top), reverse=True)
    assert {r[0]: r[5] for r in top}["SKU0001"] == 2  # sold at two machines


def test_unknown_ids_in_queries(session):
    assert "is not one of the machines; use one of: CN_WORKSITE_01" in fail(
        session, "get_device_detail", {"device_id": "X"}
    )
    assert "is not in the catalog" in fail(session, "get_sku_across_devices", {"sku_id": "X"})
    assert "does not exist; use one of: drinks, snacks" in fail(session, "get_categories", {"category_l1": "toys"})


# ----------------------------------------------------------------------------------- pagination


@pytest.fixture
def wide(wide_world) -> ToolSession:
    s = ToolSession(wide_world, seed=1)
    yield s
    s.close()


def test_catalog_pages(wide):
    first = ok(wide, "get_catalog")
    assert (first["page"], first["page_size"], first["pages"], first["total"]) == (1, 20, 3, 60)
    assert [r[0] for r in first["rows"]] == [f"SKU{i:04d}" for i in range(1, 21)]
    big = ok(wide, "get_catalog", {"page_size": 50, "page": 2})
    assert (big["pages"], len(big["rows"]), big["rows"][0][0]) == (2, 10, "SKU0051")
    past = ok(wide, "get_catalog", {"page": 4})
    assert past["rows"] == [] and "past the last page (3)" in past["note"]
    assert "page_size must be at most 50, got 51" in fail(wide, "get_catalog", {"page_size": 51})
    assert "page must be at least 1, got 0" in fail(wide, "get_catalog", {"page": 0})
    assert "page_size must be at least 1, got 0" in fail(wide, "get_warehouse", {"page_size": 0})


def test_warehouse_pages(wide):
    stock_warehouse(wide, {f"SKU{i:04d}": 2 for i in range(1, 26)})
    out = ok(wide, "get_warehouse")
    assert (out["total"], out["pages"], len(out["rows"])) == (25, 2, 20)
    assert out["totals"]["units"] == 50 and out["totals"]["rent_per_day"] == 1.5
    out2 = ok(wide, "get_warehouse", {"page": 2})
    assert [r[0] for r in out2["rows"]] == [f"SKU{i:04d}" for i in range(21, 26)]
    frame = simulator_of(wide).warehouse().set_index("sku_id")
    for row in out["rows"] + out2["rows"]:
        assert row[2] == frame.loc[row[0], "units"]
        assert row[7] == frame.loc[row[0], "value_at_cost"]


def test_catalog_filters_and_sorts(wide):
    cat = simulator_of(wide).world.catalog
    asc = ok(wide, "get_catalog", {"sort_by": "price_asc", "page_size": 50})["rows"]
    assert [r[4] for r in asc] == sorted(cat["ref_price"])[:50]
    desc = ok(wide, "get_catalog", {"sort_by": "price_desc", "page_size": 5})["rows"]
    assert [r[4] for r in desc] == sorted(cat["ref_price"], reverse=True)[:5]
    margin = ok(wide, "get_catalog", {"sort_by": "margin", "page_size": 50})["rows"]
    assert [r[6] for r in margin] == sorted((r[6] for r in margin), reverse=True)
    snacks = ok(wide, "get_catalog", {"category_l1": "Snacks", "price_min": 5, "price_max": 8, "page_size": 50})
    expect = cat[(cat.category_l1 == "snacks") & cat.ref_price.between(5, 8)]
    assert snacks["total"] == len(expect) and [r[0] for r in snacks["rows"]] == list(expect["sku_id"])
    found = ok(wide, "get_catalog", {"query": "sku0042"})
    assert [r[0] for r in found["rows"]] == ["SKU0042"]
    none = ok(wide, "get_catalog", {"category_l2": "caviar"})
    assert none["total"] == 0 and "no category_l2 'caviar'" in none["note"]
    stock_warehouse(wide, {"SKU0007": 3})
    only = ok(wide, "get_catalog", {"in_warehouse_only": True})
    assert [(r[0], r[8]) for r in only["rows"]] == [("SKU0007", 3)]


def test_categories(wide):
    out = ok(wide, "get_categories")
    assert out["n_skus"] == 60 == sum(r[2] for r in out["rows"])
    drinks = ok(wide, "get_categories", {"category_l1": "drinks"})
    assert {r[0] for r in drinks["rows"]} == {"drinks"} and drinks["n_skus"] == 30


# ----------------------------------------------------------------------------------- memory


def test_memory_limit_and_clear(session):
    assert ok(session, "read_memory") == {"text": "", "chars": 0, "limit": 6000}
    notes = "x" * 6000
    assert ok(session, "write_memory", {"text": notes})["chars"] == 6000
    error = fail(session, "write_memory", {"text": "y" * 6001})
    assert "6,001 characters, 1 over the limit of 6,000" in error and "unchanged" in error
    assert session.notebook == notes and ok(session, "read_memory")["text"] == notes
    ok(session, "write_memory", {"text": "plan: stock drinks"})
    assert ok(session, "read_memory")["text"] == "plan: stock drinks"
    assert ok(session, "write_memory", {"text": ""})["cleared"] is True
    assert session.notebook == ""
    assert "text is required" in fail(session, "write_memory", {})
    assert "text must be a string" in fail(session, "write_memory", {"text": 5})


def test_notebook_survives_days_and_starts_from_argument(world):
    s = ToolSession(world, seed=1, notebook="carried over")
    end_days(s, 3)
    assert ok(s, "read_memory")["text"] == "carried over"
    with pytest.raises(ValueError, match="6001 characters"):
        ToolSession(world, seed=1, notebook="z" * 6001)


# ----------------------------------------------------------------------------------- days and the end


def test_end_day_moves_to_the_next_day(session):
    out = ok(session, "end_day")
    assert out["settled"]["day"] == 1 and out["done"] is False
    assert out["next_day"] == "Day 2 of 40 — Thursday, 2025-01-02."
    assert out["observation"] == session.observation()
    assert session.day == 2
    assert ok(session, "get_calendar")["today"]["date"] == "2025-01-02"


def test_after_the_last_day_every_tool_says_over(short_world):
    s = ToolSession(short_world, seed=1)
    end_days(s, 3)
    last = ok(s, "end_day")
    assert last["done"] is True and "episode is over" in last["message"]
    assert last["final"]["net_assets"] == simulator_of(s).net_assets == round(40_000 - 4 * 12, 2)
    for tool in TOOLS:
        res = s.call(tool.name, {})
        assert not res.ok and "The episode is over" in res.error, tool.name
    assert s.done and "episode is over" in s.daily_prompt()


def test_unknown_tool_and_bad_arguments(session):
    assert "there is no tool 'sell'; the tools are: place_order" in fail(session, "sell", {})
    assert "arguments must be a JSON object of named parameters, got an array of 1 item" in fail(
        session, "get_weather", ["x"]
    )  # in JSON's words, not Python's (before: "got list")
    assert 'got a string ("x")' in fail(session, "get_weather", "x")
    assert "got a Python set, which is no JSON value" in fail(session, "get_weather", {1})
    assert session.call("get_weather", None).ok
    assert "this tool takes no arguments" in fail(session, "end_day", {"now": True})
    assert session.day == 1


def test_internal_errors_become_results(session, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(simulator_of(session), "warehouse_units", boom)
    monkeypatch.setattr(episode_of(session).ctx.views, "_version", None)
    error = fail(session, "get_warehouse")
    assert "internal error (RuntimeError: disk on fire)" in error
    monkeypatch.undo()
    assert session.call("get_weather").ok


# ----------------------------------------------------------------------------------- calendar and weather


def test_calendar_lists_published_holidays_and_makeup_days(session):
    out = ok(session, "get_calendar", {"days_ahead": 40})
    assert out["today"] == {
        "day": 1,
        "date": "2025-01-01",
        "weekday": "Wednesday",
        "is_workday": False,
        "holiday_name": "元旦",
    }
    days = [(d["date"], d["kind"]) for d in out["special_days"]]
    assert days[:3] == [
        ("2025-01-26", "makeup_workday"),
        ("2025-01-28", "holiday"),
        ("2025-01-29", "holiday"),
    ]
    assert days[-1] == ("2025-02-08", "makeup_workday")  # day 39; days_ahead 40 covers days 2-41
    edge = ok(session, "get_calendar", {"days_ahead": 25})  # days 2-26: 2025-01-26 is day 26
    assert (edge["until"], [d["date"] for d in edge["special_days"]]) == ("2025-01-26", ["2025-01-26"])
    assert ok(session, "get_calendar", {"days_ahead": 24})["special_days"] == []
    default = ok(session, "get_calendar")
    assert (default["days_ahead"], default["until"]) == (60, "2025-03-02")
    far = ok(session, "get_calendar", {"days_ahead": 400})
    cal = simulator_of(session).world.calendar
    dates = cal["date"].dt.date
    inside = (dates > dt.date(2025, 1, 1)) & (dates <= dt.date(2026, 2, 5))  # days 2-401
    special = (cal["day_type"] == "holiday") | (cal["is_workday"] & (cal["date"].dt.day_of_week >= 5))
    assert far["until"] == "2026-02-05"
    assert [d["date"] for d in far["special_days"]] == [d.isoformat() for d in dates[inside & special]]
    assert "days_ahead must be at most 400" in fail(session, "get_calendar", {"days_ahead": 401})
    assert "days_ahead must be at least 1" in fail(session, "get_calendar", {"days_ahead": 0})


def test_weather_today_and_seven_days(session, world):
    out = ok(session, "get_weather")
    days = out["days"]
    assert [d["lead"] for d in days] == list(range(8))
    assert [d["date"] for d in days][:2] == ["2025-01-01", "2025-01-02"]
    assert days[0]["basis"] == "settlement" and {d["basis"] for d in days[1:]} == {"forecast"}
    today = world.weather.iloc[0]
    assert (days[0]["t_max_c"], days[0]["precip_mm"]) == (today["t_max_c"], today["precip_mm"])
    fc = world.forecast[world.forecast["issue_date"] == world.forecast["issue_date"].iloc[0]]
    assert [d["t_max_c"] for d in days] == list(fc["t_max_c"])


# ----------------------------------------------------------------------------------- trajectory and checkpoints


def test_trajectory_logs_every_call(session):
    ok(session, "place_order", {"items": [GOOD]})
    fail(session, "get_device_detail", {"device_id": D0, "window_days": 5})
    ok(session, "end_day")
    ok(session, "get_weather")
    session.close()
    lines = read_trajectory(session.trajectory_path)
    assert lines[0]["kind"] == "start" and lines[0]["seed"] == 1 and lines[0]["horizon_days"] == 40
    calls = lines[1:]
    assert [c["seq"] for c in calls] == [1, 2, 3, 4]
    assert [(c["day"], c["tool"], c["ok"]) for c in calls] == [
        (1, "place_order", True),
        (1, "get_device_detail", False),
        (1, "end_day", True),
        (2, "get_weather", True),
    ]
    assert calls[0]["arguments"] == {"items": [GOOD]}
    assert calls[0]["result"]["accepted"][0]["qty"] == 5
    assert calls[1]["error"].startswith("get_device_detail: malformed arguments")
    assert all(c["wall_ms"] >= 0 for c in calls)
    assert session.counters == {
        "seq": 4,
        "errors": 1,
        "by_tool": {"place_order": 1, "get_device_detail": 1, "end_day": 1, "get_weather": 1},
    }


def test_save_and_load_continue_identically(world, tmp_path):
    a = ToolSession(world, seed=3, trajectory_path=tmp_path / "a.jsonl")
    stock_warehouse(a, {"SKU0001": 60})
    ok(a, "restock", {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 40}]})
    ok(a, "write_memory", {"text": "day notes"})
    path = episode_of(a).save(tmp_path / "a.session")
    b = ToolSession.load(path, world, trajectory_path=tmp_path / "a.jsonl")
    assert (b.day, b.notebook, b.counters) == (a.day, "day notes", a.counters)
    for s in (a, b):
        end_days(s, 5)
    assert a.observation() == b.observation()
    assert a.call("get_device_detail", {"device_id": D0}).text == b.call("get_device_detail", {"device_id": D0}).text
    a.close()
    b.close()
    seqs = [c["seq"] for c in read_trajectory(tmp_path / "a.jsonl")[1:]]
    assert seqs.count(seqs[-1]) == 2  # both sessions appended; the restored one continued the numbering
    from autovend.errors import CheckpointError

    (tmp_path / "junk").write_bytes(b"not a pickle")
    with pytest.raises(CheckpointError):
        ToolSession.load(tmp_path / "junk", world)
