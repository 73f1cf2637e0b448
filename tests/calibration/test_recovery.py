"""Recovery of the synthetic operator's truth by the calibration (PyBLP style: known truth, fixed seed).

Every comparison puts truth and estimate in the same canonical normalisation (the one the truth file
states): `canonical(...)` with the products of at least 30 machine-days of exposure as reference and
their units sold as weights. The "fails without its correction" cases show the tests can fail.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from autovend.calibration.normalise import Factors, canonical
from autovend.calibration.shocks import fit_shocks

MIN_EXPOSURE = 30  # machine-days


@pytest.fixture(scope="module")
def truth(synthetic_dirs):
    d = synthetic_dirs[1]
    return {
        "scalars": json.loads((d / "truth.json").read_text()),
        "products": pd.read_parquet(d / "products.parquet").set_index("sku_id"),
        "machines": pd.read_parquet(d / "machines.parquet").set_index("machine_id"),
        "pi": pd.read_parquet(d / "site_preference.parquet").pivot(
            index="site_type", columns="category_l1", values="pi"
        ),
        "gamma": pd.read_parquet(d / "subcategory.parquet").set_index("category_l2"),
        "daily": pd.read_parquet(d / "daily.parquet"),
    }


@pytest.fixture(scope="module")
def compared(synthetic_calibration, truth):
    """(estimate, truth) in the same canonical normalisation."""
    res = synthetic_calibration
    pop = res.popularity.set_index("sku_id")
    well = pop.index[pop["machine_days"] >= MIN_EXPOSURE]
    weights = pop["units"].astype(float)
    tp = truth["products"].loc[pop.index]
    est = Factors(
        omega=pop["omega"],
        gamma=res.subcategory.set_index("category_l2")["gamma"],
        pi=res.site_preference.pivot(index="site_type", columns="category_l1", values="pi"),
        kappa=res.machines.set_index("machine_id")["kappa"],
        products=pop[["category_l1", "category_l2"]],
        machines=res.machines.set_index("machine_id")["site_type"],
    )
    tru = Factors(
        omega=tp["omega"],
        gamma=truth["gamma"]["gamma"],
        pi=truth["pi"],
        kappa=truth["machines"]["kappa"],
        products=tp[["category_l1", "category_l2"]],
        machines=truth["machines"]["site_type"],
    )
    return canonical(est, well, weights), canonical(tru, well, weights), well


def test_popularity_ranks_products(compared):
    est, tru, well = compared
    rho = stats.spearmanr(est.omega[well], tru.omega[well])[0]
    assert len(well) > 1000
    assert rho >= 0.8, rho


@pytest.mark.parametrize(
    "name, tol",
    [
        pytest.param("u", 0.15, id="u"),
        pytest.param("x", 0.15, id="x"),
        pytest.param("e", 0.15, id="e"),
        pytest.param("r", 0.20, id="r"),
    ],
)
def test_scalars_recovered(synthetic_calibration, truth, name, tol):
    est, tru = getattr(synthetic_calibration.estimates, name), truth["scalars"][name]
    assert est == pytest.approx(tru, rel=tol), (name, est, tru)


def test_rho_recovered(synthetic_calibration, truth):
    assert abs(synthetic_calibration.estimates.rho - truth["scalars"]["rho"]) <= 0.05


def test_site_preference_and_subcategories_recovered(compared):
    est, tru, _ = compared
    np.testing.assert_allclose(est.pi.loc[tru.pi.index, tru.pi.columns], tru.pi, rtol=0.15)
    np.testing.assert_allclose(est.gamma.loc[tru.gamma.index], tru.gamma, rtol=0.15)


def realised_shock(truth) -> pd.Series:
    """Each machine's demand-weighted mean shock over its days: what its observed mean carries."""
    d = truth["daily"]
    return d.groupby("machine_id").apply(lambda g: g["expected_kept"].sum() / (g["expected_kept"] / g["xi"]).sum())


def test_machine_scales_recovered(synthetic_calibration, compared, truth):
    """kappa within 10% for machines with 60+ days of inventory records.

    A machine's kappa is pinned by its mean daily units over ~183 days, which carry its realised shocks
    (a lognormal of sd 0.56 with lag-one correlation 0.2: about 5% noise on a six-month mean). The
    truth's own value for that record is kappa times the machine's demand-weighted mean shock, and that
    is what is compared; the raw comparison is reported and only required to be unbiased.
    """
    est, tru, _ = compared
    m = synthetic_calibration.machines.set_index("machine_id")
    known = m.index[m["has_inventory"] & (m["n_days"] >= 60)]
    ratio = est.kappa[known] / tru.kappa[known]
    adjusted = ratio / realised_shock(truth)[known]
    assert len(known) == 67
    assert adjusted.sub(1).abs().max() <= 0.10, adjusted.describe()
    assert abs(np.median(ratio) - 1) <= 0.07, ratio.describe()


def test_sales_only_machine_scales_are_unbiased(synthetic_calibration, compared, truth):
    """Machines without shelf records: no stockout information, so only the centre is required."""
    est, tru, _ = compared
    m = synthetic_calibration.machines.set_index("machine_id")
    so = m.index[~m["has_inventory"]]
    ratio = est.kappa[so] / tru.kappa[so] / realised_shock(truth)[so]
    assert len(so) == 32
    assert abs(np.median(ratio) - 1) <= 0.2, ratio.describe()


def test_no_purchase_weights_recovered(synthetic_calibration, truth):
    m = synthetic_calibration.machines.set_index("machine_id")
    known = m.index[m["has_inventory"]]
    ratio = m.loc[known, "U"] / (truth["machines"].loc[known, "U"] * realised_shock(truth)[known])
    assert ratio.sub(1).abs().max() <= 0.12, ratio.describe()


# --- each estimator fails without its key correction -------------------------------------------------


def test_rho_without_the_attenuation_correction_fails(synthetic_calibration, truth):
    """The lag-one autocorrelation of daily counts is attenuated by Poisson noise."""
    naive = synthetic_calibration.estimates.rho_naive_counts
    assert abs(naive - truth["scalars"]["rho"]) > 0.05, naive


def test_u_from_the_loglog_slope_fails(synthetic_calibration, truth):
    """u built from the paper's log-log slope (which mixes days of low stock) is biased."""
    s = synthetic_calibration.estimates
    u_loglog = s.x * s.e_loglog / (1 - s.e_loglog)
    assert abs(u_loglog / truth["scalars"]["u"] - 1) > 0.15, u_loglog


def test_r_from_sales_without_censoring_correction_fails(synthetic_calibration, truth):
    """Sold-out shelves cap sales: their variance understates the shock's, so r comes out too high."""
    md = synthetic_calibration.diagnostics["machine_days"].dropna(subset=["expected"])
    md = md[
        md["machine_id"].isin(
            synthetic_calibration.machines.loc[synthetic_calibration.machines["has_inventory"], "machine_id"]
        )
    ]
    code = pd.factorize(md["machine_id"])[0]
    day = ((md["date"] - md["date"].min()).dt.days).to_numpy()
    scale = md["units"].sum() / md["expected"].sum()  # fit the sales level, ignore censoring
    mu = md["expected"].to_numpy() * scale
    fit = fit_shocks(md["units"].to_numpy(float), mu, mu, code, day, md["date"].dt.day_of_week.to_numpy(), min_days=28)
    assert abs(fit.r / truth["scalars"]["r"] - 1) > 0.20, fit.r


def test_unshrunk_popularity_fails_on_sparse_products(synthetic_calibration, compared):
    """On products with little exposure the raw rate is far off: shrinkage toward the subcategory helps.

    The raw omega is the split's estimate with only its weak prior (0.01 pseudo-units, which keeps an
    unsold product's omega just above 0 instead of at 0). Popularity is multiplicative, so recovery is
    judged on the log scale. On the embedded operator's 77 sparse products the raw rates' median
    absolute log error is 1.92 (a factor of 6.8) and 21% are within a factor of 2 of the truth; the
    shrunk ones do better on both (25% within a factor of 2). The gain is modest: since the weak prior
    replaced raw zeros the raw rates are less wrong than they were (the margin was once 10 points),
    and shrinking toward the subcategory overstates those products (the operator's reviews drop weak
    sellers fast). Ranked in the canonical normalisation, raw and shrunk rates order the sparse products
    alike (Spearman 0.42 both; against the truth's unnormalised omega it read 0.28 vs 0.19) - see
    test_no_popularity_prior_ranks_the_sparse_products_better_than_the_default.
    """
    est, tru, _ = compared
    pop = synthetic_calibration.popularity.set_index("sku_id")
    sparse = pop.index[(pop["machine_days"] > 0) & (pop["machine_days"] < MIN_EXPOSURE)]
    assert len(sparse) >= 20
    raw = (pop["omega_raw"] / pop["omega"] * est.omega)[sparse]  # same normalisation as est.omega
    with np.errstate(divide="ignore"):
        log_err_raw = np.abs(np.log(raw / tru.omega[sparse]))
    log_err_shrunk = np.abs(np.log(est.omega[sparse] / tru.omega[sparse]))
    within_raw = float((log_err_raw < np.log(2)).mean())
    within_shrunk = float((log_err_shrunk < np.log(2)).mean())
    assert np.median(log_err_raw) > np.log(4.0), np.median(log_err_raw)
    assert np.median(log_err_shrunk) < np.median(log_err_raw)
    assert within_shrunk > within_raw, (within_shrunk, within_raw)


def test_site_mix_without_stocking_correction_fails(synthetic_source, compared):
    """Reading each site type's drink/snack mix directly confounds site preference with stocking."""
    _, tru, _ = compared
    o = synthetic_source.orders
    o = o[o["status"] == "completed"].merge(synthetic_source.products[["sku_id", "category_l1"]], on="sku_id")
    o = o.merge(synthetic_source.machines[["machine_id", "site_type"]], on="machine_id")
    o = o[o["category_l1"].isin(tru.pi.columns)]
    mix = o.groupby(["site_type", "category_l1"])["qty"].sum().unstack()
    share = mix.div(mix.sum(axis=1), axis=0) / (mix.sum(axis=0) / mix.to_numpy().sum())
    naive = share.div(np.exp(np.log(share).mean(axis=1)), axis=0)
    ratio_naive = (naive["drinks"] / naive["snacks"]) / (tru.pi["drinks"] / tru.pi["snacks"])
    assert (ratio_naive.sub(1).abs() > 0.15).any(), ratio_naive


@pytest.fixture(scope="module")
def prior_ranks(synthetic_source, synthetic_calibration, compared):
    """Each popularity prior applied to the split's demand and exposure, in the canonical normalisation.

    Returns (omega by name: "default" = `shrink`, "exposure", "dropped", "raw"; the truth; the masks
    "sparse" (0 < machine-days < 30), "exposed", "well"; the exposure-aware and drop-aware fits). The dropped
    flags come from the product split's own cells (`choice_data` of the calibration's panel).
    """
    from autovend.calibration.choice import choice_data
    from autovend.calibration.config import load_calibration_config
    from autovend.calibration.drop_prior import drop_aware_shrink, dropped_products
    from autovend.calibration.panel import build_panel
    from autovend.calibration.popularity import exposure_aware_shrink, shrink
    from autovend.demand.settings import load_demand_settings
    from tests.conftest import PARAMS, SETTINGS

    est, tru, well = compared
    pop = synthetic_calibration.popularity.set_index("sku_id")
    panel = build_panel(synthetic_source, load_calibration_config(PARAMS))
    data = choice_data(panel, load_demand_settings(SETTINGS))
    flags = dropped_products(data.k, data.md_m[data.cell_md], data.md_d[data.cell_md], data.n_products)
    dropped = pd.Series(flags, index=panel.products["sku_id"]).reindex(pop.index).to_numpy()
    groups = pd.factorize(pop["category_l2"])[0]
    y, e = pop["demand"].to_numpy(float), pop["exposure"].to_numpy(float)
    exposure_omega, exposure_fit = exposure_aware_shrink(y, e, groups)
    dropped_omega, dropped_fit = drop_aware_shrink(y, e, groups, dropped)
    raw = {
        "default": shrink(y, e, groups)[0],
        "exposure": exposure_omega,
        "dropped": dropped_omega,
        "raw": pop["omega_raw"].to_numpy(),
    }
    weights = pop["units"].astype(float)
    omega = {
        name: canonical(dataclasses.replace(est, omega=pd.Series(o, index=pop.index)), well, weights).omega[pop.index]
        for name, o in raw.items()
    }
    md = pop["machine_days"].to_numpy()
    masks = {"sparse": (md > 0) & (md < MIN_EXPOSURE), "exposed": md > 0, "well": md >= MIN_EXPOSURE}
    return omega, tru.omega[pop.index], masks, exposure_fit, dropped_fit, dropped


def _spearman(omega: pd.Series, truth: pd.Series, mask: np.ndarray) -> float:
    return float(stats.spearmanr(omega[mask], truth[mask])[0])


def test_no_popularity_prior_ranks_the_sparse_products_better_than_the_default(prior_ranks):
    """Spearman(omega, truth) by prior, canonical normalisation (77 sparse / 1,298 exposed / 1,221 well exposed):

        prior                        sparse  exposed  well
        default (subcategory)        0.424   0.886    0.912
        exposure (beta = 1)          0.344   0.913    0.929
        dropped (lam = 2^-1.5)       0.387   0.897    0.922
        raw rates                    0.421   0.901    0.916

    Both priors that use the operator's behaviour rank the products as a whole better, and neither lifts
    the sparse ones: 72 of the 77 sold nothing, so all that ranks them is their exposure and their
    subcategory's prior (see the oracle test below). The exposure-aware prior ranks them worst: among
    products that sold nothing it rates the more exposed ones higher, the opposite of what their zero says.
    (Against the truth's own omega, without the canonical normalisation, the sparse Spearman reads
    0.185 / 0.166 / 0.179 / 0.278: there a product's rank across subcategories mixes two normalisations.)
    What both do improve on the sparse products is their level: median |log error| 1.13 for each against
    the default's 1.55 (raw rates 1.92), with 0.27-0.28 for all three over the exposed products.
    """
    omega, truth, masks, exposure_fit, dropped_fit, _ = prior_ranks
    rho = {name: {m: _spearman(o, truth, masks[m]) for m in masks} for name, o in omega.items()}
    assert (int(masks["sparse"].sum()), int(masks["exposed"].sum())) == (77, 1298)
    assert exposure_fit.beta == 1.0
    assert dropped_fit.lam == pytest.approx(2**-1.5)
    for name in ("exposure", "dropped"):
        assert rho[name]["exposed"] > rho["default"]["exposed"] + 0.01, rho
        assert rho[name]["well"] > rho["default"]["well"], rho
        assert rho[name]["sparse"] < rho["default"]["sparse"], rho  # the honest negative result
    assert abs(rho["raw"]["sparse"] - rho["default"]["sparse"]) < 0.02, rho
    sparse = masks["sparse"]
    level = {name: float(np.median(np.abs(np.log(o[sparse] / truth[sparse])))) for name, o in omega.items()}
    assert level["exposure"] < 0.8 * level["default"] and level["dropped"] < 0.8 * level["default"], level
    assert level["default"] < level["raw"], level


def test_even_the_true_popularity_as_prior_barely_ranks_sparse_products_better(prior_ranks, synthetic_calibration):
    """The ceiling: each sparse product's posterior mean under a prior that knows the truth.

    The prior is the true (canonical) popularity of the exposed products of its subcategory, as a discrete
    distribution; with its units and exposure that ranks the 77 sparse products at Spearman 0.447, against
    the fitted default's 0.424. A bootstrap over the 77 puts the sampling sd of that Spearman at about 0.10
    (seeded): differences of a few hundredths between priors on these products are noise.
    """
    omega, truth, masks, *_ = prior_ranks
    pop = synthetic_calibration.popularity.set_index("sku_id")
    sparse, exposed = masks["sparse"], masks["exposed"]
    t, y, e = truth.to_numpy(), pop["demand"].to_numpy(float), pop["exposure"].to_numpy(float)
    sub = pop["category_l2"].to_numpy()
    oracle = []
    for k in np.flatnonzero(sparse):
        support = t[exposed & (sub == sub[k]) & (t > 0)]
        log_w = y[k] * np.log(e[k] * support) - e[k] * support
        w = np.exp(log_w - log_w.max())
        oracle.append(float(np.sum(w * support) / np.sum(w)))
    rho_oracle = float(stats.spearmanr(oracle, t[sparse])[0])
    rho_default = _spearman(omega["default"], truth, sparse)
    assert rho_default < rho_oracle < rho_default + 0.05, (rho_default, rho_oracle)
    rng = np.random.default_rng(0)
    est, tr = omega["default"][sparse].to_numpy(), t[sparse]
    draws = [rng.integers(0, len(tr), len(tr)) for _ in range(400)]
    sd = float(np.std([stats.spearmanr(est[i], tr[i])[0] for i in draws]))
    assert 0.07 < sd < 0.13, sd
