"""The product split of eq. (3): omega, pi and gamma by MM, with censored demand imputed by EM.

Given a machine-day's total demand, eq. (3) splits it over the products on the shelf in proportion to
their attractions w = b * F**eta * min(1, q/phi) * (p/p_ref)**-eps * E (eq. 2). F**eta and kappa_m are
common to the machine-day and cancel, so the split identifies omega_k * pi_{site,g1} * gamma_{g2} up to
the rescalings of `normalise.canonical`. The maximum-likelihood estimate is found by block
minorise-maximise updates (Hunter & Lange 2004), each of which is one of the paper's definitions:
- omega_k = units of k / its exposure, the exposure being the machine-days offering k weighted by the
  machine-day's sales level and k's share of the shelf's attraction;
- pi_{site,g1} = units of g1 at the site type / units of g1 expected from the products its machines
  actually offered (so stocking choices are not read as site effects);
- gamma_{g2} = realised units of g2 / units of g2 predicted on the real shelves.
Sales are min(demand, shelf). A product that sold out (units = opening shelf) is censored: its demand is
imputed as E[D | D >= q] under Poisson(lambda), lambda its share of the machine-day's demand scale,
the scale being estimated from the day's uncensored products (so it carries the day's shock). The MM
fit (`autovend.calibration.mm`: a weak prior keeps every omega finite, the flat rescalings are removed,
SQUAREM accelerates) and the imputation alternate (EM) for a fixed number of `em_rounds` rounds; each MM
loop runs to its fixed point (no parameter moves by more than `tol`, relative, in a sweep), so the
result does not depend on where a loose stopping rule happened to cut the iterations (1-ulp differences
between CPUs' math kernels would otherwise move it by up to 1e-4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.calibration.censored import bincount, day_scales, posterior_impute, truncated_mean, truncated_var
from autovend.calibration.mm import Params, SplitProblem, solve
from autovend.calibration.panel import Panel
from autovend.demand.environment import environment_multiplier
from autovend.demand.settings import DemandSettings


@dataclass(frozen=True)
class ChoiceData:
    """Cells of the machine-days used for the split, with their fixed attraction factors."""

    cell_md: np.ndarray  # machine-day code of each cell
    k: np.ndarray  # product code
    pig: np.ndarray  # site type x category code: site * len(cats_l1) + category_l1 (pi's flat index)
    g2_of_k: np.ndarray  # (products,) category_l2 code of each product
    g1_of_g2: np.ndarray  # (subcategories,) category code of each subcategory with cells (0 for the others)
    a: np.ndarray  # min(1, q/phi) * price factor * E
    y: np.ndarray  # units sold
    q: np.ndarray  # opening shelf (nan unknown)
    censored: np.ndarray
    md_m: np.ndarray  # machine code of each machine-day
    md_d: np.ndarray  # day code of each machine-day
    sites: list[str]
    cats_l1: list[str]
    cats_l2: list[str]
    n_products: int
    # on shelves estimated from sales (`availability`), each cell's P(ON) (`a` includes it) and P(ON) given the day's
    # own sales left out, for the machine-level fits (u, scales, shocks) whose outcome is that day's total; None
    # where shelves are known
    avail: np.ndarray | None = None
    avail_loo: np.ndarray | None = None

    @property
    def g2(self) -> np.ndarray:
        """category_l2 code of each cell's product (computed: the cells hold the product code only)."""
        return self.g2_of_k[self.k]

    @property
    def site(self) -> np.ndarray:
        """Site-type code of each cell's machine (computed: the cells hold `pig` only)."""
        return self.pig // len(self.cats_l1)

    @property
    def g1(self) -> np.ndarray:
        """category_l1 code of each cell's product (computed)."""
        return self.pig % len(self.cats_l1)


def split_codes(
    site: np.ndarray, g1: np.ndarray, g2: np.ndarray, n_cats_l1: int, n_cats_l2: int
) -> tuple[np.ndarray, np.ndarray]:
    """(`pig`, `g1_of_g2`) of `ChoiceData` from per-cell site, category and subcategory codes."""
    g1_of_g2 = np.zeros(n_cats_l2, dtype=np.int64)
    g1_of_g2[g2] = g1
    return np.asarray(site, dtype=np.int64) * n_cats_l1 + g1, g1_of_g2


@dataclass(frozen=True)
class ChoiceFit:
    """Estimates of the split, with the imputed demand per product and per machine-day (not per cell: memory)."""

    omega: np.ndarray  # (K,) maximum-likelihood popularity (0 for unexposed or unsold products)
    pi: np.ndarray  # (sites, categories)
    gamma: np.ndarray  # (subcategories,)
    units: np.ndarray  # (K,) imputed demand per product
    exposure: np.ndarray  # (K,) exposure: expected demand per unit of omega
    machine_days: np.ndarray  # (K,) machine-days offering the product
    loglik: float  # of the split at the estimate (the imputed demand of the last E-step)
    iterations: int
    converged: bool  # every MM loop stopped on the tolerance rather than on the iteration cap
    md_demand: np.ndarray  # imputed demand total per machine-day
    md_var_adjust: np.ndarray  # add to mu for the non-shock variance of that total (see `shocks`)


def cell_factors(panel: Panel, settings: DemandSettings, cells: pd.DataFrame) -> np.ndarray:
    """min(1, q/phi) * (p/p_ref)**-eps * E for cells (q unknown: facing 1; weather missing: neutral)."""
    return _factors(panel, settings, _environment_table(panel, settings), cells)


def _environment_table(panel: Panel, settings: DemandSettings) -> np.ndarray:
    """E of eq. (2) by day, site type (sorted) and category (sorted)."""
    sites = np.unique(panel.machines["site_type"].to_numpy())
    cats = np.unique(panel.products["category_l1"].to_numpy())
    env_table = np.empty((panel.n_days, len(sites), len(cats)))
    days = panel.days
    for i in range(panel.n_days):
        t = days["t_max_c"].iat[i]
        p = days["precip_mm"].iat[i]
        env_table[i] = environment_multiplier(
            settings.environment,
            sites,
            cats,
            None if pd.isna(t) else float(t),
            None if pd.isna(p) else float(p),
            days["day_type"].iat[i],
        )
    return env_table


def _factors(
    panel: Panel, settings: DemandSettings, env_table: np.ndarray, cells: pd.DataFrame, avail: str = "avail"
) -> np.ndarray:
    """`cell_factors` given the environment table, times the cells' column `avail` (P(ON)) when they have it."""
    m = cells["m"].to_numpy()
    k = cells["k"].to_numpy()
    d = cells["d"].to_numpy()
    q = cells["q"].to_numpy(dtype=float)
    facing = np.where(np.isnan(q), 1.0, np.minimum(1.0, q / settings.phi))
    site_types = panel.machines["site_type"].to_numpy()
    eps = settings.elasticity_of(site_types)[m]
    ref = panel.products["ref_price"].to_numpy(dtype=float)[k]
    ratio = cells["price"].to_numpy(dtype=float) / ref
    price = np.power(np.where(ratio > 0, ratio, 1.0), -eps)
    site_code = np.unique(site_types, return_inverse=True)[1]
    cat_code = np.unique(panel.products["category_l1"].to_numpy(), return_inverse=True)[1]
    env = env_table[d, site_code[m], cat_code[k]]
    out = facing * price * env
    if avail in cells:
        out *= cells[avail].to_numpy(dtype=float)
    return out


FACTOR_BLOCK = 1 << 20  # cells whose factors `choice_data` computes at once (a dozen arrays of 8 MB)


def choice_data(panel: Panel, settings: DemandSettings, machines: np.ndarray | None = None) -> ChoiceData:
    """Collect the cells of the given machines (default: those with known shelves, else all).

    The cells' columns are taken one at a time and their factors computed in blocks, so besides the
    ChoiceData itself only a few values a cell are held (a panel may hold tens of millions of cells).
    """
    cells = panel.cells
    if machines is None:
        known_m = panel.machines.index[panel.machines["has_inventory"]].to_numpy()
        machines = known_m if len(known_m) else panel.machines.index.to_numpy()
    has_inv = panel.machines["has_inventory"].to_numpy()
    # the machines' cells; for machines with inventory, only days with known shelves
    m_all = cells["m"].to_numpy()
    rows = np.flatnonzero(np.isin(m_all, machines) & (~has_inv[m_all] | cells["known"].to_numpy()))
    m = m_all[rows]
    md_key = m.astype(np.int64) * (panel.n_days + 1) + cells["d"].to_numpy()[rows]
    uniq, cell_md = np.unique(md_key, return_inverse=True)
    del md_key
    site_types = panel.machines["site_type"].to_numpy()
    sites = sorted(set(site_types[np.unique(m)]))
    cats1 = sorted(panel.products["category_l1"].unique())
    cats2 = sorted(panel.products["category_l2"].unique())
    # codes per machine and per product, gathered per cell (never a text value per cell)
    site_of_m = pd.Series(np.arange(len(sites)), index=sites).reindex(site_types).fillna(-1).to_numpy(np.int64)
    g1_of_k = pd.Series(np.arange(len(cats1)), index=cats1).reindex(panel.products["category_l1"]).to_numpy(np.int64)
    g2_of_k = pd.Series(np.arange(len(cats2)), index=cats2).reindex(panel.products["category_l2"]).to_numpy(np.int64)
    k = cells["k"].to_numpy()[rows].astype(np.int64)  # int64 codes for the hot loops (numpy takes intp indices)
    pig, g1_of_g2 = split_codes(site_of_m[m], g1_of_k[k], g2_of_k[k], len(cats1), len(cats2))
    env_table = _environment_table(panel, settings)
    a = np.empty(len(rows))
    estimated = "avail" in cells  # shelves estimated from sales: P(ON) weighs each cell
    columns = ("m", "k", "d", "q", "price", "avail") if estimated else ("m", "k", "d", "q", "price")
    for lo in range(0, len(rows), FACTOR_BLOCK):
        part = rows[lo : lo + FACTOR_BLOCK]
        block = pd.DataFrame({c: cells[c].to_numpy()[part] for c in columns}, copy=False)
        a[lo : lo + len(part)] = _factors(panel, settings, env_table, block)
    return ChoiceData(
        cell_md=cell_md,
        k=k,
        pig=pig,
        g2_of_k=g2_of_k,
        g1_of_g2=g1_of_g2,
        a=a,
        y=cells["units"].to_numpy()[rows].astype(float),
        q=cells["q"].to_numpy(dtype=float)[rows],
        censored=cells["censored"].to_numpy(dtype=bool)[rows],
        md_m=(uniq // (panel.n_days + 1)).astype(np.int64),
        md_d=(uniq % (panel.n_days + 1)).astype(np.int64),
        sites=sites,
        cats_l1=cats1,
        cats_l2=cats2,
        n_products=panel.n_products,
        avail=cells["avail"].to_numpy(dtype=float)[rows] if estimated else None,
        avail_loo=cells["avail_loo"].to_numpy(dtype=float)[rows] if estimated else None,
    )


def _attraction(data: ChoiceData, omega: np.ndarray, pi: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """v = omega_k * pi_{site,g1} * gamma_{g2} * a of every cell, multiplied in that order (one new array)."""
    v = omega[data.k]
    v *= pi.reshape(-1)[data.pig]
    v *= gamma[data.g2_of_k][data.k]
    v *= data.a
    return v


def _positive_or_one(x: np.ndarray) -> np.ndarray:
    """x with every value that is not positive set to 1, in place (as np.where(x > 0, x, 1.0))."""
    x[~(x > 0)] = 1.0
    return x


def fit_choice(
    data: ChoiceData,
    *,
    em_rounds: int = 4,
    max_iter: int = 2000,
    tol: float = 1e-12,
    omega_fixed: np.ndarray | None = None,
    impute: bool = True,
    scale_prior: tuple[np.ndarray, float] | None = None,
    pseudo_units: float = 0.01,
    start: Params | None = None,
) -> ChoiceFit:
    """Fit omega, pi, gamma by MM with EM imputation of censored demand (module docstring).

    `pseudo_units` a: each product's likelihood gets a pseudo-observation of a units per a units of
    exposure at popularity 1 (a Gamma(1 + a, a) prior on omega): the maximum-likelihood split does not
    exist for a product that sold on every machine-day it was offered while nothing else did (its omega
    runs to infinity), and with a = 0.01 a product with n units moves by about 0.01 / n.

    With `omega_fixed`, only pi and gamma are updated (used after empirical-Bayes shrinkage of omega).
    `start` (without `omega_fixed`): where the MM starts; it runs to the same fixed point from anywhere.
    `impute=False` treats censored sales as demand (the uncorrected estimator, for comparison).
    `scale_prior=(log_mean, sd)` gives each machine-day's demand scale a log-normal prior (the
    structural expected demand and the shock's sigma); the E-step then integrates over the scale's
    posterior instead of plugging in its maximum-likelihood value (see `posterior_impute`).
    """
    K = data.n_products
    n_md = len(data.md_m)
    S, C1, C2 = len(data.sites), len(data.cats_l1), len(data.cats_l2)
    omega = np.ones(K) if omega_fixed is None else omega_fixed.astype(float).copy()
    pi = np.ones((S, C1))
    gamma = np.ones(C2)
    if start is not None and omega_fixed is None and start.pi.shape == (S, C1) and len(start.gamma) == C2:
        omega, pi, gamma = start.omega.astype(float).copy(), start.pi.copy(), start.gamma.copy()
    md, k = data.cell_md, data.k
    y = data.y  # read only
    dhat = y.copy()
    cens = data.censored & ~np.isnan(data.q) & impute
    it_total = 0
    all_converged = True
    var_adjust = np.zeros(n_md)
    share = np.empty(0)

    for _round in range(em_rounds + 1 if impute else 1):
        problem = SplitProblem(
            md=md,
            k=k,
            pig=data.pig,
            g2_of_k=data.g2_of_k,
            a=data.a,
            demand=dhat,
            n_md=n_md,
            n_products=K,
            g1_of_g2=data.g1_of_g2,
            pseudo_units=pseudo_units,
            update_omega=omega_fixed is None,
        )
        fitted, sweeps, converged = solve(problem, Params(omega, pi, gamma), tol=tol, max_iter=max_iter)
        del problem  # its per-cell scratch goes before the E-step's
        omega, pi, gamma = fitted.omega, fitted.pi, fitted.gamma
        it_total += sweeps
        all_converged &= converged
        if not impute or not np.any(cens):
            break
        dhat = np.empty(0)  # the E-step makes the next round's demand from y: this one can go now
        share = _attraction(data, omega, pi, gamma)
        share /= _positive_or_one(bincount(md, share, n_md)[md])  # v / V, in place
        if scale_prior is not None:
            dhat, var_adjust = posterior_impute(md, share, y, cens, data.q, n_md, *scale_prior)
            continue
        # E-step: the machine-day's demand scale by censored-Poisson ML, then E[D | D >= q]
        y_unc = bincount(md, np.where(cens, 0.0, y), n_md)
        scale = day_scales(md, share, y_unc, cens, data.q, data.md_m)
        ci = np.flatnonzero(cens)
        c_md, c_share, c_q = md[ci], share[ci], data.q[ci]
        lam = scale[c_md] * c_share
        dhat = y.copy()
        dhat[ci] = truncated_mean(c_q, lam)
        # corrections for the shock's variance (see `shocks`): the conditional variance the imputation
        # removes, and the extra noise the estimated scale passes from uncensored sales to the total
        var_cens = bincount(c_md, truncated_var(c_q, lam), n_md)
        delta = 0.01
        scale_b = day_scales(md, share, y_unc * (1 + delta), cens, data.q, data.md_m)
        extra = bincount(c_md, truncated_mean(c_q, scale_b[c_md] * c_share), n_md)
        extra -= bincount(c_md, dhat[ci], n_md)
        g_md = np.where(y_unc > 0, 1.0 + extra / (delta * np.maximum(y_unc, 1e-12)), 1.0)
        var_adjust = (g_md**2 - 1.0) * y_unc - var_cens
    share = np.empty(0)  # the last E-step's per-cell shares are not needed below

    v = _attraction(data, omega, pi, gamma)
    V = bincount(md, v, n_md)
    pos = (dhat > 0) & (v > 0)
    loglik = float(np.sum(dhat[pos] * np.log(v[pos] / V[md[pos]])))
    del pos
    # each cell's expected demand, total[md] * v / V[md], then per unit of omega: the exposure
    ex = bincount(md, dhat, n_md)[md]
    ex *= v
    ex /= _positive_or_one(V[md])
    ex /= _positive_or_one(omega[k])
    exposure = bincount(k, ex, K)
    del ex, v
    # products whose MLE omega is 0 still have exposure: recompute their share with omega = 1
    zero = omega[k] == 0
    if np.any(zero):
        pig = pi.reshape(-1)[data.pig]
        gam = gamma[data.g2_of_k][k]
        v1 = pig * gam * data.a
        V = bincount(md, omega[k] * pig * gam * data.a, n_md)
        tot = bincount(md, dhat, n_md)
        ex0 = tot[md] * v1 / np.where(V[md] > 0, V[md] + v1, 1.0)
        exposure += bincount(k, np.where(zero, ex0, 0.0), K)
    del zero
    return ChoiceFit(
        omega=omega,
        pi=pi,
        gamma=gamma,
        units=bincount(k, dhat, K),
        exposure=exposure,
        machine_days=bincount(k, np.ones(len(k)), K),
        loglik=loglik,
        iterations=it_total,
        converged=all_converged,
        md_demand=bincount(md, dhat, n_md),
        md_var_adjust=var_adjust,
    )
