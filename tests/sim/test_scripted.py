"""The scripted policy keeps every machine stocked and never sells an expired unit."""

from __future__ import annotations

import numpy as np

from autovend.sim import Simulator
from autovend.sim.scripted import KeepStocked, rotating_assortment


def test_keeps_every_machine_stocked(world):
    sim = Simulator(world, seed=3)
    policy = KeepStocked(n_skus=10, facing=8)
    reports = policy.run(sim)
    assert sim.done and len(reports) == 40
    target = policy.targets(sim)
    assert (target.sum(axis=1) == 80).all()
    # after the first deliveries, every working day starts sales with (nearly) full shelves; on
    # weekends and the Spring Festival holiday (days 28-35) shelves run down, as no one can visit
    workdays = [r for r in reports[12:] if r.info.is_workday]
    fill = np.array([r.machine_table["units_before"] / 80 for r in workdays])
    # a late delivery after a busy weekend can leave a shelf short for a day (seen down to 0.74 of
    # target over seeds 3-6), so the typical day is checked, not the worst one
    assert np.percentile(fill, 5) > 0.8 and fill.mean() > 0.95
    assert sum(r.expired_units_sold for r in reports) == 0
    assert all(not r.visited or r.info.is_workday for r in reports)
    assert reports[-1].balance.net_assets_fen > sim.start_cash_fen  # it makes money


def test_rotating_assortment_wraps_around_the_catalog(world):
    sim = Simulator(world, seed=0)
    a = rotating_assortment(sim, 5, 4)
    assert a["CN_WORKSITE_01"] == ["SKU0001", "SKU0002", "SKU0003", "SKU0004", "SKU0005"]
    assert a["CN_RESIDENTIAL_01"] == ["SKU0009", "SKU0010", "SKU0011", "SKU0012", "SKU0001"]
