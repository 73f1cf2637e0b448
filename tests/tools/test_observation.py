"""The daily observation (Appendix A.2): the day-1 example on the shipped world, and every block against the simulator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from autovend.env.boundary import simulator_of
from autovend.session import ToolSession
from autovend.tools.observation import DEVICE_COLUMNS, PNL_COLUMNS, render_json

from .conftest import end_days, ok, stock_warehouse

ROOT = Path(__file__).resolve().parents[2]
CN20 = ROOT / "worlds" / "cn20"

# The paper's day-1 device table: id, location (capacity 200, all else zero or null)
PAPER_DEVICES = [
    ("CN_WORKSITE_01", "worksite/canteen"),
    ("CN_WORKSITE_02", "worksite/canteen"),
    ("CN_WORKSITE_03", "worksite/canteen"),
    ("CN_WORKSITE_04", "worksite/plant_floor"),
    ("CN_WORKSITE_05", "worksite/plant_floor"),
    ("CN_WORKSITE_06", "worksite/plant_floor"),
    ("CN_CAMPUS_01", "campus/university"),
    ("CN_CAMPUS_02", "campus/school_dormitory"),
    ("CN_RESIDENTIAL_01", "residential/apartment"),
    ("CN_RESIDENTIAL_02", "residential/apartment"),
    ("CN_RESIDENTIAL_03", "residential/apartment"),
    ("CN_RESIDENTIAL_04", "residential/dormitory"),
    ("CN_COMMERCIAL_01", "commercial/sports_venue"),
    ("CN_COMMERCIAL_02", "commercial/hotel"),
    ("CN_COMMERCIAL_03", "commercial/hotel"),
    ("CN_COMMERCIAL_04", "commercial/sports_venue"),
    ("CN_COMMERCIAL_05", "commercial/leisure_venue"),
    ("CN_COMMERCIAL_06", "commercial/hotel"),
    ("CN_OFFICE_01", "office/industrial_park"),
    ("CN_OFFICE_02", "office/office_building"),
]


@pytest.mark.skipif(not (CN20 / "manifest.json").exists(), reason="the shipped world bundle is not present")
def test_day_one_matches_the_papers_example():
    from autovend.mcp.server import load_world

    s = ToolSession(load_world(CN20), seed=1)
    obs = s.observation()
    zeros = [0.0] * 7
    assert obs == {
        "balance": {
            "cash": 39920.0,
            "shelf": 0.0,
            "warehouse": 0.0,
            "in_transit": 0.0,
            "inventory_at_cost": 0.0,
            "net_assets": 39920.0,
        },
        "pnl": {
            "columns": PNL_COLUMNS,
            "rows": [["yesterday", 0, 0, *zeros], ["last_7d", 0, 0, *zeros], ["last_30d", 0, 0, *zeros]],
        },
        "devices": {
            "columns": DEVICE_COLUMNS,
            "rows": [[d, loc, 200, 0, 0, 0, 0, 0.0, 0, 0, None] for d, loc in PAPER_DEVICES],
        },
        "warehouse": {
            "units": 0,
            "n_skus": 0,
            "value_at_cost": 0.0,
            "rent_per_day": 0.0,
            "expired_units": 0,
            "expiring_7d_units": 0,
        },
        "in_transit": {"orders": 0, "units": 0, "value_at_cost": 0.0, "arrivals": [], "delayed": []},
        "calendar": {"today": {"is_workday": False, "holiday_name": "元旦"}, "next_14d": []},
    }
    assert s.daily_prompt().splitlines()[0] == "Day 1 of 180 — Wednesday, 2025-01-01."
    assert "1,372 SKUs" in s.system_prompt()
    s.close()


def test_columns_are_the_papers():
    assert PNL_COLUMNS == [
        "window", "days", "units_sold", "revenue", "gross_profit", "rent", "labor", "daily_fee", "expired_fine", "net",
    ]  # fmt: skip
    assert DEVICE_COLUMNS == [
        "device_id", "location", "capacity", "units_on_shelf", "n_skus", "empty_slots", "sold_yesterday",
        "sold_7d_avg", "expired_units", "expiring_7d_units", "days_since_visit",
    ]  # fmt: skip


@pytest.fixture
def played(world) -> ToolSession:
    """Two machines stocked on day 2, a small stock that sells out, 10 days played, an order in transit."""
    s = ToolSession(world, seed=2)
    stock_warehouse(s, {"SKU0001": 80, "SKU0002": 80, "SKU0003": 2})
    s.visit_day = s.day  # the first workday with the stock in the warehouse
    ok(
        s,
        "restock",
        {
            "items": [
                {"device_id": "CN_WORKSITE_01", "sku_id": "SKU0001", "qty": 40},
                {"device_id": "CN_WORKSITE_01", "sku_id": "SKU0002", "qty": 40},
                {"device_id": "CN_WORKSITE_01", "sku_id": "SKU0003", "qty": 2},
                {"device_id": "CN_CAMPUS_01", "sku_id": "SKU0001", "qty": 30},
            ]
        },
    )
    end_days(s, 9)
    ok(s, "place_order", {"items": [{"sku_id": f"SKU{4 + i % 9:04d}", "qty": 1 + i % 3} for i in range(30)]})
    yield s
    s.close()


def test_pnl_sums_the_settled_days(played):
    obs = played.observation()
    reports = simulator_of(played).reports
    assert len(reports) == played.day - 1
    for row, n in zip(obs["pnl"]["rows"], (1, 7, 30), strict=True):
        part = reports[-n:]
        assert row[1] == len(part)
        assert row[2] == sum(r.units_sold for r in part)
        assert row[3] == pytest.approx(sum(r.revenue_fen for r in part) / 100)
        assert row[4] == pytest.approx(sum(r.gross_profit_fen for r in part) / 100)
        assert row[5] == pytest.approx(sum(r.costs_fen["warehouse_rent"] for r in part) / 100)
        assert row[6] == pytest.approx(sum(r.costs_fen["visit"] for r in part) / 100)
        assert row[7] == 12.0 * len(part)
        assert row[9] == pytest.approx(sum(r.net_fen for r in part) / 100)
    assert obs["pnl"]["rows"][2][6] == 70.0  # two machines visited once


def test_devices_block_against_the_simulator(played):
    obs = played.observation()
    dev = simulator_of(played).devices()
    rows = obs["devices"]["rows"]
    reports = simulator_of(played).reports
    sold = np.array([r.machine_table["units_sold"] for r in reports[-7:]])
    for m, row in enumerate(rows):
        assert row[0] == dev["device_id"][m] and row[1] == dev["location"][m] and row[2] == 200
        assert row[3] == dev["units_on_shelf"][m] and row[4] == dev["n_skus"][m]
        assert row[6] == reports[-1].machine_table["units_sold"][m]
        assert row[7] == round(sold[:, m].mean(), 2)
        assert (row[8], row[9]) == (dev["expired_units"][m], dev["expiring_7d_units"][m])
    since = played.day - played.visit_day
    assert [r[10] for r in rows] == [since, since, None]
    # empty slots: products sold at the machine in the last 7 days that have no unit there now
    last = played.day - 1
    sold_recent = (
        simulator_of(played)
        .records.connection.execute("SELECT DISTINCT device_id, sku_id FROM daily_sales WHERE day > ?", (last - 7,))
        .fetchall()
    )
    shelf = simulator_of(played).shelf_units()
    expect = [
        sum(1 for d, k in sold_recent if d == device and shelf[m, simulator_of(played).sku_index(k)] == 0)
        for m, device in enumerate(simulator_of(played).device_ids)
    ]
    assert [r[5] for r in rows] == expect
    assert expect[0] >= 1  # the two units of SKU0003 sold out


def test_warehouse_and_in_transit_blocks(played):
    obs = played.observation()
    wh = simulator_of(played).warehouse()
    assert obs["warehouse"] == {
        "units": int(wh["units"].sum()),
        "n_skus": len(wh),
        "value_at_cost": round(float(wh["value_at_cost"].sum()), 2),
        "rent_per_day": round(int(wh["units"].sum()) * 0.03, 2),
        "expired_units": int(wh["expired_units"].sum()),
        "expiring_7d_units": int(wh["expiring_7d_units"].sum()),
    }
    tr = obs["in_transit"]
    assert (tr["orders"], tr["units"]) == (30, 60)
    eta = played.day + 3
    date = simulator_of(played).world.date_of(eta).isoformat()
    assert tr["arrivals"] == [{"day": eta, "date": date, "orders": 30, "units": 60}]
    assert tr["delayed"] == []
    assert tr["value_at_cost"] == round(float(simulator_of(played).in_transit()["value_at_cost"].sum()), 2)
    end_days(played, 4)  # the promised day has passed: what has not arrived is delayed
    later = played.observation()["in_transit"]
    pending = simulator_of(played).in_transit()
    assert [d["order_id"] for d in later["delayed"]] == list(pending.loc[pending["delayed"], "order_id"])
    assert len(later["delayed"]) >= 1 and later["arrivals"] == []
    assert all(d["promised_day"] == eta and d["days_late"] == 1 for d in later["delayed"])
    assert later["orders"] == len(pending)
    assert later["units"] == int(pending["qty"].sum())
    rows = simulator_of(played).in_transit_rows()
    assert [list(r) for r in rows] == pending.values.tolist()  # the frame is these rows


def test_stock_view_of_one_machine_matches_every_shelf(played):
    from autovend.tools.views import StockView

    sim = simulator_of(played)
    while not sim.today.is_workday:
        end_days(played, 1)
    items = [{"device_id": "CN_CAMPUS_01", "sku_id": s, "qty": q} for s, q in (("SKU0001", 4), ("SKU0002", 6))]
    ok(played, "restock", {"items": items})
    one, every = StockView.from_sim(sim), StockView.from_sim(sim)
    m = sim.device_index("CN_CAMPUS_01")
    got = one.machine_expiry(m)  # walks machine m's batches only
    assert "_shelf" not in one.__dict__
    for part, full in zip(got, (every.shelf_expired, every.shelf_expiring, every.shelf_next_expiry), strict=True):
        assert part.tolist() == full[m].tolist()
    expired, _ = sim.expired_by()
    assert every.shelf_expired.tolist() == expired.tolist()
    batches = sim.warehouse_batches().set_index("sku_id")["expiry_day"]  # the restocked units came from there
    k1, k2 = sim.sku_index("SKU0001"), sim.sku_index("SKU0002")
    assert (got[2][k1], got[2][k2]) == (batches["SKU0001"], batches["SKU0002"])
    assert one.shelf_units[m].sum() == 10 and (got[2] > 0).sum() == 2


def test_calendar_block_two_weeks_ahead(world):
    s = ToolSession(world, seed=1)
    end_days(s, 12)  # day 13 = 2025-01-13; the next 14 days are days 14-27
    cal = s.observation()["calendar"]
    assert cal["today"] == {"is_workday": True, "holiday_name": None}
    assert [(d["date"], d["kind"]) for d in cal["next_14d"]] == [("2025-01-26", "makeup_workday")]
    assert cal["next_14d"][0] == {
        "date": "2025-01-26",
        "weekday": "Sunday",
        "kind": "makeup_workday",
        "name": None,
        "is_workday": True,
    }
    s.close()


def test_render_json_round_trips(played):
    obs = played.observation()
    text = render_json(obs)
    assert json.loads(text) == obs
    assert '  "rows": [\n   ["yesterday", 1,' in text  # one table row per line
    prompt = played.daily_prompt()
    first, _, rest = prompt.partition("\n\n")
    info = simulator_of(played).today
    assert first == f"Day {played.day} of 40 — {info.weekday}, {info.date.isoformat()}."
    assert played.day == played.visit_day + 9
    body, _, closing = rest.rpartition("\n\n")
    assert json.loads(body) == obs
    assert "end_day" in closing
