"""Step 3, estimate: demand rates, their priors and variability, machine rates and margins of one day (`Estimates`).

Per machine and product, the attraction over the rolling window is units sold per exposure-day,
shrunk towards a prior; the machine's sales a day (over its stocked days) are then split among the
products it carries in proportion to attraction, since the products of one machine share its
customers. The prior is the machine's sales per exposure-day times a relative index of the
product, pooled over all machines (every sale is measured against its machine's level), shrunk to
its subcategory, and adjusted by a site-type x category factor: a product that sells well at one
machine is expected to sell at others of the same kind. Variability: var = mu + mu^2 / r with r
from the machine's daily totals (negative binomial).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.prices import price_fen_matrix
from autovend.agents.baseline.state import BoolArray, FloatArray, IntArray, Memory, State, Static
from autovend.sim.money import FEN_PER_CNY

MAX_DISPERSION = 50.0  # r above this is practically Poisson
MIN_DISPERSION_DAYS = 7  # fewer stocked days than this: the default r


@dataclass(frozen=True)
class Estimates:
    """Demand estimates of one day."""

    mu: FloatArray  # (M, K) units a day
    prior: FloatArray  # (M, K) the prior part (what a product is expected to sell at a machine untried)
    r: FloatArray  # (M,) dispersion
    machine_rate: FloatArray  # (M,) units a day
    gp_per_unit: FloatArray  # (M,)
    margin: FloatArray  # (M, K) at the incumbent multiplier, CNY
    cycle: IntArray  # (M,) service interval, days (the state's own array, chosen at each visit)


def dispersion(daily_totals: npt.ArrayLike, default: float) -> float:
    """r of a negative binomial fitted by moments to daily totals (mean^2 / (var - mean)), in [1, 50]."""
    x = np.asarray(daily_totals, dtype=float)
    if len(x) < MIN_DISPERSION_DAYS:
        return default
    mean = float(x.mean())
    var = float(x.var(ddof=1))
    if mean <= 0 or var <= mean:
        return MAX_DISPERSION
    return float(np.clip(mean * mean / (var - mean), 1.0, MAX_DISPERSION))


def pooled_index(
    cum_units: FloatArray, cum_expo: FloatArray, fallback: float, st: Static, cfg: BaselineConfig
) -> tuple[FloatArray, FloatArray]:
    """Relative index of each product (K,) and site-type x category factor of each machine-product (M, K).

    Each sale is measured against its machine's level (units per exposure-day over all history); the
    factor is shrunk to 1 with `site_prior_days`, the index to its subcategory's with `index_prior_days`
    and the subcategory's to 1 with `subcategory_prior_days`.
    """
    cu, ce = cum_units, cum_expo
    base_cum = np.where(ce.sum(axis=1) > 0, cu.sum(axis=1) / np.maximum(ce.sum(axis=1), 1e-9), fallback)
    rel_units = cu / np.maximum(base_cum, 1e-9)[:, None]  # expo * rel
    site_l1 = st.site[:, None] * st.n_l1 + st.l1[None, :]
    n_sl = st.n_site * st.n_l1
    f_num = np.bincount(site_l1.ravel(), weights=rel_units.ravel(), minlength=n_sl)
    f_den = np.bincount(site_l1.ravel(), weights=ce.ravel(), minlength=n_sl)
    f = ((f_num + cfg.site_prior_days) / (f_den + cfg.site_prior_days)).reshape(st.n_site, st.n_l1)
    fmk = f[st.site][:, st.l1]  # (M, K)
    adj_units = rel_units / fmk
    sub_num = np.bincount(st.l2, weights=adj_units.sum(axis=0), minlength=st.n_l2)
    sub_den = np.bincount(st.l2, weights=ce.sum(axis=0), minlength=st.n_l2)
    sub = (sub_num + cfg.subcategory_prior_days) / (sub_den + cfg.subcategory_prior_days)
    idx = (adj_units.sum(axis=0) + cfg.index_prior_days * sub[st.l2]) / (ce.sum(axis=0) + cfg.index_prior_days)
    return idx, fmk


def share_scale(attr: FloatArray, active: BoolArray, machine_rate: FloatArray) -> FloatArray:
    """Per machine, the factor that turns attractions into rates.

    With it the carried products' rates add up to the machine's rate (all products' when it carries none).
    """
    carried = np.where(active, attr, 0.0).sum(axis=1)
    return machine_rate / np.where(carried > 0, carried, np.maximum(attr.sum(axis=1), 1e-9))


def machine_dispersion(s: State, default: float) -> FloatArray:
    """r of each machine from its daily totals over the stocked days of the window."""
    totals = s.units_hist.sum(axis=2)  # (W, M)
    stocked = s.expo_hist.sum(axis=2) > 0
    return np.array([dispersion(totals[stocked[:, m], m], default) for m in range(totals.shape[1])])


def margins(s: State, st: Static, m_units: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Unit margins at the incumbent multipliers (M, K) and each machine's gross profit per unit sold (M,).

    Gross profit per unit is over the window; before a machine sells, the mean margin of its products.
    """
    M = s.shelf.shape[0]
    gp_window = s.gp_hist.sum(axis=0)
    price = price_fen_matrix(s.mult[s.price_group], st.ref_fen, st.band) / FEN_PER_CNY
    margin = price - st.cost[None, :]
    fallback_gp = np.array([margin[m, s.active[m]].mean() if s.active[m].any() else 0.0 for m in range(M)])
    gp_per_unit = np.where(m_units > 0, gp_window / np.maximum(m_units, 1), fallback_gp)
    return margin, gp_per_unit


def estimate(mem: Memory) -> Estimates:
    """Demand rates, priors, dispersion, machine rates and margins of today (see the module docstring)."""
    s, st, cfg = mem.s, mem.st, mem.cfg
    units = s.units_hist.sum(axis=0, dtype=np.float64)
    expo = s.expo_hist.sum(axis=0, dtype=np.float64)
    m_units = units.sum(axis=1)
    m_expo = expo.sum(axis=1)
    fallback = cfg.prior_units_per_machine_day / max(cfg.starter_skus, 1)
    base = np.where(m_expo > 0, m_units / np.maximum(m_expo, 1e-9), fallback)  # units per exposure-day
    idx, fmk = pooled_index(s.cum_units, s.cum_expo, fallback, st, cfg)
    prior_attr = base[:, None] * idx[None, :] * fmk
    n0 = cfg.prior_strength_days
    attr = (units + n0 * prior_attr) / (expo + n0)  # units per exposure-day, alone on a thin shelf
    days = (s.expo_hist.sum(axis=2) > 0).sum(axis=0)  # stocked days in the window, by machine
    machine_rate = np.where(days > 0, m_units / np.maximum(days, 1), cfg.prior_units_per_machine_day)
    # products share the machine's sales: rates are the machine rate split by relative attraction
    scale = share_scale(attr, s.active, machine_rate)
    mu = attr * scale[:, None]
    prior = prior_attr * scale[:, None]
    r = machine_dispersion(s, cfg.default_dispersion)
    margin, gp_per_unit = margins(s, st, m_units)
    return Estimates(mu, prior, r, machine_rate, gp_per_unit, margin, s.cycle)
