"""The structural fits of one calibration pass: the product split, reference shelves, u, machine scales and shocks.

`product_split` fits omega, pi and gamma (with empirical-Bayes shrinkage of omega); `fit_structure` takes a split to
the reference shelves R_m, the no-purchase weight u, the machine scales and the shock parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.choice import ChoiceData, ChoiceFit, choice_data, fit_choice
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.drop_prior import dropped_products, popularity_by_prior
from autovend.calibration.mm import Params
from autovend.calibration.panel import Panel
from autovend.calibration.popularity import Prior
from autovend.calibration.scale import sales_only_scales
from autovend.calibration.shocks import fit_shocks
from autovend.calibration.u_estimate import NoPurchase, no_purchase
from autovend.calibration.unseen import pair_exposure, unseen_corrected
from autovend.demand import kernel
from autovend.demand.settings import DemandSettings
from autovend.errors import InsufficientDataError


@dataclass(frozen=True)
class Fits:
    """The product split: the maximum-likelihood fit, the fit given the shrunk omega, and that omega."""

    panel: Panel
    data: ChoiceData
    raw: ChoiceFit
    final: ChoiceFit
    omega: np.ndarray
    priors: dict[int, Prior]  # the popularity prior of each subcategory code (see `popularity.shrink`)


def product_split(
    panel: Panel,
    settings: DemandSettings,
    config: CalibrationConfig,
    scale_prior: tuple[np.ndarray, float] | None = None,
    data: ChoiceData | None = None,
    start: Params | None = None,
) -> Fits:
    """Fit omega, pi and gamma (EM for censored demand), shrink omega, and refit pi and gamma given it.

    `data`: the panel's `choice_data` when the caller already has it (both calibration passes share one).
    `start`: where the maximum-likelihood fit's MM starts (it runs to its fixed point from anywhere).
    """
    data = choice_data(panel, settings) if data is None else data
    if len(data.k) == 0:
        raise InsufficientDataError(
            "product popularity needs machine-days with products on the shelf; the panel has none"
        )
    raw = fit_choice(
        data,
        em_rounds=config.em_rounds,
        max_iter=config.mm_iterations,
        tol=config.mm_tolerance,
        scale_prior=scale_prior,
        pseudo_units=config.mm_pseudo_units,
        start=start,
    )
    g2_all = (
        pd.Series(np.arange(len(data.cats_l2)), index=data.cats_l2).reindex(panel.products["category_l2"]).to_numpy()
    )
    dropped = (
        dropped_products(data.k, data.md_m[data.cell_md], data.md_d[data.cell_md], data.n_products)
        if config.popularity_prior == "dropped"
        else None
    )
    exposure = raw.exposure
    if data.avail is not None:  # shelves from sales alone: the pairs that never sold are unseen (`unseen`)
        pair_k, pair_e = pair_exposure(data, raw)
        _, exposure = unseen_corrected(raw.units, pair_k, pair_e, config.mm_pseudo_units)
    omega, priors = popularity_by_prior(config.popularity_prior, raw.units, exposure, g2_all, dropped)
    final = fit_choice(
        data,
        em_rounds=config.em_rounds,
        max_iter=config.mm_iterations,
        tol=config.mm_tolerance,
        omega_fixed=omega,
        scale_prior=scale_prior,
    )
    return Fits(panel=panel, data=data, raw=raw, final=final, omega=omega, priors=priors)


@dataclass(frozen=True)
class _Shelves:
    """Machine-day attractions (kappa = 1) of the cells in the product split."""

    md_m: np.ndarray
    md_d: np.ndarray
    W_act: np.ndarray  # with prices and environment: what eq. (3) saw
    W_real: np.ndarray  # at reference prices and neutral weather: for x
    sales: np.ndarray
    typical_fill: float
    # for the machine-level fits (u, scales, shocks), whose outcome is the day's total: on shelves estimated from
    # sales, with P(ON) given the day's own sales left out (else the same arrays as W_act and W_real)
    W_fit: np.ndarray
    W_real_fit: np.ndarray


def _base_attraction_hat(panel: Panel, fits: Fits, notes: list[str]) -> tuple[np.ndarray, pd.DataFrame, pd.Series]:
    """b_hat = pi * gamma * omega for every machine and product; site types unseen in the split get pi = 1."""
    data, fin = fits.data, fits.final
    site_types = panel.machines["site_type"].to_numpy()
    pi_tab = pd.DataFrame(fin.pi, index=data.sites, columns=data.cats_l1)
    missing = sorted(set(site_types) - set(data.sites))
    if missing:
        notes.append(f"site types without shelves in the product split get a neutral site preference: {missing}")
        for s in missing:
            pi_tab.loc[s] = 1.0
    gamma = pd.Series(fin.gamma, index=data.cats_l2)
    prod = panel.products
    b_hat = (
        pi_tab.reindex(index=site_types, columns=prod["category_l1"]).to_numpy()
        * (gamma.reindex(prod["category_l2"]).to_numpy() * fits.omega)[None, :]
    )
    return b_hat, pi_tab, gamma


def _shelves(panel: Panel, data: ChoiceData, b_hat: np.ndarray, settings: DemandSettings) -> _Shelves:
    """Real-shelf attractions per machine-day (unknown fill: the typical known fill)."""
    md_m, md_d = data.md_m, data.md_d
    cell_b = b_hat[md_m[data.cell_md], data.k]
    facing = np.where(np.isnan(data.q), 1.0, np.minimum(1.0, data.q / settings.phi))
    fill = panel.machine_days.set_index(["m", "d"])["fill"].reindex(pd.MultiIndex.from_arrays([md_m, md_d])).to_numpy()
    known = fill[~np.isnan(fill)]
    typical = float(np.median(known)) if len(known) else 1.0
    fill = np.where(np.isnan(fill), typical, fill) ** settings.eta
    n = len(md_m)
    W_act = fill * np.bincount(data.cell_md, weights=cell_b * data.a, minlength=n)
    W_real = fill * np.bincount(data.cell_md, weights=cell_b * facing, minlength=n)
    W_fit, W_real_fit = W_act, W_real
    if data.avail is not None and data.avail_loo is not None:  # shelves estimated from sales (`availability`)
        W_real = fill * np.bincount(data.cell_md, weights=cell_b * facing * data.avail, minlength=n)
        loo = data.avail_loo / data.avail  # every kept cell has P(ON) > 0
        W_fit = fill * np.bincount(data.cell_md, weights=cell_b * data.a * loo, minlength=n)
        W_real_fit = fill * np.bincount(data.cell_md, weights=cell_b * facing * data.avail_loo, minlength=n)
    return _Shelves(
        md_m=md_m,
        md_d=md_d,
        W_act=W_act,
        W_real=W_real,
        sales=np.bincount(data.cell_md, weights=data.y, minlength=n),
        typical_fill=typical,
        W_fit=W_fit,
        W_real_fit=W_real_fit,
    )


@dataclass(frozen=True)
class Structure:
    """Everything estimated from one product split: b_hat, shelves, u, scales and shocks."""

    fits: Fits
    b_hat: np.ndarray
    pi_tab: pd.DataFrame
    gamma: pd.Series
    R_hat: np.ndarray
    shelves: _Shelves
    np_fit: NoPurchase
    c: np.ndarray
    c_fit: pd.Series
    sales_only: Any
    demand_ratio: float
    mu: np.ndarray  # expected demand per machine-day of the split, no shock
    shocks: Any
    u_fallback_reason: str | None  # why the paper's u was used (None: u estimated)
    shock_days: pd.Series  # days per machine (code) given to the shock fit


def fit_structure(
    panel: Panel, fits: Fits, settings: DemandSettings, config: CalibrationConfig, notes: list[str]
) -> Structure:
    """Given the product split: reference shelves, u, machine scales and the shock parameters."""
    imp = fits.raw  # imputed demand comes from the maximum-likelihood split (shrunk omega is for prediction)
    M = panel.n_machines
    b_hat, pi_tab, gamma = _base_attraction_hat(panel, fits, notes)
    cap = panel.machines["capacity"].to_numpy(dtype=float)
    R_hat = np.array([kernel.reference_shelf(b_hat[m], int(round(cap[m])), settings.phi)[1] for m in range(M)])
    sh = _shelves(panel, fits.data, b_hat, settings)
    depletion = fits.data.avail is not None  # shelves estimated from sales alone
    np_fit, u_fallback_reason = no_purchase(
        sh.W_fit, sh.W_real_fit, sh.md_m, sh.md_d, imp.md_demand, R_hat, config, notes, depletion=depletion
    )
    u = np_fit.u
    # machine scales: U_m = c_m from the structural fit, else from sales on the sales-rule shelves
    demand_ratio = float(imp.md_demand.sum() / max(sh.sales.sum(), 1e-12))
    c = np.full(M, np.nan)
    c_fit = np_fit.c
    c[c_fit.index.to_numpy(dtype=int)] = c_fit.to_numpy()
    so = sales_only_scales(
        panel,
        settings,
        b_hat,
        R_hat,
        u,
        sh.typical_fill,
        pd.Series(sh.W_act, index=pd.MultiIndex.from_arrays([sh.md_m, sh.md_d])),
        c_fit,
        demand_ratio,
        np.flatnonzero(np.isnan(c)),
    )
    c[so.c.index.to_numpy(dtype=int)] = so.c.to_numpy()
    # shocks, on the machines of the structural fit (all machines when none has known shelves)
    R_md = R_hat[sh.md_m]
    W_model = sh.W_fit if np_fit.theta == 1.0 else R_md * (sh.W_fit / R_md) ** np_fit.theta  # `u_profile`
    W_model = W_model * np_fit.level
    mu = np.nan_to_num(c)[sh.md_m] * W_model / (u * R_md + W_model)
    in_fit = np.isin(sh.md_m, c_fit.index.to_numpy()) if len(c_fit) else np.isfinite(mu)
    weekday = panel.days["weekday"].to_numpy()
    shocks = fit_shocks(
        imp.md_demand[in_fit],
        mu[in_fit],
        (mu + imp.md_var_adjust)[in_fit],
        sh.md_m[in_fit],
        sh.md_d[in_fit],
        weekday[sh.md_d][in_fit],
        min_days=config.min_machine_days_shock,
    )
    shock_days = pd.Series(sh.md_m[in_fit]).value_counts().sort_index()
    return Structure(
        fits,
        b_hat,
        pi_tab,
        gamma,
        R_hat,
        sh,
        np_fit,
        c,
        c_fit,
        so,
        demand_ratio,
        mu,
        shocks,
        u_fallback_reason,
        shock_days,
    )
