"""The compiled order-up-to levels are the numpy form of the baseline's `cycle_levels`, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.array_baseline.estimate import estimate
from autovend.agents.array_baseline.targets import carried_order, levels
from autovend.agents.baseline.targets import newsvendor_z, unsold_probability
from tests.agents.array_played import played_policy


def _plain_levels(est, n, m, k, days, safety, act):
    """The levels as numpy arrays over the carried slots (the form the kernels replace)."""
    st, cfg = est.st, est.cfg
    mu = est.slot_mu(n, m)
    r_i, s_i = np.nonzero(act)
    kc = k[r_i, s_i]
    mu_c = mu[r_i, s_i]
    r = est.r[n, m][r_i]
    life = st.life[kc].astype(float)
    days = np.asarray(days)
    lead = days.shape[:-2]
    d_c = np.broadcast_to(days, (*lead, *act.shape))[..., r_i, s_i]
    mean_h = mu_c * d_c
    var_h = mean_h + mean_h**2 / r
    mean_life = mu_c * life
    limit = np.zeros(act.shape)
    limit[r_i, s_i] = np.floor(cfg.sell_through_share * mean_life)
    need = np.zeros((*lead, *act.shape))
    var_life = mean_life + mean_life**2 / r
    stock0 = np.maximum(cfg.facing_units, mean_h)
    p_spoil = unsold_probability(stock0, mean_life, var_life)
    co = cfg.shelf_holding_per_unit_day * d_c + p_spoil * st.cost[kc]
    z = np.where(safety[r_i], newsvendor_z(est.margin(n[r_i], m[r_i], kc), co, cfg.z_max), 0.0)
    need[..., r_i, s_i] = mean_h + z * np.sqrt(var_h)
    return need, limit, mu


@pytest.fixture(scope="module")
def est():
    policy = played_policy(25)
    out = estimate(policy.book, policy.st, policy.config)
    out.scale = out.scale * np.geomspace(0.02, 40.0, out.scale.size).reshape(out.scale.shape)  # slow to fast
    return out


def _hexes(a):
    return [float(x).hex() for x in np.ravel(a)]


@pytest.mark.parametrize("shape", ["rows", "horizons"])
@pytest.mark.parametrize("safety", ["all", "none", "mixed"])
def test_the_levels_are_the_numpy_forms(est, shape, safety):
    N, M = est.base.shape
    n, m = np.repeat(np.arange(N), M), np.tile(np.arange(M), N)
    act, k, _, _ = carried_order(est, n, m)
    rng = np.random.default_rng(0)
    days = rng.integers(1, 12, (len(n), 1)) if shape == "rows" else np.arange(1, 8)[:, None, None]
    safe = {"all": np.ones(len(n), bool), "none": np.zeros(len(n), bool), "mixed": rng.random(len(n)) < 0.5}[safety]
    got = levels(est, n, m, k, days, safe, act)
    want = _plain_levels(est, n, m, k, days, safe, act)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and _hexes(g) == _hexes(w)
    need = got[0]
    assert act.sum() > 500 and (need[..., act] > 0).all()
    if safety != "none":  # safety stock above the mean somewhere, the mean alone (z = 0) elsewhere
        mean = est.slot_mu(n, m)[act] * np.broadcast_to(days, need.shape)[..., act]
        assert (need[..., act] > mean).any() and (need[..., act] == mean).any()
