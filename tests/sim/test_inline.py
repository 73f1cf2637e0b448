"""The inline batch loops give the same results, state, books and records as the item-by-item `Actions._batch`."""

from __future__ import annotations

import pickle
from collections import UserDict

import numpy as np

from autovend.sim import Simulator
from autovend.sim.records import RECORD_TABLES
from tests.sim.conftest import advance_to


def _twins(world, day: int) -> tuple[Simulator, Simulator]:
    """Two equal runs on `world`, advanced to `day` with orders of 30 units of the first 6 products on day 2."""
    sims = []
    for _ in range(2):
        sim = Simulator(world, seed=5)
        advance_to(sim, 2)
        sim.place_order([{"sku_id": sim.sku_ids[k], "qty": 30} for k in range(6)])
        advance_to(sim, day)
        sims.append(sim)
    return sims[0], sims[1]


def _item_by_item(sim: Simulator, action: str, items: list) -> object:
    """The batch through `Actions._batch` and the action's one-item method (the reference path)."""
    a = sim._actions
    one = {"restock": a._restock_one, "adjust_price": a._price_one, "place_order": a._order_one}[action]
    return a._batch(action, items, one, physical=action == "restock")


def _same_run(a: Simulator, b: Simulator) -> None:
    """Equal state (stock, books, money, orders) and equal records."""
    sa, sb = a._state, b._state
    for name in ("shelf_q", "shelf_n", "wh_q", "transit_q", "price_fen", "last_visit", "ordered"):
        assert np.array_equal(getattr(sa, name), getattr(sb, name)), name
    assert sa.shelves == sb.shelves and sa.warehouse == sb.warehouse and sa.touched == sb.touched
    assert sa.shelf_book.units == sb.shelf_book.units and sa.shelf_book.cost_fen == sb.shelf_book.cost_fen
    assert sa.wh_book.units == sb.wh_book.units and sa.wh_book.cost_fen == sb.wh_book.cost_fen
    assert sa.cash_fen == sb.cash_fen and sa.ledger == sb.ledger and sa.next_order_id == sb.next_order_id
    assert pickle.dumps(sa.orders) == pickle.dumps(sb.orders) and sa.pending == sb.pending
    for t in RECORD_TABLES:
        assert a.records.frame(t.name).equals(b.records.frame(t.name)), t.name
    assert a.hidden.frame("lead_times").equals(b.hidden.frame("lead_times"))


def test_restock_mixed_batch_matches_item_by_item(world):
    """Day 9 (a working day, the orders have landed): plain items, a too-large one, a numpy qty and a mapping."""
    fast, ref = _twins(world, 9)
    assert fast.is_workday and int(fast.warehouse_units()[:6].sum()) == 180
    d0, d1, d2 = fast.device_ids
    items = [
        {"device_id": d0, "sku_id": "SKU0001", "qty": 5},
        {"device_id": d0, "sku_id": "SKU0001", "qty": 99},  # insufficient_stock: 25 left
        {"device_id": d1, "sku_id": "SKU0001", "qty": np.int64(7)},  # not a Python int: the long way, accepted
        {"device_id": d1, "sku_id": "SKU0002", "qty": 4},
        UserDict({"device_id": d0, "sku_id": "SKU0003", "qty": 2}),  # a mapping, not a dict: the long way
        {"device_id": "nope", "sku_id": "SKU0003", "qty": 2},  # unknown_device
        {"device_id": d0, "sku_id": "SKU0002", "qty": 26},  # all that is left of SKU0002
        {"device_id": d0, "sku_id": "SKU0004", "qty": 30},
        {"device_id": d2, "sku_id": "SKU0005", "qty": 3},  # the only item at d2
    ]
    got, want = fast.restock(items), _item_by_item(ref, "restock", items)
    assert got == want
    assert [r.code for r in got.rejected] == ["insufficient_stock", "unknown_device"]
    assert [a.detail["shelf_units"] for a in got.accepted] == [5, 7, 4, 2, 26, 30, 3]
    assert fast.visits_today() == {d0: 4, d1: 2, d2: 1} and fast._state.last_visit.tolist() == [9, 9, 9]
    _same_run(fast, ref)
    fast.end_day(), ref.end_day()
    _same_run(fast, ref)


def test_adjust_price_and_place_order_mixed_batches_match_item_by_item(world):
    fast, ref = _twins(world, 3)
    d0 = fast.device_ids[0]
    lo, hi = fast.price_band("SKU0001")
    prices = [
        {"device_id": d0, "sku_id": "SKU0001", "price": lo},
        {"device_id": d0, "sku_id": "SKU0001", "price": hi + 1.0},  # price_out_of_band
        {"device_id": d0, "sku_id": "SKU0002", "price": 5},  # an int price (band 4.50-18.00): the long way
        {"device_id": d0, "sku_id": "SKU0001", "price": float("nan")},  # invalid_price
        {"device_id": d0, "sku_id": "SKU0001", "price": lo},  # unchanged
    ]
    got, want = fast.adjust_price(prices), _item_by_item(ref, "adjust_price", prices)
    assert got == want and [r.code for r in got.rejected] == ["price_out_of_band", "invalid_price"]
    assert [a.detail["changed"] for a in got.accepted] == [True, True, False]
    orders = [
        {"sku_id": "SKU0007", "qty": 3},
        {"sku_id": "SKU0007", "qty": 4, "supplier_id": "default"},
        {"sku_id": "SKU0008", "qty": 5, "supplier_id": "acme"},  # unknown_supplier
        {"sku_id": "SKU0008", "qty": np.int32(6)},  # the long way, accepted
        {"sku_id": "SKU0009", "qty": 0},  # invalid_qty
    ]
    got, want = fast.place_order(orders), _item_by_item(ref, "place_order", orders)
    assert got == want and [r.code for r in got.rejected] == ["unknown_supplier", "invalid_qty"]
    assert [a.detail["order_id"] for a in got.accepted] == [7, 8, 9]
    _same_run(fast, ref)
    advance_to(fast, 15), advance_to(ref, 15)
    _same_run(fast, ref)


def test_the_fast_path_draws_every_lead_time_of_the_table_by_its_own_uniform(world):
    """300 orders through the inline path: each lead time is the table's for the order's own uniform, and every
    lead time of the world's table (2 to 6 days, 2 with probability 0.15) occurs."""
    from autovend.sim import inventory as inv

    sim = Simulator(world, seed=11)
    advance_to(sim, 2)
    res = sim.place_order([{"sku_id": sim.sku_ids[k % 6], "qty": 1} for k in range(300)])
    assert len(res.accepted) == 300 and res.rejected == ()
    pmf = world.economics.lead_time_pmf
    leads, cdf = inv.lead_time_table(pmf)
    got = {}
    for a in res.accepted:
        order = sim._state.orders[a.detail["order_id"]]
        got[order.order_id] = order.arrival_day - order.placed_day
        assert got[order.order_id] == inv.lead_time(11, order.order_id, leads, cdf)
    counts = {lead: list(got.values()).count(lead) for lead in leads}
    assert set(counts) == set(pmf) and all(n > 0 for n in counts.values()), counts
    assert abs(counts[2] / 300 - pmf[2]) < 0.07  # 0.15 expected; a binomial sd of 0.021


def test_a_lead_time_is_the_first_whose_cumulative_probability_exceeds_the_uniform():
    from autovend.sim import inventory as inv

    leads, cdf = inv.lead_time_table({2: 0.15, 3: 0.60, 4: 0.15, 5: 0.07, 6: 0.03})
    assert leads == (2, 3, 4, 5, 6)
    np.testing.assert_allclose(cdf, [0.15, 0.75, 0.90, 0.97, 1.0])
    block = inv._lead_block(3, 0)
    for oid in range(1, 400):
        u = block[oid - 1]
        want = next((lead for lead, c in zip(leads, cdf, strict=True) if u < c), 6)
        assert inv.lead_time(3, oid, leads, cdf) == want
