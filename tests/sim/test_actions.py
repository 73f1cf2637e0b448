"""The agent's actions on the state: money, stock, visits and records of accepted items; rejections change nothing."""

from __future__ import annotations

import pytest

from autovend.errors import EpisodeOver
from autovend.sim import inventory as inv
from autovend.sim.accounting import Accounts
from autovend.sim.actions import Actions
from autovend.sim.facts import WorldFacts
from autovend.sim.hidden import HiddenLog
from autovend.sim.recorder import Recorder
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.sim.state import initial_state


@pytest.fixture
def parts(world):
    facts = WorldFacts.from_world(world)
    state = initial_state(facts, seed=11)
    recorder = Recorder(facts, RecordStore(RECORD_TABLES), HiddenLog())
    return facts, state, Actions(facts, state, Accounts(facts, state), recorder), recorder


def test_an_order_moves_cash_into_stock_in_transit(parts):
    facts, state, actions, recorder = parts
    result = actions.place_order([{"sku_id": "SKU0002", "qty": 10}])
    assert result.all_accepted and result.accepted[0].detail["total_cost"] == 41.4
    lead = inv.lead_time(11, 1, facts.leads, facts.lead_cdf)
    assert state.pending == {1 + lead: [1]} and state.next_order_id == 2
    assert state.cash_fen == 4_000_000 - 4_140 and state.transit_q[1] == 10 and state.ordered[1] == 10
    assert state.ledger == [(1, "cash", "purchase", -4_140, "order 1"), (1, "inventory", "purchase", 4_140, "order 1")]
    assert recorder.records.frame("orders")["qty"].tolist() == [10]  # flushed at the end of the call


def test_restock_and_reduce_move_earliest_expiring_units_and_count_one_visit(parts):
    """Day 2 (a working day): the warehouse holds 4 SKU0001 expiring on day 10 and 6 on day 31."""
    _, state, actions, recorder = parts
    state.day = 2
    state.warehouse[0] = [[10, 4], [31, 6]]
    state.wh_q[0] = 10
    state.wh_book.add(10, 4, 4 * 201)
    state.wh_book.add(31, 6, 6 * 201)
    restocked = actions.restock([{"device_id": "CN_CAMPUS_01", "sku_id": "SKU0001", "qty": 7}])
    assert restocked.accepted[0].detail == {
        "device_id": "CN_CAMPUS_01",
        "sku_id": "SKU0001",
        "qty": 7,
        "expired_qty": 0,
        "shelf_units": 7,
    }
    assert state.shelves[(1, 0)] == [[10, 4], [31, 3]] and state.warehouse[0] == [[31, 3]]
    actions.reduce([{"device_id": "CN_CAMPUS_01", "sku_id": "SKU0001", "qty": 5}])
    assert state.shelves[(1, 0)] == [[31, 2]] and state.warehouse[0] == [[10, 4], [31, 4]]
    assert state.shelf_q[1, 0] == 2 and state.shelf_n[1] == 2 and state.wh_q[0] == 8
    assert state.shelf_book.units == {31: 2} and state.wh_book.units == {10: 4, 31: 4}
    assert state.touched == {1: 2} and state.last_visit.tolist() == [0, 2, 0]
    assert recorder.records.frame("shelf_events")["kind"].tolist() == ["restock", "reduce"]


def test_physical_items_on_a_day_off_are_rejected_with_the_next_working_day(parts):
    _, state, actions, _ = parts
    result = actions.delist([{"device_id": "CN_CAMPUS_01", "sku_id": "SKU0001"}, "not an item"])
    assert [r.code for r in result.rejected] == ["not_workday", "invalid_item"]
    assert result.rejected[0].message == (
        "day 1 (2025-01-01) is a holiday (元旦), staff make no site visits; the next working day is day 2 (2025-01-02)"
    )
    assert state.touched == {}


def test_a_batch_needs_a_list_and_an_open_episode(parts):
    _, state, actions, _ = parts
    with pytest.raises(TypeError, match="discard takes a list of item dicts, got dict"):
        actions.discard({"sku_id": "SKU0001", "qty": 1})
    state.done = True
    with pytest.raises(EpisodeOver):
        actions.adjust_price([])
