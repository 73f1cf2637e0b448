"""Expected sales and expected gross profit of shelves, checked against sums and arithmetic done by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autovend.evaluation.economics import ShelfEconomics, expected_sales, expected_sales_and_slope
from autovend.sim import KeepStocked, Simulator
from autovend.world.model import Economics
from autovend.world.toy import toy_world


def emin(lam: float, q: int) -> float:
    """E[min(D, q)] for D ~ Poisson(lam) by direct summation over d = 0..80."""
    return sum(min(d, q) * math.exp(-lam) * lam**d / math.factorial(d) for d in range(81))


@pytest.mark.parametrize(
    ("lam", "q"),
    [
        pytest.param(0.5, 1, id="one-unit"),
        pytest.param(0.5, 2, id="two-units"),
        pytest.param(3.2, 4, id="short-shelf"),
        pytest.param(0.2, 30, id="deep-shelf"),
        pytest.param(12.0, 7, id="sells-out"),
    ],
)
def test_expected_sales_equals_the_sum(lam, q):
    assert expected_sales(lam, q) == pytest.approx(emin(lam, q), rel=1e-12, abs=1e-14)


def test_expected_sales_closed_forms():
    # q = 1: P(D >= 1) = 1 - e^-0.5 = 0.393469...
    assert expected_sales(0.5, 1) == pytest.approx(1 - math.exp(-0.5), rel=1e-14)
    # q = 2: 2 - 2 P(D = 0) - P(D = 1) = 2 - 2 e^-0.5 - 0.5 e^-0.5 = 2 - 2.5 x 0.606531 = 0.483673
    assert expected_sales(0.5, 2) == pytest.approx(2 - 2.5 * math.exp(-0.5), rel=1e-14)
    assert expected_sales(0.0, 5) == 0.0 and expected_sales(2.0, 0) == 0.0


def test_slope_is_the_probability_of_not_selling_out():
    lam, q = 1.3, 3
    sales, slope = expected_sales_and_slope(lam, q)
    h = 1e-6
    numeric = (expected_sales(lam + h, q) - expected_sales(lam - h, q)) / (2 * h)
    # P(D <= 2) = e^-1.3 (1 + 1.3 + 1.3^2 / 2)
    assert slope == pytest.approx(math.exp(-1.3) * (1 + 1.3 + 0.845), rel=1e-12)
    assert numeric == pytest.approx(float(slope), rel=1e-7)


def test_shelf_gross_profit_by_hand(world):
    econ = ShelfEconomics.from_world(world)
    machine = np.array([0, 0, 1])
    product = np.array([[0, 1], [0, 1], [2, 0]])
    q = np.array([[5, 5], [2, 5], [4, 0]])
    price = np.array([[4.0, 5.0], [8.0, 5.0], [3.0, 4.0]])
    env = econ.env(np.array([3, 3, 3]), machine, product)
    assert np.all(env == 1.0)  # the hand world's environment is neutral
    lam = econ.rates(machine, product, q, price, env)
    # row 0, M1 full (F = 10/10), reference prices: w = (2, 1), W = 3, U = 1 -> rates 2/4, 1/4
    assert lam[0] == pytest.approx([0.5, 0.25], rel=1e-12)
    # row 1: F = 7/10, F^0.5 = 0.836660; A has 2 of phi = 5 units and costs 2x: 2^-2.6 = 0.164938 (office)
    f = math.sqrt(0.7)
    wa, wb = 2.0 * f * 0.4 * 2**-2.6, 1.0 * f
    assert lam[1] == pytest.approx([wa / (1 + wa + wb), wb / (1 + wa + wb)], rel=1e-12)
    # row 2, M2 (U = 2, campus elasticity 3.5): C alone, 4 units at 1.5 x reference (2.0 -> 3.0)
    wc = 2.0 * math.sqrt(0.4) * 0.8 * 1.5**-3.5
    assert lam[2, 0] == pytest.approx(2 * wc / (2 + wc), rel=1e-12) and lam[2, 1] == 0.0
    gp = econ.gross_profit(machine, product, q, price, env)
    assert gp[0] == pytest.approx(emin(0.5, 5) * (4 - 2) + emin(0.25, 5) * (5 - 2), rel=1e-12)
    assert gp[1] == pytest.approx(emin(lam[1, 0], 2) * (8 - 2) + emin(lam[1, 1], 5) * 3, rel=1e-12)
    assert gp[2] == pytest.approx(emin(2 * wc / (2 + wc), 4) * (3.0 - 1.5), rel=1e-12)


def test_price_band_is_the_simulators(world):
    econ = ShelfEconomics.from_world(world)
    sim = Simulator(world, seed=0)
    for k, sku in enumerate(sim.sku_ids):
        assert (econ.price_lo[k], econ.price_hi[k]) == sim.price_band(sku)
    assert list(econ.price_lo) == [2.0, 2.5, 1.0] and list(econ.price_hi) == [8.0, 10.0, 4.0]


def test_rates_agree_with_the_simulator_on_a_real_world():
    """With the day's real weather and calendar and the run's shocks, the rates are the simulator's own."""
    world = toy_world(3, 10, seed=4, economics=Economics(horizon_days=20))
    sim = Simulator(world, seed=7)
    KeepStocked(n_skus=6, facing=4).run(sim, days=15)
    from autovend.evaluation.rundata import RunData

    run = RunData.from_simulator(sim)
    econ, panel = run.economics, run.panel
    demand = run.hidden["demand"]
    shocks = run.hidden["shocks"].set_index(["day", "device_id"])["xi"]
    checked = 0
    for day in (6, 9, 15):
        ms = np.arange(3)
        product, q, price = panel.padded(np.full(3, day), ms)
        xi = np.array([shocks[(day, d)] for d in world.machines["device_id"]])
        lam = econ.rates(ms, product, q, price, econ.env(np.full(3, day), ms, product), xi)
        for r in demand[demand["day"] == day].itertuples():
            m = int(np.flatnonzero(world.machines["device_id"] == r.device_id)[0])
            k = int(np.flatnonzero(world.catalog["sku_id"] == r.sku_id)[0])
            slot = int(np.flatnonzero((product[m] == k) & (q[m] > 0))[0])
            assert lam[m, slot] == pytest.approx(r.rate, rel=1e-12)
            checked += 1
    assert checked > 20
