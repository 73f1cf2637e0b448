"""World facts in the simulator's units, and the check that refuses a world it cannot run."""

from __future__ import annotations

import pytest

from autovend.errors import BundleError
from autovend.sim.facts import WorldFacts


def test_prices_costs_and_fees_are_in_fen(world):
    """SKU0001 sells at 3.00 and costs 2.01; the band is 0.5-2.0 x; 3 machines pay 4.00 a day each."""
    f = WorldFacts.from_world(world)
    assert f.ref_fen[:2].tolist() == [300, 900] and f.cost_fen[:2].tolist() == [201, 414]
    assert f.unit_cost[:2] == [201, 414] and f.capacity_units == [200, 200, 200]
    assert f.price_lo_fen[:2].tolist() == [150, 450] and f.price_hi_fen[:2].tolist() == [600, 1800]
    assert (f.start_cash_fen, f.rent_fen_per_unit, f.daily_fee_fen, f.visit_fen, f.fine_fen) == (
        4_000_000,
        3,
        1_200,
        3_500,
        100_000,
    )
    assert (f.n_machines, f.n_products, f.horizon_days) == (3, 12, 40)


def test_ids_indexes_and_lead_times(world):
    f = WorldFacts.from_world(world)
    assert f.device_ids == ("CN_WORKSITE_01", "CN_CAMPUS_01", "CN_RESIDENTIAL_01")
    assert f.device_index["CN_CAMPUS_01"] == 1 and f.sku_index["SKU0012"] == 11
    assert f.device_arr[[2, 0]].tolist() == ["CN_RESIDENTIAL_01", "CN_WORKSITE_01"] and f.sku_arr[1] == "SKU0002"
    assert f.leads == (2, 3, 4, 5, 6)
    assert f.lead_cdf == pytest.approx((0.15, 0.75, 0.90, 0.97, 1.0))


def test_every_problem_of_a_broken_world_is_named_at_once(world):
    catalog = world.catalog.copy()
    catalog.loc[0, "ref_price"] = 0.0
    catalog.loc[1, "unit_cost"] = -1.0
    machines = world.machines.copy()
    machines.loc[1, "capacity"] = 0
    broken = world.replace(catalog=catalog, machines=machines, weather=world.weather.iloc[:10])
    with pytest.raises(BundleError) as err:
        WorldFacts.from_world(broken)
    message = str(err.value)
    for problem in (
        "every machine capacity must be a whole number >= 1",
        "every ref_price must be a finite number of at least 0.01",
        "every unit_cost must be a finite number >= 0",
        "settlement weather lacks 30 horizon days (first 2025-01-11)",
    ):
        assert problem in message
    assert message.endswith("Re-export or rebuild the world.")
