"""The controls change one component of the model each, by rules a reader can check."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.validation.controls import control_omega, flat_scale_rates, machine_day_totals, popularity_rates
from autovend.validation.shelves import WindowShelves, expected_rates

OMEGA = np.array([0.5, 2.0, 0.1, 1.0, 0.3])
EXPOSED = np.array([True, True, True, True, False])
G2 = np.array([0, 0, 1, 1, 1])


def test_reversed_popularity_gives_the_best_seller_the_worst_value():
    out = control_omega("reversed_popularity", OMEGA, EXPOSED, G2, seed=0)
    # exposed products ranked 2.0 > 1.0 > 0.5 > 0.1 take 0.1, 0.5, 1.0, 2.0; the unexposed one keeps its value
    np.testing.assert_array_equal(out, [1.0, 0.1, 2.0, 0.5, 0.3])


def test_shuffled_popularity_permutes_within_each_subcategory_only():
    omega = np.arange(1.0, 41.0)
    exposed = np.ones(40, dtype=bool)
    g2 = np.repeat(np.arange(4), 10)
    out = control_omega("shuffled_popularity", omega, exposed, g2, seed=0)
    for g in range(4):
        assert sorted(out[g2 == g]) == sorted(omega[g2 == g])
    assert not np.array_equal(out, omega)
    assert np.array_equal(out, control_omega("shuffled_popularity", omega, exposed, g2, seed=0))


def test_uniform_popularity_is_flat():
    np.testing.assert_array_equal(control_omega("uniform_popularity", OMEGA, EXPOSED, G2, 0), np.ones(5))


def _shelves():
    # two machines, two days, three products each day
    m = np.repeat([0, 0, 1, 1], 3)
    d = np.tile(np.repeat([0, 1], 3), 2)
    k = np.tile([0, 1, 3], 4)
    n = len(m)
    return WindowShelves(m, k, d, np.full(n, np.inf), np.full(n, 5.0), np.full(n, 0.5), np.ones(n), 2)


def _model():
    b = np.array([[1.0, 4.0, 0.2, 2.0, 0.6], [0.5, 2.0, 0.1, 1.0, 0.3]])
    return DemandModel(
        b=b,
        U=np.array([3.0, 1.5]),
        capacity=np.array([100.0, 100.0]),
        site_types=("office", "office"),
        categories=("drinks",) * 5,
        settings=DemandSettings(),
        shock=ShockProcess(sigma=0.5, rho=0.2),
    )


def test_popularity_controls_keep_each_machine_days_expected_total():
    sh, model = _shelves(), _model()
    rates = expected_rates(sh, model)
    new = control_omega("reversed_popularity", OMEGA, EXPOSED, G2, 0)
    alt = popularity_rates(sh, model, rates, OMEGA, new)
    np.testing.assert_allclose(machine_day_totals(sh, alt), machine_day_totals(sh, rates), rtol=1e-12)
    # the split changes: product 1 (omega 2.0 -> 0.1) loses most of its share
    assert alt[1] < rates[1] / 5


def test_flat_machine_scale_keeps_the_total_and_equalises_rate_per_kappa():
    sh = _shelves()
    rates = np.arange(1.0, 13.0)
    kappa = np.array([2.0, 0.5])
    flat = flat_scale_rates(sh, rates, kappa)
    assert flat.sum() == pytest.approx(rates.sum())
    # every cell is multiplied by common / kappa of its machine: the ratio between machines is 0.5 / 2 = 1/4
    np.testing.assert_allclose(flat[:6] / rates[:6] * 4, flat[6:] / rates[6:])


def test_reversed_popularity_with_an_unexposed_product_first_gives_values_only_to_the_exposed():
    """An unexposed product in the first place keeps its value; the exposed ones swap by rank among themselves."""
    omega = np.array([9.0, 0.5, 2.0, 1.0])
    exposed = np.array([False, True, True, True])
    out = control_omega("reversed_popularity", omega, exposed, np.zeros(4, np.int64), seed=0)
    np.testing.assert_array_equal(out, [9.0, 2.0, 0.5, 1.0])  # 2.0 > 1.0 > 0.5 take 0.5, 1.0, 2.0
