"""The drop-aware popularity prior and the choice among the calibration's popularity priors."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.calibration import popularity
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.drop_prior import DROP_LAMBDA_GRID, drop_aware_shrink, dropped_products, popularity_by_prior


def test_dropped_products_are_those_gone_from_every_machine_before_its_end():
    """Machine 0 runs days 0-19, machine 1 days 0-9.

    Product 0 leaves machine 0 on day 9 (dropped); product 1 stays to day 19 (kept); product 2 leaves
    machine 0 on day 5 but stays on machine 1 to its last day (kept); product 3 is never on a shelf.
    """
    cells = [(0, 0, d) for d in range(10)] + [(1, 0, d) for d in range(20)]
    cells += [(2, 0, d) for d in range(6)] + [(2, 1, d) for d in range(10)]
    k, m, d = (np.array(c) for c in zip(*cells, strict=True))
    np.testing.assert_array_equal(dropped_products(k, m, d, 4), [True, False, False, False])
    assert not dropped_products(np.array([], int), np.array([], int), np.array([], int), 2).any()


def _simulated(lam: float, seed: int) -> tuple[np.ndarray, ...]:
    """Two subcategories of 1,500 products; a third are dropped, with Gamma(lam a, lam b) popularity."""
    rng = np.random.default_rng(seed)
    n = 3000
    groups = np.repeat([0, 1], n // 2)
    dropped = rng.random(n) < 1 / 3
    a, b = np.where(groups == 0, 2.0, 4.0), np.where(groups == 0, 4.0, 2.0)  # means 0.5 and 2
    mult = np.where(dropped, lam, 1.0)
    omega = rng.gamma(mult * a, 1.0 / (mult * b))
    exposure = np.exp(rng.uniform(np.log(1.0), np.log(50.0), n))
    return rng.poisson(omega * exposure).astype(float), exposure, groups, dropped, omega


@pytest.mark.parametrize("lam", [0.25, 1.0])
def test_drop_aware_prior_finds_the_variance_it_was_built_for(lam):
    """Dropped products drawn with lam 0.25 (four times the variance) or 1 (none): lam is found on the grid within
    one step (factor sqrt 2), and the subcategories' prior means are within 10% of 0.5 and 2."""
    units, exposure, groups, dropped, _ = _simulated(lam, seed=5)
    _, fit = drop_aware_shrink(units, exposure, groups, dropped)
    assert lam / 2**0.5 - 1e-9 <= fit.lam <= lam * 2**0.5 + 1e-9, fit.lam
    assert fit.priors[0].mean == pytest.approx(0.5, rel=0.1)
    assert fit.priors[1].mean == pytest.approx(2.0, rel=0.1)


def test_drop_aware_prior_beats_the_subcategory_prior_when_the_dropped_vary_more():
    """With lam 0.25 the drop-aware posterior means have the smaller mean squared error (what a posterior mean
    minimises): 0.186 against `shrink`'s 0.195 over all products, 0.253 against 0.266 over the dropped ones."""
    units, exposure, groups, dropped, omega = _simulated(0.25, seed=6)
    post, _ = drop_aware_shrink(units, exposure, groups, dropped)
    plain, _ = popularity.shrink(units, exposure, groups, families=("gamma",))
    for mask in (np.ones(len(omega), dtype=bool), dropped):
        err_post, err_plain = (float(np.mean((o - omega)[mask] ** 2)) for o in (post, plain))
        assert err_post < 0.97 * err_plain, (err_post, err_plain)


def test_drop_aware_prior_at_lam_one_is_the_gamma_subcategory_prior():
    """lam = 1 gives every product its subcategory's prior: `shrink` with Gamma priors, to rounding."""
    units, exposure, groups, dropped, _ = _simulated(1.0, seed=7)
    post, fit = drop_aware_shrink(units, exposure, groups, dropped, lams=(1.0,))
    plain, priors = popularity.shrink(units, exposure, groups, families=("gamma",))
    np.testing.assert_allclose(post, plain, rtol=1e-8)
    assert fit.loglik == pytest.approx(sum(p.loglik for p in priors.values()), rel=1e-10)
    assert 1.0 in DROP_LAMBDA_GRID


@pytest.mark.slow
def test_popularity_by_prior_dispatches_and_refuses_unknown_names():
    units, exposure, groups, dropped, _ = _simulated(1.0, seed=8)
    np.testing.assert_array_equal(
        popularity_by_prior("subcategory", units, exposure, groups)[0], popularity.shrink(units, exposure, groups)[0]
    )
    np.testing.assert_array_equal(
        popularity_by_prior("exposure", units, exposure, groups)[0],
        popularity.exposure_aware_shrink(units, exposure, groups)[0],
    )
    np.testing.assert_array_equal(
        popularity_by_prior("dropped", units, exposure, groups, dropped)[0],
        drop_aware_shrink(units, exposure, groups, dropped)[0],
    )
    with pytest.raises(ValueError, match="needs each product's dropped flag"):
        popularity_by_prior("dropped", units, exposure, groups)
    with pytest.raises(ValueError, match="unknown popularity prior 'flat'"):
        popularity_by_prior("flat", units, exposure, groups)


def test_default_popularity_prior_is_left_out_of_the_dumped_params():
    """The calibration writes its params into its scalars and the world: the default dumps as before the option."""
    assert "popularity_prior" not in CalibrationConfig().model_dump(mode="json")
    assert CalibrationConfig(popularity_prior="dropped").model_dump(mode="json")["popularity_prior"] == "dropped"
    again = CalibrationConfig.model_validate(CalibrationConfig(popularity_prior="exposure").model_dump(mode="json"))
    assert again.popularity_prior == "exposure"


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["exposure", "dropped"])
def test_calibration_uses_the_configured_popularity_prior(tmp_path, prior):
    """A small source (two machines, 40 days) calibrated with each non-default prior: every omega finite and
    positive and the prior recorded in the params. The drop-aware prior moves omega off the default's; the
    exposure-aware one, with this few products, picks beta = 0 (the default's prior) and leaves it in place."""
    from autovend.calibration.calibrate import calibrate
    from tests.calibration.conftest import small_source

    source = small_source(tmp_path, {"worksite/canteen": 2}, 2, 40, 800)
    default = calibrate(source).popularity.set_index("sku_id")["omega"]
    res = calibrate(source, CalibrationConfig(popularity_prior=prior))
    omega = res.popularity.set_index("sku_id")["omega"]
    assert res.estimates.params["popularity_prior"] == prior
    assert np.isfinite(omega).all() and (omega > 0).all()
    same = np.allclose(omega.to_numpy(), default.reindex(omega.index).to_numpy(), rtol=1e-6)
    assert same == (prior == "exposure")
