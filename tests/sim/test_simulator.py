"""The rules of the day cycle, orders, physical actions, prices, visits, expiry and the episode end."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from autovend.errors import BundleError, EpisodeOver
from autovend.sim import REJECTION_CODES, Simulator
from autovend.sim.inventory import lead_time, lead_time_table
from autovend.world.model import Economics
from autovend.world.toy import toy_world

from .conftest import advance_to, stock

D0, D1, D2 = "CN_WORKSITE_01", "CN_CAMPUS_01", "CN_RESIDENTIAL_01"


def cost_fen(sim: Simulator, sku: str) -> int:
    return int(sim.cost_fen[sim.sku_index(sku)])


# ---------------------------------------------------------------- start of a run


def test_day_one_of_the_paper_network():
    """20 machines: the fixed fee is 80 a day, so cash is 39,920 on day 1 (the paper's first observation)."""
    sim = Simulator(toy_world(20, 30, seed=0), seed=1)
    assert (sim.day, sim.date, sim.weekday) == (1, dt.date(2025, 1, 1), "Wednesday")
    assert not sim.is_workday and sim.today.day_type == "holiday" and sim.today.holiday_name == "元旦"
    assert sim.cash == 39_920.0
    assert sim.balance().to_dict() == {
        "cash": 39920.0,
        "shelf": 0.0,
        "warehouse": 0.0,
        "in_transit": 0.0,
        "inventory_at_cost": 0.0,
        "net_assets": 39920.0,
    }
    start = sim.day_start
    assert start.daily_fee_fen == 8_000 and start.warehouse_rent_fen == 0 and start.arrivals == ()
    assert sim.shelf_units().sum() == 0 and sim.warehouse_units().sum() == 0 and sim.in_transit().empty
    assert sim.devices()["days_since_visit"].isna().all()


def test_reset_starts_over(world):
    sim = Simulator(world, seed=3)
    sim.place_order([{"sku_id": "SKU0001", "qty": 10}])
    sim.end_day()
    start = sim.reset(seed=4)
    assert (sim.day, sim.seed, sim.cash_fen) == (1, 4, 4_000_000 - 1_200)
    assert start.day == 1 and sim.records.frame("orders").empty and sim.ledger_totals_fen()["inventory"] == 0


def test_world_without_weather_is_refused(world):

    broken = world.replace(weather=world.weather.iloc[:10])
    with pytest.raises(BundleError, match="settlement weather lacks"):
        Simulator(broken)


def test_a_bundle_path_is_loaded(tmp_path):
    from pathlib import Path

    from autovend.world.bundle import load_world

    bundle = Path(__file__).resolve().parents[2] / "worlds" / "cn20"
    by_path = Simulator(str(bundle), seed=1)  # as the README shows: Simulator("worlds/cn20", seed=1)
    by_world = Simulator(load_world(bundle), seed=1)
    assert by_path.world.world_hash == by_world.world.world_hash != ""
    assert by_path.n_machines == 20 and by_path.day == 1
    assert by_path.cash == by_world.cash == 40_000 - 20 * 4  # day 1's fixed fee is charged
    with pytest.raises(BundleError):
        Simulator(tmp_path / "no-such-bundle")
    with pytest.raises(TypeError, match="World or the path of a world bundle folder, got int"):
        Simulator(20)  # type: ignore[arg-type]


# ---------------------------------------------------------------- orders and arrivals


def test_order_debits_cash_at_placement_and_lands_after_its_lead_time(world):
    sim = Simulator(world, seed=11)
    cash = sim.cash_fen
    res = sim.place_order([{"sku_id": "SKU0003", "qty": 40}, {"sku_id": "SKU0004", "qty": 7, "supplier_id": "default"}])
    assert res.all_accepted and [a.detail["order_id"] for a in res.accepted] == [1, 2]
    assert sim.cash_fen == cash - 40 * cost_fen(sim, "SKU0003") - 7 * cost_fen(sim, "SKU0004")
    assert res.accepted[0].detail["eta_day"] == 4 and res.accepted[0].detail["eta_date"] == "2025-01-04"
    transit = sim.in_transit()
    assert list(transit["qty"]) == [40, 7] and not transit["delayed"].any()
    assert "arrival_day" not in transit.columns  # the actual day stays hidden
    leads, cdf = lead_time_table(world.economics.lead_time_pmf)
    arrival = 1 + lead_time(11, 1, leads, cdf)
    advance_to(sim, arrival - 1)
    assert sim.warehouse_units()[sim.sku_index("SKU0003")] == 0
    sim.end_day()
    assert sim.warehouse_units()[sim.sku_index("SKU0003")] == 40
    assert any(a.order_id == 1 for a in sim.day_start.arrivals)
    orders = sim.records.frame("orders").set_index("order_id")
    assert orders.loc[1, "arrived_day"] == arrival and orders.loc[1, "eta_day"] == 4
    hidden = sim.hidden.frame("lead_times").set_index("order_id")
    assert hidden.loc[1, "arrival_day"] == arrival


def test_late_order_shows_as_delayed():
    """Find a seed whose first order takes 6 days; it is delayed on days 5 and 6 (promised day 4)."""
    world = toy_world(2, 4, seed=0, economics=Economics(horizon_days=12))
    leads, cdf = lead_time_table(world.economics.lead_time_pmf)
    seed = next(s for s in range(2000) if lead_time(s, 1, leads, cdf) == 6)
    sim = Simulator(world, seed=seed)
    sim.place_order([{"sku_id": "SKU0001", "qty": 5}])
    delayed = {}
    for _ in range(6):
        report = sim.end_day()
        delayed[sim.day] = report.next_day.delayed_order_ids
        assert sim.in_transit()["delayed"].tolist() in ([], [bool(delayed[sim.day])])
    assert delayed == {2: (), 3: (), 4: (), 5: (1,), 6: (1,), 7: ()}
    assert sim.warehouse_units()[0] == 5


def test_cash_may_go_negative_and_nothing_stops(world):
    sim = Simulator(world, seed=0)
    res = sim.place_order([{"sku_id": "SKU0002", "qty": 20_000}])
    assert res.all_accepted and sim.cash < 0
    assert sim.balance().net_assets_fen == 4_000_000 - 1_200  # cash moved into stock at cost
    sim.end_day()
    assert sim.day == 2


# ---------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("method", "item", "code"),
    [
        pytest.param("place_order", {"sku_id": "NOPE", "qty": 1}, "unknown_sku", id="unknown-sku"),
        pytest.param("place_order", {"sku_id": ["SKU0001"], "qty": 1}, "unknown_sku", id="unhashable-sku"),
        pytest.param("place_order", {"sku_id": "SKU0001", "qty": 0}, "invalid_qty", id="zero-qty"),
        pytest.param("place_order", {"sku_id": "SKU0001", "qty": 2.5}, "invalid_qty", id="float-qty"),
        pytest.param("place_order", {"sku_id": "SKU0001", "qty": True}, "invalid_qty", id="bool-qty"),
        pytest.param("place_order", {"sku_id": "SKU0001", "qty": "3"}, "invalid_qty", id="str-qty"),
        pytest.param("place_order", {"sku_id": "SKU0001"}, "invalid_qty", id="no-qty"),
        pytest.param("place_order", {"sku_id": "SKU0001", "qty": 10**9}, "qty_too_large", id="huge-qty"),
        pytest.param("place_order", {"sku_id": "SKU0001", "qty": 1, "supplier_id": "acme"}, "unknown_supplier"),
        pytest.param("place_order", "SKU0001", "invalid_item", id="not-a-dict"),
        pytest.param("place_order", None, "invalid_item", id="none"),
        pytest.param("adjust_price", {"device_id": "X", "sku_id": "SKU0001", "price": 3}, "unknown_device"),
        pytest.param("adjust_price", {"device_id": D0, "sku_id": "SKU0001", "price": "3"}, "invalid_price"),
        pytest.param("adjust_price", {"device_id": D0, "sku_id": "SKU0001", "price": float("nan")}, "invalid_price"),
        pytest.param("adjust_price", {"device_id": D0, "sku_id": "SKU0001"}, "invalid_price", id="no-price"),
        pytest.param("adjust_price", {"device_id": D0, "sku_id": "SKU0001", "price": 1e6}, "price_out_of_band"),
        pytest.param("discard", {"sku_id": "SKU0001", "qty": 1}, "insufficient_stock", id="discard-empty"),
        pytest.param("discard", {"sku_id": "SKU0001", "qty": -1}, "invalid_qty", id="discard-negative"),
    ],
)
def test_bad_items_are_rejected_with_a_code_and_change_nothing(world, method, item, code):
    sim = Simulator(world, seed=0)
    before = (sim.cash_fen, sim.price_matrix_fen().sum(), len(sim.ledger()))
    res = getattr(sim, method)([item])
    assert res.n_accepted == 0 and [r.code for r in res.rejected] == [code]
    assert code in REJECTION_CODES and res.rejected[0].message
    assert (sim.cash_fen, sim.price_matrix_fen().sum(), len(sim.ledger())) == before
    assert res.to_dict()["rejected"][0]["code"] == code


def test_items_are_checked_in_order_against_the_state_so_far(world):
    sim = Simulator(world, seed=0)
    sim.place_order([{"sku_id": "SKU0001", "qty": 10}])
    advance_to(sim, 9)  # Thursday 2025-01-09, a working day; the order has landed
    res = sim.restock(
        [
            {"device_id": D0, "sku_id": "SKU0001", "qty": 6},
            {"device_id": D1, "sku_id": "SKU0001", "qty": 6},  # only 4 left
            {"device_id": D1, "sku_id": "SKU0001", "qty": 4},
        ]
    )
    assert [a.index for a in res.accepted] == [0, 2]
    rej = res.rejected[0]
    assert (rej.index, rej.code) == (1, "insufficient_stock")
    assert rej.message == "the warehouse holds 4 units of SKU0001; order more or restock at most 4"


def test_a_list_is_required():
    sim = Simulator(toy_world(2, 4, economics=Economics(horizon_days=3)), seed=0)
    with pytest.raises(TypeError):
        sim.place_order({"sku_id": "SKU0001", "qty": 1})


# ---------------------------------------------------------------- physical actions


@pytest.mark.parametrize(
    ("day", "workday"),
    [
        pytest.param(1, False, id="new-year-holiday"),
        pytest.param(2, True, id="thursday"),
        pytest.param(4, False, id="saturday"),
        pytest.param(26, True, id="makeup-sunday-2025-01-26"),
        pytest.param(29, False, id="spring-festival"),
    ],
)
def test_physical_actions_only_on_working_days(world, day, workday):
    sim = Simulator(world, seed=0)
    sim.place_order([{"sku_id": "SKU0001", "qty": 30}])
    advance_to(sim, day)
    assert sim.is_workday is workday
    if day >= 8:
        res = sim.restock([{"device_id": D0, "sku_id": "SKU0001", "qty": 3}])
        assert res.n_accepted == int(workday)
    for method, item in [
        ("reduce", {"device_id": D0, "sku_id": "SKU0001", "qty": 1}),
        ("delist", {"device_id": D0, "sku_id": "SKU0001"}),
    ]:
        res = getattr(sim, method)([item])
        if not workday:
            assert [r.code for r in res.rejected] == ["not_workday"]
            assert "next working day" in res.rejected[0].message
    if not workday:
        assert sim.visits_today() == {}


def test_restock_respects_capacity_and_reports_room():
    world = toy_world(2, 4, seed=0, economics=Economics(horizon_days=20))
    machines = world.machines.copy()
    machines["capacity"] = [10, 200]

    sim = Simulator(world.replace(machines=machines), seed=0)
    sim.place_order([{"sku_id": "SKU0001", "qty": 30}, {"sku_id": "SKU0002", "qty": 30}])
    advance_to(sim, 9)
    res = sim.restock(
        [
            {"device_id": D0, "sku_id": "SKU0001", "qty": 7},
            {"device_id": D0, "sku_id": "SKU0002", "qty": 4},
            {"device_id": D0, "sku_id": "SKU0002", "qty": 3},
        ]
    )
    assert [a.index for a in res.accepted] == [0, 2]
    assert res.rejected[0].code == "capacity_exceeded"
    assert "holds 7 of 10 units; restock at most 3" in res.rejected[0].message
    assert sim.shelf_units()[0].sum() == 10


def test_reduce_and_delist_return_the_earliest_expiring_units(short_world):
    """Two batches of SKU0002 (life 6 days) land on different days; moves take the older one first."""
    sim = Simulator(short_world, seed=2)
    k = sim.sku_index("SKU0002")
    sim.place_order([{"sku_id": "SKU0002", "qty": 4}])
    while sim.warehouse_units()[k] < 4:
        sim.end_day()
    first = sim.warehouse_batches()["expiry_day"].iloc[0]
    sim.place_order([{"sku_id": "SKU0002", "qty": 5}])
    while sim.warehouse_units()[k] < 9:
        sim.end_day()
    while not sim.is_workday:
        sim.end_day()
    assert sim.warehouse_batches()["qty"].tolist() == [4, 5]
    res = sim.restock([{"device_id": D0, "sku_id": "SKU0002", "qty": 6}])
    assert res.all_accepted
    shelf = sim.shelf_batches(D0)
    assert shelf["qty"].tolist() == [4, 2] and shelf["expiry_day"].iloc[0] == first
    res = sim.reduce([{"device_id": D0, "sku_id": "SKU0002", "qty": 5}])
    assert res.all_accepted and res.accepted[0].detail["shelf_units"] == 1
    assert sim.shelf_batches(D0)["expiry_day"].tolist() == [sim.warehouse_batches()["expiry_day"].iloc[-1]]
    res = sim.delist([{"device_id": D0, "sku_id": "SKU0002"}])
    assert res.accepted[0].detail["qty"] == 1 and sim.shelf_units().sum() == 0
    assert sim.warehouse_units()[k] == 9
    assert sim.delist([{"device_id": D0, "sku_id": "SKU0002"}]).rejected[0].code == "not_on_shelf"
    events = sim.records.frame("shelf_events")
    assert events["kind"].tolist() == ["restock", "reduce", "delist"] and events["qty"].tolist() == [6, 5, 1]


def test_one_visit_per_machine_and_day_however_many_operations(world):
    sim = Simulator(world, seed=5)
    sim.place_order([{"sku_id": s, "qty": 20} for s in ("SKU0001", "SKU0002", "SKU0003")])
    advance_to(sim, 9)
    sim.restock([{"device_id": D0, "sku_id": s, "qty": 5} for s in ("SKU0001", "SKU0002", "SKU0003")])
    sim.reduce([{"device_id": D0, "sku_id": "SKU0001", "qty": 2}])
    sim.restock([{"device_id": D1, "sku_id": "SKU0001", "qty": 2}])
    sim.restock([{"device_id": D2, "sku_id": "SKU0001", "qty": 999}])  # rejected: no visit
    assert sim.visits_today() == {D0: 4, D1: 1}
    report = sim.end_day()
    assert report.costs_fen["visit"] == 2 * 3_500 and report.visited == (D0, D1)
    visits = sim.records.frame("visits")
    assert visits[["device_id", "n_operations"]].values.tolist() == [[D0, 4], [D1, 1]]
    devices = sim.devices().set_index("device_id")
    assert devices.loc[D0, "days_since_visit"] == 1 and devices.loc[D2, "days_since_visit"] is pd_na()


def pd_na():
    import pandas as pd

    return pd.NA


# ---------------------------------------------------------------- prices


def test_price_band_is_inclusive_after_rounding_to_the_fen(world):
    sim = Simulator(world, seed=0)
    sku = "SKU0001"  # reference 3.00: band 1.50 .. 6.00
    assert sim.price_band(sku) == (1.5, 6.0)
    res = sim.adjust_price(
        [
            {"device_id": D0, "sku_id": sku, "price": 1.5},
            {"device_id": D1, "sku_id": sku, "price": 6.004},  # rounds to 6.00: in band
            {"device_id": D2, "sku_id": sku, "price": 6.005},  # rounds to 6.01: out
            {"device_id": D2, "sku_id": sku, "price": 1.494},  # rounds to 1.49: out
        ]
    )
    assert [a.index for a in res.accepted] == [0, 1]
    assert [r.code for r in res.rejected] == ["price_out_of_band", "price_out_of_band"]
    assert "outside 1.50-6.00" in res.rejected[0].message
    assert sim.price(D0, sku) == 1.5 and sim.price(D1, sku) == 6.0 and sim.price(D2, sku) == 3.0
    changes = sim.records.frame("price_changes")
    assert changes[["device_id", "old_price", "new_price"]].values.tolist() == [
        [D0, 3.0, 1.5],
        [D1, 3.0, 6.0],
    ]
    same = sim.adjust_price([{"device_id": D0, "sku_id": sku, "price": 1.5}])
    assert same.accepted[0].detail["changed"] is False and len(sim.records.frame("price_changes")) == 2
    assert sim.prices(D0, changed_only=True)["sku_id"].tolist() == [sku]


def test_price_in_force_at_the_end_of_day_drives_revenue(world):
    sim = Simulator(world, seed=8)
    stock(sim, D0, "SKU0001", 40, order_qty=40)
    sim.adjust_price([{"device_id": D0, "sku_id": "SKU0001", "price": 4.5}])
    report = sim.end_day()
    sales = sim.records.frame("daily_sales")
    assert report.units_sold > 0
    assert report.revenue_fen == report.units_sold * 450
    assert math.isclose(sales["revenue"].sum(), report.units_sold * 4.5)


# ---------------------------------------------------------------- fees, rent, expiry, fines


def test_rent_and_fee_are_charged_at_the_start_of_every_day(world):
    sim = Simulator(world, seed=1)
    sim.place_order([{"sku_id": "SKU0005", "qty": 100}])
    for _ in range(10):
        report = sim.end_day()
        start = report.next_day
        assert start.daily_fee_fen == 3 * 400
        assert start.warehouse_rent_fen == 3 * start.warehouse_units == 3 * int(sim.warehouse_units().sum())
    costs = sim.records.frame("daily_costs")
    assert set(costs["kind"]) == {"purchase", "warehouse_rent", "daily_fee", "visit", "expired_fine"}
    assert (costs[costs["kind"] == "daily_fee"]["amount"] == 12.0).all()
    assert len(costs) == 5 * 10


def test_expiry_write_off_fine_and_discard(short_world):
    """SKU0001 lives 3 days: units landing on day a are expired from day a + 3."""
    sim = Simulator(short_world, seed=4)
    k = sim.sku_index("SKU0001")
    c = cost_fen(sim, "SKU0001")
    sim.place_order([{"sku_id": "SKU0001", "qty": 60}])
    while sim.warehouse_units()[k] == 0:
        sim.end_day()
    arrived = sim.day
    assert sim.warehouse_batches()["expiry_day"].tolist() == [arrived + 3]
    while not sim.is_workday:
        sim.end_day()
    if sim.day >= arrived + 3:
        pytest.skip("no working day before expiry for this seed")
    sim.restock([{"device_id": D0, "sku_id": "SKU0001", "qty": 50}])
    na_before = None
    fines = 0
    expired_sold = 0
    while sim.day < arrived + 5:
        report = sim.end_day()
        if report.day == arrived + 2:
            na_before = report.balance.net_assets_fen
        if report.day >= arrived + 3:
            fines += report.costs_fen["expired_fine"]
            expired_sold += report.expired_units_sold
            if report.day == arrived + 3:
                # the write-off happened at the start of that day: cost of every unit still held
                held = report.machine_table["units_before"].sum() + 10
                assert report.expiry_writeoff_fen == held * c
                assert report.cogs_fen == 0 and report.net_fen == (
                    report.revenue_fen - report.operating_costs_fen - report.expiry_writeoff_fen
                )
    assert na_before is not None
    assert fines == expired_sold * 100_000 and expired_sold > 0
    sales = sim.records.frame("daily_sales")
    hit = sales[sales["expired_units"] > 0]
    assert (hit["fine"] == hit["expired_units"] * 1000.0).all()
    # expired units in the warehouse still pay rent, and discarding them loses nothing more
    assert sim.day_start.warehouse_rent_fen == 3 * int(sim.warehouse_units().sum())
    res = sim.discard([{"sku_id": "SKU0001", "qty": 10}])
    assert res.accepted[0].detail == {
        "sku_id": "SKU0001",
        "qty": 10,
        "expired_qty": 10,
        "cost_written_off": 0.0,
    }
    assert sim.balance().warehouse_fen == 0


def test_restocking_expired_units_keeps_them_expired(short_world):
    sim = Simulator(short_world, seed=4)
    k = sim.sku_index("SKU0001")
    sim.place_order([{"sku_id": "SKU0001", "qty": 5}])
    while sim.warehouse_units()[k] == 0:
        sim.end_day()
    expiry = int(sim.warehouse_batches()["expiry_day"].iloc[0])
    advance_to(sim, expiry)
    while not sim.is_workday:
        sim.end_day()
    res = sim.restock([{"device_id": D0, "sku_id": "SKU0001", "qty": 5}])
    assert res.accepted[0].detail["expired_qty"] == 5
    assert sim.shelf(D0)["expired_units"].tolist() == [5]
    assert sim.balance().shelf_fen == 0


def test_discarding_unexpired_units_is_a_loss_at_cost(world):
    sim = Simulator(world, seed=0)
    sim.place_order([{"sku_id": "SKU0002", "qty": 10}])
    advance_to(sim, 8)
    na = sim.balance().net_assets_fen
    res = sim.discard([{"sku_id": "SKU0002", "qty": 4}])
    loss = 4 * cost_fen(sim, "SKU0002")
    assert res.accepted[0].detail["cost_written_off"] == loss / 100
    assert sim.balance().net_assets_fen == na - loss
    report = sim.end_day()
    assert report.discard_writeoff_fen == loss
    row = sim.records.frame("discards").iloc[0]
    assert (row["qty"], row["expired_qty"], row["cost_written_off"]) == (4, 0, loss / 100)


# ---------------------------------------------------------------- settlement and records


def test_day_report_matches_records_and_identity(world):
    sim = Simulator(world, seed=9)
    stock(sim, D0, "SKU0001", 30)
    sim.restock([{"device_id": D1, "sku_id": "SKU0001", "qty": 0}])  # rejected, no visit
    prev = sim.reports[-1].balance.net_assets_fen
    report = sim.end_day()
    assert report.balance.net_assets_fen == prev + report.net_fen
    summary = sim.records.frame("daily_summary").set_index("day").loc[report.day]
    assert summary["cash"] == report.balance.cash and summary["net_assets"] == report.balance.net_assets
    assert summary["units_sold"] == report.units_sold == sim.records.frame("daily_sales")["units"].sum()
    assert summary["visit"] == 35.0 and summary["n_visits"] == 1
    assert report.machines["units_sold"].sum() == report.units_sold
    d = report.to_dict()
    assert d["balance"]["net_assets"] == report.balance.net_assets and d["next_day"]["day"] == report.day + 1
    assert report.start.day == report.day and report.start.daily_fee_fen == report.costs_fen["daily_fee"]
    assert report.start.warehouse_rent_fen == report.costs_fen["warehouse_rent"]
    assert "lost" not in str(d) and "expected" not in str(d)  # nothing hidden leaks into the report


def test_episode_ends_after_the_last_day():
    world = toy_world(2, 4, seed=0, economics=Economics(horizon_days=3))
    sim = Simulator(world, seed=0)
    reports = [sim.end_day() for _ in range(3)]
    assert [r.day for r in reports] == [1, 2, 3] and reports[-1].done and reports[-1].next_day is None
    assert sim.done and sim.day == 3
    for call in (
        lambda: sim.end_day(),
        lambda: sim.place_order([{"sku_id": "SKU0001", "qty": 1}]),
        lambda: sim.adjust_price([]),
        lambda: sim.discard([]),
        lambda: sim.restock([]),
        lambda: sim.reduce([]),
        lambda: sim.delist([]),
    ):
        with pytest.raises(EpisodeOver):
            call()
    # no rent or fee of a day 4: the close of day 3 is the terminal balance
    assert sim.balance() == reports[-1].balance
    assert len(sim.records.frame("daily_summary")) == 3


def test_read_only_connection_refuses_writes(world):
    import sqlite3

    sim = Simulator(world, seed=0)
    with sim.records.read_only() as conn:
        assert conn.execute("SELECT COUNT(*) FROM catalog").fetchone()[0] == 12
        for sql in (
            "DELETE FROM catalog",
            "DROP TABLE orders",
            "ATTACH DATABASE ':memory:' AS x",
            "PRAGMA query_only=OFF",
        ):
            with pytest.raises(sqlite3.DatabaseError):
                conn.execute(sql)
    sim.place_order([{"sku_id": "SKU0001", "qty": 1}])  # the simulator can still write afterwards
    assert len(sim.records.frame("orders")) == 1


def test_schema_doc_documents_every_table_and_column(world):
    from autovend.sim import SCHEMA_DOC
    from autovend.sim.hidden import HIDDEN_COLUMNS
    from autovend.sim.records import RECORD_TABLES

    for table in RECORD_TABLES:
        line = next(ln for ln in SCHEMA_DOC.replace("\n  ", " ").splitlines() if ln.startswith(f"- {table.name}("))
        assert all(c in line for c in table.column_names), table.name
    for name, cols in HIDDEN_COLUMNS.items():
        line = next(ln for ln in SCHEMA_DOC.replace("\n  ", " ").splitlines() if ln.startswith(f"- {name}("))
        assert all(c in line for c in cols), name
    sim = Simulator(world, seed=0)
    tables = set(sim.records.frame("SELECT name FROM sqlite_master WHERE type='table'")["name"])
    assert tables == {t.name for t in RECORD_TABLES}
    assert not tables & set(HIDDEN_COLUMNS)  # evaluation data never enters the agent's database


def test_accessor_frames_agree_with_arrays(world):
    sim = Simulator(world, seed=6)
    stock(sim, D0, "SKU0003", 12, order_qty=20)
    sim.restock([{"device_id": D2, "sku_id": "SKU0003", "qty": 3}])
    shelf = sim.shelf()
    assert shelf["units"].sum() == sim.shelf_units().sum() == 15
    assert sim.warehouse()["units"].sum() == sim.warehouse_units().sum() == 5
    dev = sim.devices().set_index("device_id")
    assert dev.loc[D0, "units_on_shelf"] == 12 and dev.loc[D0, "free_capacity"] == 188
    assert dev.loc[D0, "visited_today"] and dev.loc[D0, "days_since_visit"] == 0
    flows = sim.unit_flows()
    assert np.array_equal(
        flows["ordered"],
        flows["in_transit"] + flows["warehouse"] + flows["shelves"] + flows["sold"] + flows["discarded"],
    )
