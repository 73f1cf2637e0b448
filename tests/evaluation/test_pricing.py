"""The price-search reference and the pricing regret, against enumeration done by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from autovend.evaluation.economics import ShelfEconomics
from autovend.evaluation.metrics import pricing_regret
from autovend.evaluation.pricing import grid, search_prices
from autovend.evaluation.settings import EvalSettings

from .conftest import make_run, summary_row
from .test_economics import emin

ELASTICITY_OFFICE = 2.6


def test_grid():
    assert grid((0.5, 2.0), 0.5).tolist() == [0.5, 1.0, 1.5, 2.0]
    assert grid((0.5, 2.0), 0.4).tolist() == [0.5, 0.9, 1.3, 1.7, 2.0]
    assert len(grid((0.5, 2.0), 0.05)) == 31


def one_product(p: float) -> float:
    """A at M1 alone, 5 units (F = 0.5): w = 2 x 0.707107 x (p / 4)^-2.6, rate w / (1 + w), margin p - 2."""
    w = 2.0 * math.sqrt(0.5) * (p / 4.0) ** -ELASTICITY_OFFICE
    return emin(w / (1 + w), 5) * (p - 2.0)


def test_one_product_by_hand(world):
    econ = ShelfEconomics.from_world(world)
    res = search_prices(
        econ, [0], np.array([[0]]), np.array([[5]]), np.array([[4.0]]), np.ones((1, 1)), grid((0.5, 2.0), 0.5)
    )
    # p = 2: margin 0; p = 4: rate 0.585786 -> 1.17151 (the tail beyond 5 units takes 0.00006);
    # p = 6: w = 1.414214 x 1.5^-2.6 = 0.492816, rate 0.330126 -> 1.32050; p = 8: w = 0.233258,
    # rate 0.189140 -> 1.13484. Best: 6.0, regret 1.32050 - 1.17151 = 0.14899.
    values = {p: one_product(p) for p in (2.0, 4.0, 6.0, 8.0)}
    assert values[2.0] == 0.0 and max(values, key=values.get) == 6.0
    assert res.agent[0] == pytest.approx(values[4.0], rel=1e-12)
    assert res.reference[0] == pytest.approx(values[6.0], rel=1e-12)
    assert res.regret[0] == pytest.approx(values[6.0] - values[4.0], rel=1e-12)
    assert 0.1489 < res.regret[0] < 0.1491
    assert res.reference_price[0, 0] == 6.0 and res.level[0] == 1.5


def brute_force(econ, machine, product, q, env, levels):
    """The best expected gross profit over every combination of grid prices (independent enumeration)."""
    cands = [np.clip(np.round(econ.ref_price[k] * levels, 2), econ.price_lo[k], econ.price_hi[k]) for k in product]
    best = -1.0
    for combo in itertools.product(*cands):
        price = np.array([combo])
        best = max(best, float(econ.gross_profit([machine], np.array([product]), np.array([q]), price, env)[0]))
    return best


@pytest.mark.parametrize(
    ("machine", "product", "q", "agent"),
    [
        pytest.param(0, [0, 1, 2], [5, 3, 2], [4.0, 5.0, 2.0], id="M1-three-at-reference"),
        pytest.param(1, [0, 1, 2], [2, 4, 4], [8.0, 2.5, 4.0], id="M2-three-odd-prices"),
        pytest.param(0, [1, 2], [5, 5], [7.5, 1.0], id="M1-two"),
    ],
)
def test_search_reaches_the_joint_optimum_of_the_grid(world, machine, product, q, agent):
    econ = ShelfEconomics.from_world(world)
    levels = grid((0.5, 2.0), 0.25)
    env = np.ones((1, len(product)))
    res = search_prices(econ, [machine], np.array([product]), np.array([q]), np.array([agent]), env, levels)
    best = brute_force(econ, machine, product, q, env, levels)
    assert res.reference[0] == pytest.approx(best, rel=1e-9)
    assert res.reference[0] >= res.best_level[0] - 1e-12 and res.reference[0] >= res.agent[0] - 1e-12


def test_agent_at_the_optimum_has_no_regret(world):
    econ = ShelfEconomics.from_world(world)
    res = search_prices(
        econ, [0], np.array([[0]]), np.array([[5]]), np.array([[6.0]]), np.ones((1, 1)), grid((0.5, 2.0), 0.5)
    )
    assert res.regret[0] == 0.0


def test_pricing_regret_metric(world):
    """A at M1 (5 units, price 4.0) on days 1-2, nothing sold; M2 empty: two machine-days, each 0.1488."""
    run = make_run(
        world,
        daily_summary=[summary_row(1), summary_row(2)],
        shelf_events=[(1, "M1", "A", "restock", 5, 0)],
    )
    out = pricing_regret(run, EvalSettings(price_grid_step=0.5, pricing_stride=1))
    assert out["machine_days"] == 2
    assert out["regret"] == pytest.approx(one_product(6.0) - one_product(4.0), rel=1e-12)
    assert out["expected_gp_agent"] == pytest.approx(one_product(4.0), rel=1e-12)
    # stride 2 keeps (day + machine) even: day 2 at M1 only
    assert pricing_regret(run, EvalSettings(price_grid_step=0.5, pricing_stride=2))["machine_days"] == 1
    # the agent repriced A to 6.0 on day 2: no regret that day
    repriced = make_run(
        world,
        daily_summary=[summary_row(1), summary_row(2)],
        shelf_events=[(1, "M1", "A", "restock", 5, 0)],
        price_changes=[(2, "M1", "A", 4.0, 6.0)],
    )
    out = pricing_regret(repriced, EvalSettings(price_grid_step=0.5, pricing_stride=1))
    assert out["regret"] == pytest.approx((one_product(6.0) - one_product(4.0)) / 2, rel=1e-12)
