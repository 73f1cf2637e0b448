"""Cleaning the warehouse: expired and soon-expiring units, and dead stock that is not worth its rent."""

from __future__ import annotations

import numpy as np

from autovend.agents.baseline.clean import discard_quantities
from autovend.agents.baseline.observe import Warehouse


def warehouse(next_expiry: list[int]) -> Warehouse:
    units, expired, expiring = np.array([10, 8, 6]), np.array([1, 0, 0]), np.array([2, 0, 0])
    return Warehouse(units, expired, expiring, np.array(next_expiry), units - expired - expiring)


def test_discard_the_stale_units_and_dead_stock_not_worth_keeping():
    # day 10 of 30, rent 0.01 a unit-day: 21 days of rent = 0.21.
    # 0: not dead: its 1 expired + 2 expiring units go. 1 (cost 1): dead, expires on day 40, after the run, and
    # its rent to the end is below its cost: kept. 2 (cost 0.10): dead and the rent exceeds its cost: all 6 go.
    dead = np.array([False, True, True])
    cost = np.array([1.0, 1.0, 0.1])
    qty = discard_quantities(warehouse([3, 40, 0]), dead, 10, 30, 0.01, cost)
    assert qty.tolist() == [3, 0, 6]
    # if product 1 expires on day 25, before the run ends, all its 8 units go now
    assert discard_quantities(warehouse([3, 25, 0]), dead, 10, 30, 0.01, cost).tolist() == [3, 8, 6]
    # nothing dead: only the stale units
    none = np.zeros(3, dtype=bool)
    assert discard_quantities(warehouse([3, 25, 0]), none, 10, 30, 0.01, cost).tolist() == [3, 0, 0]
