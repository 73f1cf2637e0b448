"""The read-only view of a run: frames and arrays agree with the state and change nothing."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.sim.facts import WorldFacts
from autovend.sim.queries import Queries
from autovend.sim.state import initial_state


@pytest.fixture
def view(world):
    """Day 8: machine 2 holds 3 SKU0001 expired on day 6 and 5 expiring on day 12; SKU0003 costs 2.50 at
    machine 0; the warehouse holds 10 SKU0002 expiring on day 98."""
    facts = WorldFacts.from_world(world)
    s = initial_state(facts, seed=0)
    s.day = 8
    s.shelves[(2, 0)] = [[6, 3], [12, 5]]
    s.shelf_q[2, 0] = 8
    s.shelf_n[2] = 8
    s.shelf_book.add(6, 3, 3 * 201)
    s.shelf_book.add(12, 5, 5 * 201)
    s.warehouse[1] = [[98, 10]]
    s.wh_q[1] = 10
    s.wh_book.add(98, 10, 10 * 414)
    s.price_fen[0, 2] = 250
    s.last_visit[2] = 6
    return Queries(facts, s), s


def test_devices_and_shelves(view):
    queries, _ = view
    devices = queries.devices().set_index("device_id")
    row = devices.loc["CN_RESIDENTIAL_01"]
    assert (row.units_on_shelf, row.free_capacity, row.expired_units, row.expiring_7d_units) == (8, 192, 3, 5)
    assert row.days_since_visit == 2 and devices["days_since_visit"].isna().sum() == 2
    shelf = queries.shelf("CN_RESIDENTIAL_01")
    assert shelf.values.tolist() == [["CN_RESIDENTIAL_01", "SKU0001", 8, 3, 5, 3.0, 3.0]]
    assert queries.shelf("CN_WORKSITE_01").empty
    batches = queries.shelf_batches()
    assert batches[["qty", "arrival_day", "expiry_day", "expired"]].values.tolist() == [
        [3, -24, 6, True],
        [5, -18, 12, False],
    ]


def test_warehouse_prices_and_arrays(view):
    queries, s = view
    assert queries.warehouse().values.tolist() == [["SKU0002", 10, 0, 0, 4.14, 41.4]]
    assert queries.warehouse_batches().values.tolist() == [["SKU0002", 10, 8, 98, False]]
    assert queries.prices(changed_only=True).values.tolist() == [["CN_WORKSITE_01", "SKU0003", 2.5, 3.0]]
    assert len(queries.prices("CN_CAMPUS_01")) == 12
    assert queries.price("CN_WORKSITE_01", "SKU0003") == 2.5 and queries.price_band("SKU0002") == (4.5, 18.0)
    shelf, wh = queries.expired_by()
    assert shelf[2, 0] == 3 and shelf.sum() == 3 and wh.sum() == 0
    assert queries.expired_by(12)[0][2, 0] == 8 and queries.expired_by(98)[1][1] == 10
    arrays = queries.batch_arrays()
    assert arrays["shelf_qty"].tolist() == [3, 5] and arrays["wh_expiry"].tolist() == [98]
    assert [a.tolist() for a in queries.shelf_batch_arrays()] == [[2, 2], [0, 0], [3, 5], [6, 12]]
    assert all(a.dtype == np.int64 for a in queries.shelf_batch_arrays())
    assert [a.tolist() for a in queries.machine_batch_arrays(2)] == [[0, 0], [3, 5], [6, 12]]
    assert [a.tolist() for a in queries.machine_batch_arrays(0)] == [[], [], []]
    assert [a.tolist() for a in queries.warehouse_batch_arrays()] == [[1], [10], [98]]
    units = queries.shelf_units()
    units[2, 0] = 0  # a copy: the state keeps its count
    assert s.shelf_q[2, 0] == 8
    assert queries.unit_flows()["shelves"][0] == 8 and queries.unit_flows()["warehouse"][1] == 10
