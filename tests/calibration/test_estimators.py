"""Each estimator on data simulated from known parameters (fixed seeds, stated tolerances)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from autovend.calibration import choice, no_purchase, popularity, shocks, split
from autovend.calibration.normalise import Factors, canonical
from autovend.demand.shock import latent_lag1_corr, shock_multiplier, sigma_from_r


def test_gamma_poisson_prior_is_recovered_and_shrinkage_cuts_error():
    rng = np.random.default_rng(1)
    alpha, beta = 2.0, 4.0  # prior mean 0.5
    omega = rng.gamma(alpha, 1 / beta, 4000)
    exposure = rng.uniform(0.5, 20, 4000)
    units = rng.poisson(omega * exposure)
    prior = popularity.fit_prior(units, exposure, ("gamma",))
    assert prior.a == pytest.approx(alpha, rel=0.15)
    assert prior.mean == pytest.approx(0.5, rel=0.05)
    post = popularity.posterior_mean(prior, units, exposure)
    assert np.mean((post - omega) ** 2) < 0.6 * np.mean((units / exposure - omega) ** 2)


def test_lognormal_prior_wins_on_heavy_tails():
    rng = np.random.default_rng(2)
    omega = np.exp(rng.normal(-0.5, 1.5, 3000))
    exposure = rng.uniform(5, 50, 3000)
    units = rng.poisson(omega * exposure)
    prior = popularity.fit_prior(units, exposure)
    assert prior.family == "lognormal"
    assert prior.a == pytest.approx(-0.5, abs=0.1)
    assert prior.b == pytest.approx(1.5, rel=0.08)


def test_no_purchase_weight_recovered_by_structural_poisson_fit():
    rng = np.random.default_rng(3)
    M, D, u = 40, 150, 0.03
    R = rng.uniform(100, 300, M)
    c = rng.uniform(8, 30, M)
    m = np.repeat(np.arange(M), D)
    W = R[m] * 0.08 * np.exp(rng.normal(0, 0.5, M * D))  # shelves vary around x = 0.08
    xi = shock_multiplier(rng.standard_normal((M, D + 5)), sigma_from_r(2.74), 0.21).ravel()
    mu = c[m] * W / (u * R[m] + W)
    demand = rng.poisson(xi * mu).astype(float)
    fit = no_purchase.fit_no_purchase(demand, W, R, m, W, bounds=(1e-4, 10), min_days=28, min_machines=2)
    assert fit.u == pytest.approx(u, rel=0.1)
    assert abs(fit.u - u) < 3 * fit.u_se  # the clustered standard error is honest
    np.testing.assert_allclose(fit.c.to_numpy(), c, rtol=0.15)
    assert fit.x == pytest.approx(0.08, rel=0.05)


def test_shock_estimates_recover_r_and_latent_rho_not_the_count_autocorrelation():
    rng = np.random.default_rng(4)
    M, D, r, rho = 200, 180, 2.74, 0.21
    xi = shock_multiplier(rng.standard_normal((M, D + 5)), sigma_from_r(r), rho)
    mu = np.repeat(rng.uniform(2, 12, M)[:, None], D, axis=1)  # slow machines: Poisson noise matters
    counts = rng.poisson(xi * mu).astype(float)
    m = np.repeat(np.arange(M), D)
    d = np.tile(np.arange(D), M)
    fit = shocks.fit_shocks(counts.ravel(), mu.ravel(), mu.ravel(), m, d, d % 7, min_days=28)
    assert fit.r == pytest.approx(r, rel=0.1)
    assert fit.rho == pytest.approx(rho, abs=0.03)
    assert fit.naive_rho < rho - 0.05  # Poisson noise attenuates the autocorrelation of counts
    assert fit.latent_lag1 == pytest.approx(latent_lag1_corr(rho), abs=0.03)


def test_choice_split_recovers_popularity_and_site_preference_with_censoring():
    """Shelves of known depth, sold-out products censored: MM + EM recovers the split."""
    rng = np.random.default_rng(5)
    K, M, D = 60, 30, 60
    omega = np.exp(rng.normal(0, 1, K))
    g1 = (np.arange(K) >= 30).astype(int)
    sites = rng.integers(0, 2, M)
    pi = np.array([[1.4, 0.7], [0.7, 1.4]])
    rows = []
    for m in range(M):
        for d in range(D):
            shelf = rng.choice(K, 20, replace=False)
            q = rng.integers(1, 6, 20)
            w = omega[shelf] * pi[sites[m], g1[shelf]] * np.minimum(1, q / 5)
            lam = 15 * rng.lognormal(-0.15, 0.55) * w / w.sum()
            demand = rng.poisson(lam)
            rows.append(
                pd.DataFrame(
                    {
                        "md": m * D + d,
                        "k": shelf,
                        "q": q,
                        "y": np.minimum(demand, q),
                        "site": sites[m],
                        "g1": g1[shelf],
                        "a": np.minimum(1, q / 5),
                    }
                )
            )
    df = pd.concat(rows, ignore_index=True)
    md_codes, md = np.unique(df["md"], return_inverse=True)
    pig, g1_of_g2 = choice.split_codes(df["site"].to_numpy(), df["g1"].to_numpy(), df["g1"].to_numpy(), 2, 2)
    data = choice.ChoiceData(
        cell_md=md,
        k=df["k"].to_numpy(),
        pig=pig,
        g2_of_k=g1,
        g1_of_g2=g1_of_g2,
        a=df["a"].to_numpy(float),
        y=df["y"].to_numpy(float),
        q=df["q"].to_numpy(float),
        censored=(df["y"] >= df["q"]).to_numpy(),
        md_m=md_codes // D,
        md_d=md_codes % D,
        sites=["s0", "s1"],
        cats_l1=["c0", "c1"],
        cats_l2=["c0", "c1"],
        n_products=K,
    )
    fit = split.fit_choice(data, em_rounds=6)
    naive = split.fit_choice(data, impute=False)
    est = fit.omega * fit.gamma[g1]
    assert stats.spearmanr(est, omega)[0] > 0.9
    ratio = lambda p: (p[0, 0] / p[0, 1]) / (p[1, 0] / p[1, 1])  # noqa: E731
    assert ratio(fit.pi) == pytest.approx(ratio(pi), rel=0.15)
    # censoring hides the best sellers' demand: without EM their share is understated
    top = np.argsort(-omega)[:10]
    share = lambda f: (f.omega * f.gamma[g1])[top].sum() / (f.omega * f.gamma[g1]).sum()  # noqa: E731
    true_share = (omega[top]).sum() / omega.sum()
    assert abs(share(fit) - true_share) < abs(share(naive) - true_share)
    assert fit.units.sum() > data.y.sum()  # imputed demand exceeds sales


def test_canonical_normalisation_leaves_b_unchanged():
    rng = np.random.default_rng(6)
    products = pd.DataFrame(
        {"category_l1": ["d"] * 4 + ["s"] * 4, "category_l2": list("aabbccdd")},
        index=[f"p{i}" for i in range(8)],
    )
    machines = pd.Series(["w", "w", "o"], index=["m0", "m1", "m2"])
    f = Factors(
        omega=pd.Series(rng.uniform(0.1, 3, 8), index=products.index),
        gamma=pd.Series(rng.uniform(0.5, 2, 4), index=list("abcd")),
        pi=pd.DataFrame(rng.uniform(0.5, 2, (2, 2)), index=["w", "o"], columns=["d", "s"]),
        kappa=pd.Series(rng.uniform(1, 5, 3), index=machines.index),
        products=products,
        machines=machines,
    )
    c = canonical(f)
    np.testing.assert_allclose(c.base_attraction().to_numpy(), f.base_attraction().to_numpy(), rtol=1e-12)
    assert c.omega.groupby(products["category_l2"]).mean().to_numpy() == pytest.approx(1.0)
    assert np.exp(np.log(c.pi).mean(axis=1)).to_numpy() == pytest.approx(1.0)
    assert np.exp(np.log(c.gamma).groupby(["d", "d", "s", "s"]).mean()).to_numpy() == pytest.approx(1.0)


def test_exposure_scale_is_relative_to_the_groups_typical_exposure():
    """Group 0 has exposures 1, 4, 16 (geometric mean 4): with beta 0.5, s = 0.5, 1, 2; unexposed products keep 1."""
    exposure = np.array([1.0, 4.0, 16.0, 0.0, 3.0])
    groups = np.array([0, 0, 0, 0, 1])
    np.testing.assert_allclose(popularity.exposure_scale(exposure, groups, 0.5), [0.5, 1.0, 2.0, 1.0, 1.0])
    np.testing.assert_array_equal(popularity.exposure_scale(exposure, groups, 0.0), np.ones(5))


def test_exposure_aware_prior_finds_the_selection_it_was_built_for():
    """Popularity falls with exposure as omega = 0.5 (e / 10)^0.8 x Gamma noise: beta is found on the grid, and
    the exposure-aware posterior means are closer to the truth than the subcategory prior's."""
    rng = np.random.default_rng(4)
    exposure = np.exp(rng.uniform(np.log(1.0), np.log(100.0), 3000))
    omega = 0.5 * (exposure / 10.0) ** 0.8 * rng.gamma(4.0, 0.25, 3000)
    units = rng.poisson(omega * exposure)
    groups = np.zeros(3000, dtype=np.int64)
    post, prior = popularity.exposure_aware_shrink(units, exposure, groups, families=("gamma",))
    plain, _ = popularity.shrink(units, exposure, groups, families=("gamma",))
    assert prior.beta in (0.75, 1.0)
    err = np.median(np.abs(np.log(post / omega)))
    assert err < 0.8 * np.median(np.abs(np.log(plain / omega))), err
