"""The simulator's demand is the shared kernel of eq. (2)-(3): exact per machine-day, right on average."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.demand.environment import environment_multiplier
from autovend.demand.kernel import attraction, demand_from_uniforms, product_rates
from autovend.demand.shock import shock_multiplier
from autovend.rng import stream
from autovend.sim import Simulator
from autovend.world.model import Economics
from autovend.world.toy import toy_world

DAY = 9  # Thursday 2025-01-09: a working day after every day-1 order has landed (lead times <= 6)
SHELF = {"SKU0001": 50, "SKU0003": 50, "SKU0004": 50, "SKU0006": 50}
DEVICE = "CN_WORKSITE_01"


@pytest.fixture(scope="module")
def world10():
    return toy_world(3, 12, seed=2, economics=Economics(horizon_days=10))


def fixed_shelf_day(world, seed: int, prices: dict[str, float] | None = None) -> Simulator:
    """Stock machine 0 with SHELF on day 9 and settle that day."""
    sim = Simulator(world, seed=seed)
    sim.place_order([{"sku_id": k, "qty": q} for k, q in SHELF.items()])
    while sim.day < DAY:
        sim.end_day()
    res = sim.restock([{"device_id": DEVICE, "sku_id": k, "qty": q} for k, q in SHELF.items()])
    assert res.all_accepted
    if prices:
        res = sim.adjust_price([{"device_id": DEVICE, "sku_id": k, "price": p} for k, p in prices.items()])
        assert res.all_accepted, res.rejected
    sim.end_day()
    return sim


def kernel_rates(world, seed: int, xi_on: bool, prices: dict[str, float] | None = None) -> np.ndarray:
    """Expected demand of machine 0 on DAY computed straight from the kernel and the world."""
    K = world.n_products
    q = np.zeros(K)
    for k, n in SHELF.items():
        q[world.catalog.index[world.catalog["sku_id"] == k][0]] = n
    ratio = np.ones(K)
    for k, p in (prices or {}).items():
        i = world.catalog.index[world.catalog["sku_id"] == k][0]
        ratio[i] = p / world.catalog["ref_price"].iloc[i]
    date = world.date_of(DAY)
    wx = world.weather.set_index(world.weather["date"].dt.date).loc[date]
    day_type = world.calendar.set_index(world.calendar["date"].dt.date).loc[date, "day_type"]
    site = world.machines["site_type"].iloc[0]
    env = environment_multiplier(
        world.demand_model.settings.environment,
        [site],
        world.catalog["category_l1"],
        wx["t_max_c"],
        wx["precip_mm"],
        day_type,
    )[0]
    w = attraction(
        world.demand_model.b[0],
        q,
        world.machines["capacity"].iloc[0],
        eta=world.demand_model.settings.eta,
        phi=world.demand_model.settings.phi,
        price_ratio=ratio,
        elasticity=world.demand_model.settings.elasticity[site],
        env=env,
    )
    xi = 1.0
    if xi_on:
        z = stream(seed, "shock").standard_normal((world.n_machines, world.horizon_days + 5))
        xi = shock_multiplier(z, world.demand_model.shock.sigma, world.demand_model.shock.rho)[0, DAY - 1]
    return product_rates(w, world.demand_model.U[0], xi)


@pytest.mark.parametrize(
    "prices",
    [
        pytest.param(None, id="reference-prices"),
        pytest.param({"SKU0001": 1.3, "SKU0003": 0.62}, id="repriced"),
    ],
)
def test_rates_and_draws_are_the_kernels_exactly(world10, prices):
    """`prices` are factors on the reference price."""
    seed = 13
    if prices:
        ref = world10.catalog.set_index("sku_id")["ref_price"]
        prices = {k: round(ref[k] * f, 2) for k, f in prices.items()}
    sim = fixed_shelf_day(world10, seed, prices)
    rows = sim.hidden.frame("demand")
    rows = rows[(rows["day"] == DAY) & (rows["device_id"] == DEVICE)].set_index("sku_id")
    expected = kernel_rates(world10, seed, xi_on=True, prices=prices)
    ks = [sim.sku_index(k) for k in rows.index]
    assert sorted(rows.index) == sorted(SHELF)
    np.testing.assert_allclose(rows["rate"].to_numpy(), expected[ks], rtol=1e-12)
    uniforms = stream(seed, "demand", DAY).random((world10.n_machines, world10.n_products))[0]
    draws = demand_from_uniforms(uniforms[ks], expected[ks])
    assert rows["demand"].tolist() == draws.tolist()
    assert (rows["sales"] == np.minimum(rows["demand"], rows["shelf_units"])).all()


@pytest.mark.slow
def test_mean_sales_over_seeds_match_the_kernels_expected_units(world10):
    """With stock well above demand, sales are demand; over 150 seeds the mean meets E[xi] * rate."""
    n = 150
    ks = [world10.catalog.index[world10.catalog["sku_id"] == k][0] for k in SHELF]
    expected = kernel_rates(world10, 0, xi_on=False)[ks]  # E[xi] = 1
    sales = np.zeros((n, len(ks)))
    for seed in range(n):
        sim = fixed_shelf_day(world10, seed)
        day = sim.reports[DAY - 1]
        assert day.machine_table["units_before"][0] == sum(SHELF.values())
        got = sim.records.frame(
            "SELECT sku_id, units FROM daily_sales WHERE day = ? AND device_id = ?", (DAY, DEVICE)
        ).set_index("sku_id")["units"]
        sales[seed] = [got.get(k, 0) for k in SHELF]
    assert (sales < np.array(list(SHELF.values()))).all()  # never stocked out: sales equal demand
    mean, se = sales.mean(axis=0), sales.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(mean - expected) < 4 * se + 1e-9), (mean, expected, se)
    total = sales.sum(axis=1)
    assert abs(total.mean() - expected.sum()) < 3.5 * total.std(ddof=1) / np.sqrt(n)
