"""The ledger, cash and the cost value of stock: every movement reconciles."""

from __future__ import annotations

import pytest

from autovend.sim.accounting import Accounts, Tally
from autovend.sim.facts import WorldFacts
from autovend.sim.state import initial_state


@pytest.fixture
def accounts(world):
    facts = WorldFacts.from_world(world)
    state = initial_state(facts, seed=0)
    return Accounts(facts, state), state


def test_costs_sales_and_stock_moves_reconcile_through_the_ledger(accounts):
    acc, s = accounts
    acc.charge("purchase", 2_010, "order 1")  # 10 x SKU0001 at 2.01
    acc.move_stock_value("purchase", 2_010, "order 1")
    acc.charge("visit", 3_500, "CN_CAMPUS_01")
    acc.charge("expired_fine", 0, "")  # a zero cost writes no row
    acc.receive_sales(900)
    acc.receive_sales(0)
    acc.move_stock_value("cogs", -414, "")
    assert s.cash_fen == 4_000_000 - 2_010 - 3_500 + 900
    assert s.day_costs == {"purchase": 2_010, "warehouse_rent": 0, "daily_fee": 0, "visit": 3_500, "expired_fine": 0}
    assert acc.totals_fen() == {"cash": -2_010 - 3_500 + 900, "inventory": 2_010 - 414}
    ledger = acc.ledger()
    assert list(ledger.columns) == ["day", "account", "kind", "amount", "amount_fen", "ref"]
    assert ledger["kind"].tolist() == ["purchase", "purchase", "visit", "sales", "cogs"]
    assert ledger["account"].tolist() == ["cash", "inventory", "cash", "cash", "inventory"]
    assert ledger["amount"].tolist() == [-20.10, 20.10, -35.0, 9.0, -4.14]
    assert (ledger["day"] == 1).all() and ledger["ref"].tolist()[:3] == ["order 1", "order 1", "CN_CAMPUS_01"]


def test_the_tally_values_only_unexpired_units_at_cost(accounts):
    """Warehouse: 10 x SKU0001 (2.01), 4 of them expired on day 3; shelf: 5 x SKU0002 (4.14); 7 x SKU0003 (1.95) ordered."""
    acc, s = accounts
    s.wh_q[0] = 10
    s.wh_book.add(3, 4, 4 * 201)
    s.wh_book.add(30, 6, 6 * 201)
    s.shelf_q[1, 1] = 5
    s.shelf_book.add(90, 5, 5 * 414)
    s.transit_q[2] = 7
    assert acc.tally(3) == Tally(
        shelf_units=5,
        shelf_expired=0,
        shelf_fen=2_070,
        warehouse_units=10,
        warehouse_expired=4,
        warehouse_fen=1_206,
        in_transit_units=7,
        in_transit_fen=1_365,
    )
    assert acc.tally(2).warehouse_fen == 2_010  # before day 3 all ten are unexpired
    balance = acc.balance()  # today is day 1
    assert (balance.cash_fen, balance.inventory_fen) == (4_000_000, 2_070 + 2_010 + 1_365)
    assert acc.tally(3).balance(100).net_assets_fen == 100 + 2_070 + 1_206 + 1_365
