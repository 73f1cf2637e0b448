"""The popularity prior's objectives: analytic gradients and the fits they drive."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from autovend.calibration import popularity
from autovend.calibration.solve import polish


def _simulated(seed: int, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Units and exposure of n products with log-normal popularity (mu -0.5, tau 1.2)."""
    rng = np.random.default_rng(seed)
    omega = np.exp(rng.normal(-0.5, 1.2, n))
    exposure = rng.uniform(0.5, 40.0, n)
    return rng.poisson(omega * exposure).astype(float), exposure


def _central_difference(fun, p: np.ndarray, h: float = 1e-5) -> np.ndarray:
    return np.array([(fun(p + h * np.eye(2)[i]) - fun(p - h * np.eye(2)[i])) / (2.0 * h) for i in range(2)])


@pytest.mark.parametrize("p", [(0.5, 0.0), (2.0, 1.0), (-1.0, -2.0), (1.2, 2.5)])
def test_gamma_objective_gradient_is_the_derivative_of_its_value(p):
    units, exposure = _simulated(5)
    p = np.array(p)
    value, grad = popularity._gamma_objective(p, units, exposure)
    assert value == popularity._gamma_negloglik(p, units, exposure)
    numeric = _central_difference(lambda q: popularity._gamma_objective(q, units, exposure)[0], p)
    # the negative-binomial likelihood is exact: the two agree to the central difference's error
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p", [(-0.5, np.log(1.2)), (0.3, np.log(0.4)), (-2.0, np.log(2.5)), (1.0, np.log(0.05))])
def test_lognormal_objective_gradient_is_the_derivative_of_its_value(p):
    units, exposure = _simulated(5)
    p = np.array(p)
    value, grad = popularity._lognormal_objective(p, units, exposure)
    terms = popularity._lognormal_terms(p[0], float(np.exp(p[1])), units, exposure)[0]
    assert value == pytest.approx(-np.sum(terms), rel=1e-14)
    np.testing.assert_allclose(grad, -popularity._lognormal_score(p, units, exposure), rtol=1e-14)
    numeric = _central_difference(lambda q: popularity._lognormal_objective(q, units, exposure)[0], p)
    # the analytic gradient is the exact marginal likelihood's; the value is its 24-node Gauss-Hermite
    # approximation, whose error shows most for a wide prior (tau 2.5: 2e-4 relative in the log tau component)
    np.testing.assert_allclose(grad, numeric, rtol=1e-3)


def _finite_difference_fit(family: str, units: np.ndarray, exposure: np.ndarray) -> tuple[float, float]:
    """The fit as it was before the analytic gradients: L-BFGS-B on finite differences, then the polish."""
    if family == "gamma":
        mean = units.sum() / exposure.sum()
        var = max(np.var(units / exposure) - mean * np.mean(1.0 / exposure), 0.05 * mean**2)
        x0 = np.log([mean**2 / var, mean / var])
        res = optimize.minimize(
            popularity._gamma_negloglik, x0, args=(units, exposure), method="L-BFGS-B", bounds=popularity.GAMMA_BOUNDS
        )
        p = polish(lambda q: popularity._gamma_score(q, units, exposure), res.x, what="reference")
        return float(np.exp(p[0])), float(np.exp(p[1]))
    rates = (units + 0.5) / exposure
    x0 = np.array([np.log(np.mean(rates)) - 0.5, np.log(max(np.std(np.log(rates)), 0.1))])
    res = optimize.minimize(
        lambda q: popularity._lognormal_objective(q, units, exposure)[0],
        x0,
        method="L-BFGS-B",
        bounds=popularity.LOGNORMAL_BOUNDS,
    )
    p = polish(lambda q: popularity._lognormal_score(q, units, exposure), res.x, what="reference")
    return float(p[0]), float(np.exp(p[1]))


@pytest.mark.parametrize("family", ["gamma", "lognormal"])
@pytest.mark.parametrize("seed", [5, 6])
def test_fitted_prior_equals_the_finite_difference_fit(family, seed):
    units, exposure = _simulated(seed)
    prior = popularity.fit_prior(units, exposure, (family,))
    a, b = _finite_difference_fit(family, units, exposure)
    assert prior.family == family
    # both are polished to the score's root (about 1e-13); 1e-9 leaves room for the Newton path
    assert prior.a == pytest.approx(a, rel=1e-9)
    assert prior.b == pytest.approx(b, rel=1e-9)
    if family == "lognormal":
        assert prior.a == pytest.approx(-0.5, abs=0.25)
        assert prior.b == pytest.approx(1.2, rel=0.15)


@pytest.mark.parametrize("mu, tau", [(-0.5, 1.2), (0.5, 0.3), (-3.0, 3.0), (2.0, 0.02), (5.0, 4.9)])
def test_posterior_nodes_stop_at_the_mode_all_newton_steps_reach(mu, tau):
    units, exposure = _simulated(8, n=3000)
    z = np.maximum(np.log((units + 1.0) / exposure), mu)
    for _ in range(popularity.MODE_STEPS):  # every step, as before the stopping rule
        g = units - exposure * np.exp(z) - (z - mu) / tau**2
        z = z - g / (-exposure * np.exp(z) - 1.0 / tau**2)
    # z is the posterior mode: the score y - e exp(z) - (z - mu) / tau^2 vanishes to rounding
    score = units - exposure * np.exp(z) - (z - mu) / tau**2
    assert np.max(np.abs(score) / (units + exposure * np.exp(z) + np.abs(z - mu) / tau**2 + 1.0)) < 1e-12
    nodes, log_w = popularity._posterior_nodes(mu, tau, units, exposure)
    sd = 1.0 / np.sqrt(exposure * np.exp(z) + 1.0 / tau**2)
    want = z[:, None] + np.sqrt(2.0) * sd[:, None] * popularity.GH_X[None, :]
    # the stopped Newton loop lands within a few ulps of z (it alternates there at rounding level)
    np.testing.assert_allclose(nodes, want, rtol=1e-13, atol=1e-13)
    centre = np.mean(nodes, axis=1)  # the rule is symmetric about the mode
    np.testing.assert_allclose(centre, z, rtol=1e-12, atol=1e-12)
    assert np.all(np.isfinite(log_w))


def test_shrinkage_pulls_thinly_exposed_products_to_their_subcategory_and_leaves_well_exposed_ones():
    """Gamma-Poisson by hand: a product of exposure e and units y gets (a + y) / (b + e) under its group's prior."""
    from autovend.calibration.popularity import shrink

    rng = np.random.default_rng(0)
    true = rng.gamma(2.0, 0.5, size=40)  # a subcategory's popularities, mean 1
    exposure = np.r_[np.full(39, 2_000.0), 3.0]  # the last product barely exposed
    units = rng.poisson(true * exposure).astype(float)
    units[-1] = 0.0
    omega, priors = shrink(units, exposure, np.zeros(40, dtype=np.int64), families=("gamma",))
    prior = priors[0]
    np.testing.assert_allclose(omega, (prior.a + units) / (prior.b + exposure), rtol=1e-12)
    raw = units / exposure
    assert raw[-1] == 0 and omega[-1] > 0.3 * prior.mean  # not the raw 0: three machine-days say little
    assert np.abs(np.log(omega[:-1] / raw[:-1])).max() < 0.05  # 2,000 machine-days: the data speak


def test_the_calibration_keeps_the_shrunk_popularity_not_the_raw_one(synthetic_calibration):
    pop = synthetic_calibration.popularity
    unsold = pop[(pop["units"] == 0) & (pop["exposure"] > 0)]
    assert len(unsold) > 20
    ratio = unsold["omega"] / unsold["omega_raw"]  # the raw fit is near 0 for a product that never sold
    assert (ratio > 3).all() and ratio.median() > 20
    busy = pop.nlargest(50, "exposure")
    assert (np.abs(np.log(busy["omega"] / busy["omega_raw"])) < 0.2).all()


def test_a_small_subcategory_borrows_the_pooled_shape_at_its_own_level():
    """Subcategory 1 has two exposed products (fewer than 5): its prior is Gamma with the pooled fit's shape and its
    own units per exposure as mean (6 units over 3 of exposure: 2.0), so its posterior means are
    (a + y) / (a / 2 + e)."""
    from autovend.calibration.popularity import fit_prior, shrink

    rng = np.random.default_rng(4)
    big_e = rng.uniform(5, 50, 40)
    big_u = rng.poisson(rng.gamma(2.0, 0.5, 40) * big_e).astype(float)
    units = np.r_[big_u, [4.0, 2.0]]
    exposure = np.r_[big_e, [1.0, 2.0]]
    groups = np.r_[np.zeros(40, np.int64), [1, 1]]
    omega, priors = shrink(units, exposure, groups)
    pooled = fit_prior(units, exposure, ("gamma",))
    small = priors[1]
    assert small.family == "gamma" and small.a == pytest.approx(pooled.a) and small.mean == pytest.approx(2.0)
    np.testing.assert_allclose(omega[40:], (pooled.a + np.array([4.0, 2.0])) / (pooled.a / 2.0 + np.array([1.0, 2.0])))
