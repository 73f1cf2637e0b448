"""A day's demand and sales on the shelves: earliest-expiring units first, books and counts in step."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.sim.facts import WorldFacts
from autovend.sim.sales import DayDemand, machine_table, sell
from autovend.sim.state import initial_state


def put(state, m: int, k: int, batches: list[list[int]], unit_cost: int) -> None:
    """Put shelf batches [[expiry_day, qty], ...] of product k on machine m, books and counts included."""
    state.shelves[(m, k)] = batches
    n = sum(q for _, q in batches)
    state.shelf_q[m, k] += n
    state.shelf_n[m] += n
    for e, q in batches:
        state.shelf_book.add(e, q, q * unit_cost)


@pytest.fixture
def day5(world):
    """Day 5: machine 0 holds 3 expired + 37 fresh SKU0001 (at 1.50), machine 1 holds 3 expired + 2 fresh
    SKU0001, machine 2 holds 20 SKU0002; demand is some 10-60 units a product, so machine 1 sells out."""
    facts = WorldFacts.from_world(world)
    state = initial_state(facts, seed=2)
    put(state, 0, 0, [[2, 3], [30, 37]], 201)
    put(state, 1, 0, [[4, 3], [30, 2]], 201)
    put(state, 2, 1, [[90, 20]], 414)
    state.price_fen[0, 0] = 150
    return facts, state, sell(facts, state, 5)


def test_only_the_stocked_block_has_demand(day5):
    _, _, day = day5
    assert day.rows.tolist() == [0, 1, 2] and day.cols.tolist() == [0, 1]
    assert day.rates[0, 1] == 0 and day.rates[1, 1] == 0 and day.rates[2, 0] == 0  # no unit, no demand
    assert (day.rates[[0, 1, 2], [0, 0, 1]] > 0).all()
    assert np.array_equal(day.sales, np.minimum(day.demand, day.q))
    assert day.units_before.tolist() == [40, 5, 20] and day.expired_before.tolist() == [3, 3, 0]


def test_sales_take_the_expired_units_first_and_keep_the_books(day5):
    _, state, day = day5
    sold = int(day.sales[0, 0])
    assert 3 < sold < 40  # precondition: the sale reaches past the expired units and leaves some
    assert day.expired_sold[:, 0].tolist() == [3, 3, 0] and day.sales[1, 0] == 5
    assert state.shelves[(0, 0)] == [[30, 40 - sold]]
    assert (1, 0) not in state.shelves  # sold out: the shelf entry goes
    left_2 = 20 - int(day.sales[2, 1])
    assert state.shelf_q[[0, 1, 2], [0, 0, 1]].tolist() == [40 - sold, 0, left_2]
    assert state.shelf_n.tolist() == [40 - sold, 0, left_2]
    assert state.shelf_book.units == {30: 40 - sold, 90: left_2}
    assert state.shelf_book.cost_fen == {30: (40 - sold) * 201, 90: left_2 * 414}


def test_revenue_at_the_prices_in_force_and_cost_of_the_unexpired_units_sold(day5):
    _, _, day = day5
    assert day.prices[:, 0].tolist() == [150, 300, 300]
    assert day.revenue[0, 0] == day.sales[0, 0] * 150 and day.revenue[1, 0] == 5 * 300
    assert day.cogs[0, 0] == (day.sales[0, 0] - 3) * 201 and day.cogs[1, 0] == 2 * 201
    assert day.cogs[2, 1] == day.sales[2, 1] * 414


def test_the_machine_table_counts_per_machine(day5):
    facts, _, day = day5
    table = machine_table(facts, day)
    assert table["device_id"].tolist() == ["CN_WORKSITE_01", "CN_CAMPUS_01", "CN_RESIDENTIAL_01"]
    assert table["free_capacity"].tolist() == [160, 195, 180]
    assert table["n_skus"].tolist() == [1, 1, 1] and table["sold_out"].tolist() == [0, 1, 0]
    assert table["expired_units_sold"].tolist() == [3, 3, 0]
    assert table["revenue"][1] == 15.0 and table["gross_profit"][1] == 15.0 - 4.02


def test_per_machine_spreads_block_row_sums_over_all_machines():
    empty = np.zeros((2, 2), dtype=np.int64)
    day = DayDemand(
        day=1,
        rows=np.array([0, 2]),
        cols=np.array([0, 1]),
        q=empty,
        prices=empty,
        rates=np.zeros((2, 2)),
        demand=empty,
        sales=empty,
        expired_sold=empty,
        revenue=empty,
        cogs=empty,
        units_before=np.zeros(4, dtype=np.int64),
        expired_before=np.zeros(4, dtype=np.int64),
    )
    assert day.per_machine(np.array([[1, 2], [3, 4]])).tolist() == [3, 0, 7, 0]
