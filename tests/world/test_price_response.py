"""Price response of a world: units and gross profit against a common price multiplier, from its DemandModel."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.world.price_response import (
    MULTIPLIERS,
    SHELVES,
    machine_response,
    price_response,
    readme_lines,
    shelf_at_fill,
    shelves,
)
from autovend.world.toy import toy_world


@pytest.fixture(scope="module")
def world():
    return toy_world(6, 40, seed=2)


@pytest.fixture(scope="module")
def response(world):
    return price_response(world)


def test_shelf_at_fill_takes_the_best_products_phi_units_each():
    # b ranks products 0, 2, 1 (product 3 has b = 0); capacity 20, phi 5
    assert shelf_at_fill([3.0, 1.0, 2.0, 0.0], 20, 5, 0.5).tolist() == [5, 0, 5, 0]
    assert shelf_at_fill([3.0, 1.0, 2.0, 0.0], 20, 5, 1.0).tolist() == [5, 5, 5, 0]  # b = 0 is never shelved
    assert shelf_at_fill([3.0, 1.0, 2.0, 0.0], 20, 5, 0.6).tolist() == [5, 2, 5, 0]  # 12 units: the third gets 2
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        shelf_at_fill([1.0], 20, 5, 0.0)


def test_multipliers_span_the_band_in_tenths():
    assert MULTIPLIERS[0] == 0.5 and MULTIPLIERS[-1] == 2.0 and len(MULTIPLIERS) == 16 and 1.0 in MULTIPLIERS


def test_units_at_reference_prices_are_the_demand_models_expected_units(world, response):
    """At 1.0x the units are DemandModel.expected on the same shelf with price ratio 1, summed per machine and
    averaged over the site type; gross profit is those rates times (reference price - unit cost)."""
    model = world.demand_model
    ref = world.catalog["ref_price"].to_numpy(float)
    cost = world.catalog["unit_cost"].to_numpy(float)
    site_of = world.machines["site_type"].astype(str).to_numpy()
    at = MULTIPLIERS.index(1.0)
    for i, fill in enumerate((response.typical_fill, 1.0)):
        q = shelves(model, fill)
        rates = model.expected(q, np.ones(q.shape))
        for j, site in enumerate(response.site_types):
            rows = site_of == site
            assert response.units[i, j, at] == pytest.approx(rates[rows].sum(axis=1).mean(), rel=1e-12)
            assert response.gross_profit[i, j, at] == pytest.approx((rates[rows] @ (ref - cost)).mean(), rel=1e-12)


def test_units_fall_and_revenue_per_unit_rises_with_the_multiplier(response):
    assert np.all(np.diff(response.units, axis=-1) < 0)
    assert np.all(response.units > 0)
    # a full shelf sells more than a typical one at every multiplier
    assert np.all(response.units[SHELVES.index("full")] > response.units[SHELVES.index("typical")])


def test_units_fall_less_than_attraction_does(world, response):
    """Eq. (3): units = U W / (U + W), so a price rise that scales W by p^-eps lowers units by less than p^-eps."""
    top, at = len(MULTIPLIERS) - 1, MULTIPLIERS.index(1.0)
    drop = response.units[:, :, top] / response.units[:, :, at]
    free = response.unsaturated_units[:, :, top] / response.unsaturated_units[:, :, at]
    eps = np.asarray(response.elasticity)
    assert free[0] == pytest.approx(2.0**-eps, rel=1e-12)
    assert np.all(drop > free)
    np.testing.assert_allclose(response.unsaturated_units[:, :, at], response.units[:, :, at], rtol=1e-12)


def test_one_machine_by_hand():
    """One product, b = 10, U = 2, a full shelf at 1.0x: W = 10, units 2 * 10 / 12 = 1.667; at 2.0x with
    elasticity eps, W = 10 * 2^-eps."""
    model = toy_world(1, 1, seed=0, base_attraction=np.array([[10.0]]), U=np.array([2.0])).demand_model
    q = np.array([[int(model.capacity[0])]])
    r = machine_response(model, q, [1.0], [0.0], (1.0, 2.0))
    W = model.attraction(q).sum()
    U = float(model.U[0])
    assert (U, W) == (2.0, 10.0)  # one product, at least phi units, F = 1
    assert r.units[0, 0] == pytest.approx(U * W / (U + W), rel=1e-12)
    W2 = W * 2.0 ** -float(model.elasticity[0])
    assert r.units[0, 1] == pytest.approx(U * W2 / (U + W2), rel=1e-12)
    assert r.gross_profit[0, 1] == pytest.approx(2.0 * r.units[0, 1], rel=1e-12)  # price 2, cost 0
    assert r.saturation[0] == pytest.approx(W / U, rel=1e-12)


def test_readme_section_shows_the_reference_row(response):
    lines = readme_lines(response)
    assert lines[0] == "## Price response"
    row = next(line for line in lines if line.startswith("| 1.0x |"))
    assert f" {response.units[0, 0, MULTIPLIERS.index(1.0)]:.2f} " in row
    assert len([line for line in lines if line.startswith("| 2.0x |")]) == 2  # units and gross profit tables
    assert response.table().shape == (2 * len(response.site_types) * len(MULTIPLIERS), 6)
