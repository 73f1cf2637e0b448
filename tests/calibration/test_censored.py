"""The product split's E-step: shared tail probabilities and block-wise posterior imputation change no value."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special, stats

from autovend.calibration import censored


def _censored_days(seed: int, n_md: int = 400, per_md: int = 6):
    """Machine-days of `per_md` cells each in shuffled order, a third of the cells sold out."""
    rng = np.random.default_rng(seed)
    md = rng.permutation(np.repeat(np.arange(n_md), per_md))
    share = rng.uniform(0.02, 0.4, len(md))  # each cell's share of its machine-day's attraction
    q = rng.integers(1, 6, len(md)).astype(float)
    cens = rng.random(len(md)) < 0.33
    y = np.where(cens, q, rng.poisson(3.0, len(md))).astype(float)
    log_mean = np.log(rng.uniform(5, 40, n_md))
    return md, share, y, cens, q, n_md, log_mean


def test_truncated_moments_share_tail_probabilities_without_changing_a_bit():
    q = np.array([1.0, 1.0, 2.0, 3.0, 7.0, 4.0])[:, None]
    lam = np.array([1e-14, 0.4, 2.5, 9.0, 3.0, 40.0])[:, None] * np.array([[1.0, 0.5, 2.0]])
    mean, var, sf = censored.truncated_moments(q, lam)
    np.testing.assert_array_equal(mean, censored.truncated_mean(q, lam))
    np.testing.assert_array_equal(var, censored.truncated_var(q, lam))
    np.testing.assert_array_equal(sf, special.pdtrc(q - 1, lam))  # taken at lam itself, also below 1e-12


def test_posterior_imputation_is_the_same_in_blocks_of_any_size(monkeypatch):
    args = _censored_days(5)
    dhat, var_adjust = censored.posterior_impute(*args, sd=0.4)
    cens, y = args[3], args[2]
    np.testing.assert_array_equal(dhat[~cens], y[~cens])  # uncensored cells keep their sales
    assert np.all(dhat[cens] >= y[cens])  # sold-out cells: demand at least the shelf
    assert np.all(var_adjust <= 0)
    for block in (33, 33 * 7, 33 * 50):  # one censored cell x 33 nodes per block and up
        monkeypatch.setattr(censored, "CHUNK_VALUES", block)
        got = censored.posterior_impute(*args, sd=0.4)
        np.testing.assert_array_equal(got[0], dhat)
        np.testing.assert_array_equal(got[1], var_adjust)


def test_day_scales_solve_the_censored_score_to_1e_14():
    # three machine-days of one machine: sales only; sales and two sold-out products; nothing at all
    md = np.array([0, 0, 1, 1, 1, 2])
    share = np.array([0.6, 0.4, 0.5, 0.3, 0.2, 1.0])
    cens = np.array([False, False, False, True, True, False])
    q = np.array([np.nan, np.nan, np.nan, 2.0, 1.0, np.nan])
    y = np.array([6.0, 4.0, 7.0, 2.0, 1.0, 0.0])
    y_unc = np.bincount(md, np.where(cens, 0.0, y), minlength=3)
    scale = censored.day_scales(md, share, y_unc, cens, q, np.zeros(3, dtype=np.int64))
    beta = 0.05 / (10.0 / 1.0)  # the prior's rate: 0.05 over the machine's median ratio of sales to share
    assert scale[0] == pytest.approx(10.0 / (1.0 + beta), rel=1e-14)  # no censoring: units / (share + beta)
    assert scale[2] == pytest.approx(1e-6, rel=1e-12)  # no sales, nothing sold out: the floor

    def score(s):  # the day's score with the sold-out products' hazards
        lam = s * share[3:5]
        hazard = stats.poisson.pmf(q[3:5] - 1, lam) / stats.poisson.sf(q[3:5] - 1, lam)
        return 7.0 / s - 0.5 + np.sum(share[3:5] * hazard) - beta

    root = optimize.brentq(score, 1.0, 100.0, xtol=1e-14, rtol=1e-15)
    assert scale[1] == pytest.approx(root, rel=1e-13)
    assert scale[1] > 7.0 / 0.5  # sold-out products raise the day's scale above its uncensored ratio


def test_day_scales_are_the_same_in_blocks_of_any_size(monkeypatch):
    md, share, y, cens, q, n_md, _ = _censored_days(11, n_md=300)
    cens[md == 7] = False  # a day with sales only, and one with nothing at all (the floor)
    cens[md == 8], y[md == 8] = False, 0.0
    y_unc = np.bincount(md, np.where(cens, 0.0, y), minlength=n_md)
    md_m = np.arange(n_md) // 30  # ten machines of 30 days
    monkeypatch.setattr(censored, "CHUNK_VALUES", 10**9)  # one block: every day's Newton steps together
    whole = censored.day_scales(md, share, y_unc, cens, q, md_m)
    assert whole[8] == pytest.approx(1e-6) and np.all(np.isfinite(whole)) and np.all(whole > 0)
    for block in (1, 5, 37, 400):  # a sold-out cell per block (so a day per block) and up
        monkeypatch.setattr(censored, "CHUNK_VALUES", block)
        np.testing.assert_array_equal(censored.day_scales(md, share, y_unc, cens, q, md_m), whole)


def test_tail_probabilities_from_one_pdtrc_match_pdtrc_at_every_depth():
    q = np.arange(1.0, 41.0)[:, None]
    lam = np.concatenate([[1e-12], np.geomspace(1e-6, 200.0, 300)])[None, :] * np.ones_like(q)
    tails = censored.tail_probabilities(q, lam, 3)
    for j, got in enumerate(tails):
        want = np.where(q - j >= 1, special.pdtrc(np.maximum(q - 1 - j, 0.0), lam), 1.0)
        np.testing.assert_array_equal(got[q[:, 0] - j < 1], 1.0)  # P(D >= 0) is exactly 1
        normal = want >= 1e-290  # the floors are 1e-300: below it only the underflow's direction matters
        # each deeper tail adds positive Poisson terms to pdtrc's P(D >= q): no cancellation
        np.testing.assert_allclose(got[normal], want[normal], rtol=1e-12, atol=0)
        assert np.all(got[~normal] < 1e-280)
    np.testing.assert_array_equal(tails[0], special.pdtrc(q - 1, lam))
    assert len(censored.tail_probabilities(q, lam, 1)) == 1


def test_deeper_tails_survive_where_the_first_underflows():
    # lam at its floor 1e-12 and q = 25: P(D >= 25) ~ 6e-326 underflows to 0, P(D >= 24) ~ 1.6e-312 is
    # subnormal and P(D >= 23) ~ 3.9e-299 normal; the deeper two are still their Poisson terms
    q, lam = np.array([25.0]), np.array([1e-12])
    p_q, p_q1, p_q2 = censored.tail_probabilities(q, lam, 3)
    assert p_q[0] == 0.0 == special.pdtrc(24.0, 1e-12)
    assert p_q1[0] == pytest.approx(special.pdtrc(23.0, 1e-12), rel=1e-9)  # subnormal: about 12 digits left
    assert p_q2[0] == pytest.approx(special.pdtrc(22.0, 1e-12), rel=1e-12)
    assert p_q2[0] == pytest.approx(np.exp(23 * np.log(1e-12) - 1e-12 - special.gammaln(24.0)), rel=1e-12)
    # the moments then fall back on their floors: E[D | D >= q] = q + lam, a finite variance
    mean, var, sf = censored.truncated_moments(q, lam)
    assert mean[0] == 25.0 + 1e-12
    assert np.isfinite(var[0]) and var[0] >= 0.0
    assert sf[0] == 0.0


def test_posterior_block_sums_each_node_column_as_a_bincount_per_node_would():
    md, share, y, cens, q, n_md, log_mean = _censored_days(7, n_md=60)
    rows = np.flatnonzero(cens)
    rows = rows[np.argsort(md[rows], kind="stable")]
    y_unc = np.bincount(md, np.where(cens, 0.0, y), minlength=n_md)
    p_unc = np.bincount(md, np.where(cens, 0.0, share), minlength=n_md)
    dhat, cond_var = censored._posterior_block(md[rows], share[rows], q[rows], y_unc, p_unc, log_mean, 0.4)
    # the E-step written out node by node: weights from the day's likelihood on the grid, then the moments
    cmd, grid = md[rows], censored.SCALE_GRID
    nodes = log_mean[:, None] + 0.4 * grid[None, :]
    s = np.exp(nodes)
    mean_c, var_c, sf = censored.truncated_moments(q[rows][:, None], s[cmd] * share[rows][:, None])
    loglik = y_unc[:, None] * nodes - p_unc[:, None] * s - 0.5 * grid[None, :] ** 2
    tot_mean, tot_var = np.zeros_like(s), np.zeros_like(s)
    for j in range(len(grid)):
        loglik[:, j] += np.bincount(cmd, np.log(np.maximum(sf[:, j], 1e-300)), minlength=n_md)
        tot_mean[:, j] = np.bincount(cmd, mean_c[:, j], minlength=n_md)
        tot_var[:, j] = np.bincount(cmd, var_c[:, j], minlength=n_md)
    w = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    m1 = np.sum(w * tot_mean, axis=1)
    np.testing.assert_array_equal(dhat, np.sum(w[cmd] * mean_c, axis=1))
    np.testing.assert_array_equal(cond_var, np.sum(w * (tot_var + tot_mean**2), axis=1) - m1**2)
    assert np.all(dhat >= q[rows])  # sold out: demand at least the shelf


@pytest.mark.parametrize(
    "q, lam",
    [
        pytest.param(1, 0.4, id="q1-low"),
        pytest.param(3, 2.5, id="q3-mid"),
        pytest.param(5, 9.0, id="q5-high"),
    ],
)
def test_truncated_poisson_moments_match_monte_carlo(q, lam):
    rng = np.random.default_rng(0)
    d = rng.poisson(lam, 2_000_000)
    d = d[d >= q]
    assert censored.truncated_mean(np.array([q]), np.array([lam]))[0] == pytest.approx(d.mean(), rel=5e-3)
    assert censored.truncated_var(np.array([q]), np.array([lam]))[0] == pytest.approx(d.var(), rel=2e-2)
