"""The turn of a day: orders land, stock expires, rent and fee at the start; sales, fines and visits at the close."""

from __future__ import annotations

import pytest

from autovend.sim import inventory as inv
from autovend.sim.accounting import Accounts
from autovend.sim.facts import WorldFacts
from autovend.sim.hidden import HiddenLog
from autovend.sim.recorder import Recorder
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.sim.settlement import Settlement
from autovend.sim.state import initial_state


@pytest.fixture
def parts(world):
    facts = WorldFacts.from_world(world)
    state = initial_state(facts, seed=0)
    accounts = Accounts(facts, state)
    recorder = Recorder(facts, RecordStore(RECORD_TABLES), HiddenLog())
    return state, Settlement(facts, state, accounts, recorder), recorder


def test_the_start_of_a_day_lands_orders_writes_off_expiry_and_charges_rent_and_fee(parts):
    """Day 3: orders 2 (5 x SKU0001) and 1 (4 x SKU0002) land; 6 x SKU0003 in the warehouse expire today."""
    state, settlement, _ = parts
    state.orders[2] = inv.Order(2, 0, 5, 201, "default", placed_day=1, eta_day=4, arrival_day=3)
    state.orders[1] = inv.Order(1, 1, 4, 414, "default", placed_day=1, eta_day=4, arrival_day=3)
    state.orders[3] = inv.Order(3, 2, 9, 195, "default", placed_day=1, eta_day=2, arrival_day=5)
    state.pending = {3: [2, 1], 5: [3]}
    state.transit_q[:3] = [5, 4, 9]
    state.warehouse[2] = [[3, 6]]
    state.wh_q[2] = 6
    state.wh_book.add(3, 6, 6 * 195)
    settlement.start_day(3)
    start = state.day_start
    assert [(a.order_id, a.sku_id, a.qty, a.expiry_day) for a in start.arrivals] == [
        (1, "SKU0002", 4, 93),  # 90-day shelf life
        (2, "SKU0001", 5, 33),  # 30 days
    ]
    assert state.wh_q[:3].tolist() == [5, 4, 6] and state.transit_q[:3].tolist() == [0, 0, 9]
    assert state.pending == {5: [3]} and state.orders[1].arrived and not state.orders[3].arrived
    assert (start.expired_units, start.expiry_writeoff_fen) == (6, 1_170)
    assert (start.warehouse_units, start.warehouse_rent_fen, start.daily_fee_fen) == (15, 45, 1_200)
    assert start.delayed_order_ids == (3,)  # promised for day 2
    assert state.ledger == [
        (3, "inventory", "expiry", -1_170, ""),
        (3, "cash", "warehouse_rent", -45, ""),
        (3, "cash", "daily_fee", -1_200, ""),
    ]
    assert state.cash_fen == 4_000_000 - 45 - 1_200 and state.day_expiry_fen == 1_170


def test_the_close_charges_one_visit_per_touched_machine_and_starts_the_next_day(parts):
    state, settlement, recorder = parts
    settlement.start_day(1)
    state.touched = {2: 3, 0: 1}
    report = settlement.end_day()
    assert report.visited == ("CN_WORKSITE_01", "CN_RESIDENTIAL_01")
    assert report.costs_fen == {
        "purchase": 0,
        "warehouse_rent": 0,
        "daily_fee": 1_200,
        "visit": 7_000,
        "expired_fine": 0,
    }
    assert report.balance.cash_fen == 4_000_000 - 1_200 - 7_000
    assert report.next_day is state.day_start and report.next_day.day == 2 and not report.done
    assert state.day == 2 and state.touched == {} and state.cash_fen == 4_000_000 - 1_200 - 7_000 - 1_200
    assert recorder.records.frame("visits").values.tolist() == [[1, "CN_WORKSITE_01", 1], [1, "CN_RESIDENTIAL_01", 3]]
    summary = recorder.records.frame("daily_summary")
    # cash 40,000 - 12 fee - 2 x 35 visits
    assert summary[["day", "cash", "visit", "n_visits"]].values.tolist() == [[1, 39_918.0, 70.0, 2]]
    assert state.reports == [report]


def test_the_last_day_ends_the_episode(parts):
    state, settlement, _ = parts
    state.day = 40
    settlement.start_day(40)
    report = settlement.end_day()
    assert report.done and report.next_day is None and state.done and state.day == 40
