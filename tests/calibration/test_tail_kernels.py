"""The censored E-step compiled: Poisson tails as sums match pdtrc, and the estimates match numpy's path."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from autovend.calibration import censored, tail_kernels
from tests.calibration.test_censored import _censored_days

Q = np.arange(1.0, 61.0)
LAM = np.geomspace(1e-14, 500.0, 400)


def test_poisson_tail_sums_match_pdtrc_within_2_5e_13():
    got = np.array(
        [
            [tail_kernels.poisson_sf(q, lam, np.exp((q - 1) * np.log(lam) - lam - special.gammaln(q))) for lam in LAM]
            for q in Q
        ]
    )
    want = special.pdtrc(Q[:, None] - 1, LAM[None, :])
    normal = want >= 1e-290
    rel = np.abs(got[normal] - want[normal]) / want[normal]
    # P(D = q - 1) is the exp of a logarithm near -690 at worst: its argument's last bit is 1e-13 of the result
    assert rel.max() <= 2.5e-13
    assert np.all(got[~normal] < 1e-280)  # where pdtrc underflows (the moments floor it at 1e-300)
    # both ways of summing are taken: from P(D = q - 1) down (lam near or above q) and from P(D = q) up
    assert np.any(LAM[None, :] >= Q[:, None]) and np.any(want[normal] < 1e-100)
    assert tail_kernels.poisson_sf(1.0, 0.0, 0.0) == 0.0  # no demand: never sold out
    assert tail_kernels.poisson_sf(3.0, 1e6, 0.0) == 1.0  # P(D = 2) underflows: the tail is 1


def test_moment_sums_compiled_match_numpys_to_1e_13():
    rng = np.random.default_rng(4)
    n_md, per_day = 50, 7
    cmd = np.repeat(np.arange(n_md), per_day)
    cshare = rng.uniform(0.01, 0.5, len(cmd))
    cq = rng.integers(1, 25, len(cmd)).astype(float)
    s = np.exp(np.log(rng.uniform(0.1, 80.0, n_md))[:, None] + 0.6 * censored.SCALE_GRID[None, :])
    s[3] = 1e-13  # lam below the moments' floor, 1e-12: the tails taken at lam, the moments at the floor
    want = censored.moment_sums(cmd, cshare, cq, s)
    got = censored.moment_sums(cmd, cshare, cq, s, compiled=True)
    log_sf, tot_mean, tot_var, mean_c = got
    assert mean_c.shape == (len(cmd), len(censored.SCALE_GRID)) and log_sf.shape == s.shape
    np.testing.assert_allclose(mean_c, want[3], rtol=1e-13, atol=0)
    np.testing.assert_allclose(tot_mean, want[1], rtol=1e-13, atol=0)
    # the variance is a difference of moments near q^2: compared on that scale
    np.testing.assert_allclose(tot_var, want[2], rtol=0, atol=1e-13 * np.max(tot_mean**2))
    normal = want[0] > np.log(1e-290) * per_day
    np.testing.assert_allclose(log_sf[normal], want[0][normal], rtol=1e-13, atol=1e-13)
    assert np.all(log_sf[~normal] < np.log(1e-280))
    assert np.all(mean_c >= cq[:, None])  # sold out: demand at least the shelf
    bad = cmd.copy()
    bad[5] = n_md
    with pytest.raises(IndexError, match="out of range"):
        censored.moment_sums(bad, cshare, cq, s, compiled=True)


def test_a_long_days_tail_product_is_flushed_to_its_logarithm_in_time():
    # 900 sold-out cells in a machine-day, tails from 1e-6 to 0.3: their product (1e-470 and below) leaves the
    # floats twice or more, and six tails under 1e-100 add their own logarithms
    rng = np.random.default_rng(9)
    cmd = np.zeros(900, dtype=np.int64)
    cshare = rng.uniform(0.02, 0.1, len(cmd))
    cq = rng.integers(4, 9, len(cmd)).astype(float)
    cq[::150] = 90.0  # tails under 1e-100 at every node
    s = np.exp(np.log(12.0) + 0.2 * censored.SCALE_GRID[None, :])
    want = censored.moment_sums(cmd, cshare, cq, s)[0]
    got = censored.moment_sums(cmd, cshare, cq, s, compiled=True)[0]
    moderate = np.log(special.pdtrc(cq[cq < 90, None] - 1, s * cshare[cq < 90, None]))
    assert np.all(moderate > np.log(tail_kernels.TAIL_ALONE))  # these go into the product
    assert np.all(moderate.sum(axis=0) < 2 * np.log(tail_kernels.PROD_FLUSH))  # which is flushed twice or more
    assert np.all(special.pdtrc(cq[::150, None] - 1, s * cshare[::150, None]) < tail_kernels.TAIL_ALONE)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_day_scales_and_posterior_compiled_match_numpys():
    md, share, y, cens, q, n_md, log_mean = _censored_days(11, n_md=300)
    cens[md == 8], y[md == 8] = False, 0.0  # a day with nothing at all (the floor)
    y_unc = np.bincount(md, np.where(cens, 0.0, y), minlength=n_md)
    md_m = np.arange(n_md) // 30
    want = censored.day_scales(md, share, y_unc, cens, q, md_m)
    got = censored.day_scales(md, share, y_unc, cens, q, md_m, compiled=True)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert got[8] == want[8] == pytest.approx(1e-6)
    dhat, var_adjust = censored.posterior_impute(md, share, y, cens, q, n_md, log_mean, sd=0.4)
    c_dhat, c_var = censored.posterior_impute(md, share, y, cens, q, n_md, log_mean, sd=0.4, compiled=True)
    np.testing.assert_array_equal(c_dhat[~cens], y[~cens])
    np.testing.assert_allclose(c_dhat, dhat, rtol=1e-13, atol=0)
    np.testing.assert_allclose(c_var, var_adjust, rtol=1e-11, atol=1e-12)


def test_a_split_with_many_sold_out_cells_calibrates_to_the_same_estimates_compiled(synthetic_source, monkeypatch):
    """The embedded operator (32k sold-out cells a pass, under the threshold) forced onto the compiled E-step."""
    from autovend.calibration import split
    from autovend.calibration.calibrate import calibrate
    from autovend.calibration.config import load_calibration_config
    from autovend.demand.settings import load_demand_settings
    from tests.conftest import PARAMS, SETTINGS

    want = calibrate(synthetic_source, load_calibration_config(PARAMS), load_demand_settings(SETTINGS))
    calls = []
    kernel = tail_kernels.moment_sums

    def counted(*args):
        calls.append(len(args[0]))
        return kernel(*args)

    monkeypatch.setattr(tail_kernels, "moment_sums", counted)
    monkeypatch.setattr(split, "COMPILED_FROM_CENSORED", 0)
    got = calibrate(synthetic_source, load_calibration_config(PARAMS), load_demand_settings(SETTINGS))
    assert sum(calls) > 100_000  # the sold-out cells went through the compiled sums
    assert got.content_hash() == want.content_hash()
