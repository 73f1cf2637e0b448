"""The structural fits of one calibration pass: the product split, reference shelves, u, machine scales and shocks.

`product_split` fits omega, pi and gamma (with empirical-Bayes shrinkage of omega); `fit_structure` takes a split to
the reference shelves R_m, the no-purchase weight u, the machine scales and the shock parameters. The cells stay in
their blocks (`store`): what the fits take of them comes back per machine-day (the shelves' attractions, the
imputed demand) or per product (exposure, units), and the fits over those run here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.blocks import Block, panel_store
from autovend.calibration.choice import ChoiceCells, ChoiceFit, choice_cells, choice_of
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.drop_prior import pair_flags, popularity_by_prior
from autovend.calibration.mm import Params
from autovend.calibration.panel import Panel
from autovend.calibration.popularity import Prior
from autovend.calibration.scale import sales_only_scales
from autovend.calibration.shocks import fit_shocks
from autovend.calibration.split import fit_choice
from autovend.calibration.u_estimate import NoPurchase, no_purchase
from autovend.calibration.unseen import block_pair_exposure, unseen_corrected
from autovend.demand import kernel
from autovend.demand.settings import DemandSettings
from autovend.errors import InsufficientDataError


@dataclass(frozen=True)
class Fits:
    """The product split: the maximum-likelihood fit, the fit given the shrunk omega, and that omega."""

    panel: Panel
    data: ChoiceCells
    raw: ChoiceFit
    final: ChoiceFit
    omega: np.ndarray
    priors: dict[int, Prior]  # the popularity prior of each subcategory code (see `popularity.shrink`)


def _pair_flags(block: Block) -> tuple[np.ndarray, np.ndarray]:
    data = choice_of(block)
    return pair_flags(data.k, data.md_m[data.cell_md], data.md_d[data.cell_md], data.n_products)


def product_split(
    panel: Panel,
    settings: DemandSettings,
    config: CalibrationConfig,
    scale_prior: tuple[np.ndarray, float] | None = None,
    data: ChoiceCells | None = None,
    start: Params | None = None,
) -> Fits:
    """Fit omega, pi and gamma (EM for censored demand), shrink omega, and refit pi and gamma given it.

    `data`: the split's cells (`choice.choice_cells`) when the caller already has them (both calibration passes
    share them); else the panel's, built in memory. `start`: where the maximum-likelihood fit's MM starts (it runs
    to its fixed point from anywhere).
    """
    data = choice_cells(panel, panel_store(panel), settings) if data is None else data
    if data.n_cells == 0:
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
    dropped = None
    if config.popularity_prior == "dropped":
        flags = data.store.map(_pair_flags)
        offered = np.logical_or.reduce([f[0] for f in flags])
        dropped = offered & ~np.logical_or.reduce([f[1] for f in flags])
    exposure = raw.exposure
    if data.estimated:  # shelves from sales alone: the pairs that never sold are unseen (`unseen`)
        pairs = data.store.map(block_pair_exposure, data.layout.table(Params(raw.omega, raw.pi, raw.gamma)), raw.omega)
        pair_k = np.concatenate([p[0] for p in pairs])
        pair_e = np.concatenate([p[1] for p in pairs])
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


@dataclass(frozen=True)
class BaseAttraction:
    """b_hat = pi * gamma * omega of every machine and product, as a table per site type: b_hat[m] = table[site[m]]."""

    table: np.ndarray  # (site types, products)
    site: np.ndarray  # (machines,) each machine's row of `table`

    def of(self, m: np.ndarray, k: np.ndarray) -> np.ndarray:
        """b_hat[m, k] of each (machine, product)."""
        return self.table[self.site[m], k]

    def row(self, m: int) -> np.ndarray:
        """b_hat[m] (every product)."""
        return self.table[self.site[m]]


def _base_attraction_hat(panel: Panel, fits: Fits, notes: list[str]) -> tuple[BaseAttraction, pd.DataFrame, pd.Series]:
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
    all_sites, site = np.unique(site_types, return_inverse=True)
    table = (
        pi_tab.reindex(index=all_sites, columns=prod["category_l1"]).to_numpy()
        * (gamma.reindex(prod["category_l2"]).to_numpy() * fits.omega)[None, :]
    )
    return BaseAttraction(table, site.astype(np.int64)), pi_tab, gamma


def block_shelves(block: Block, b: BaseAttraction, phi: float) -> dict[str, Any]:
    """The block's sums of its split cells' attractions per machine-day, and its machine-days' fill."""
    data = choice_of(block)
    md_m, md_d = data.md_m, data.md_d
    cell_b = b.of(md_m[data.cell_md], data.k)
    facing = np.where(np.isnan(data.q), 1.0, np.minimum(1.0, data.q / phi))
    mdays = block.machine_days
    fill = mdays.set_index(["m", "d"])["fill"].reindex(pd.MultiIndex.from_arrays([md_m, md_d])).to_numpy()
    n = len(md_m)
    out: dict[str, Any] = {
        "fill": fill,
        "act": np.bincount(data.cell_md, weights=cell_b * data.a, minlength=n),
        "real": np.bincount(data.cell_md, weights=cell_b * facing, minlength=n),
        "sales": np.bincount(data.cell_md, weights=data.y, minlength=n),
    }
    if data.avail is not None and data.avail_loo is not None:  # shelves estimated from sales (`availability`)
        out["real_avail"] = np.bincount(data.cell_md, weights=cell_b * facing * data.avail, minlength=n)
        loo = data.avail_loo / data.avail  # every kept cell has P(ON) > 0
        out["fit"] = np.bincount(data.cell_md, weights=cell_b * data.a * loo, minlength=n)
        out["real_fit"] = np.bincount(data.cell_md, weights=cell_b * facing * data.avail_loo, minlength=n)
    return out


def _shelves(data: ChoiceCells, b: BaseAttraction, settings: DemandSettings) -> _Shelves:
    """Real-shelf attractions per machine-day (unknown fill: the typical known fill)."""
    parts = data.store.map(block_shelves, b, settings.phi)

    def cat(name: str) -> np.ndarray:
        return np.concatenate([p[name] for p in parts]) if len(parts) > 1 else parts[0][name]

    fill = cat("fill")
    known = fill[~np.isnan(fill)]
    typical = float(np.median(known)) if len(known) else 1.0
    fill = np.where(np.isnan(fill), typical, fill) ** settings.eta
    W_act = fill * cat("act")
    W_real = fill * cat("real")
    W_fit, W_real_fit = W_act, W_real
    if "fit" in parts[0]:
        W_real = fill * cat("real_avail")
        W_fit = fill * cat("fit")
        W_real_fit = fill * cat("real_fit")
    return _Shelves(
        md_m=data.md_m,
        md_d=data.md_d,
        W_act=W_act,
        W_real=W_real,
        sales=cat("sales"),
        typical_fill=typical,
        W_fit=W_fit,
        W_real_fit=W_real_fit,
    )


def reference_shelves(b: BaseAttraction, capacity: np.ndarray, phi: float) -> np.ndarray:
    """R_hat of each machine: its reference shelf's attraction (`kernel.reference_shelf`), once per site and size."""

    @cache
    def of(site: int, cap: int) -> float:
        return float(kernel.reference_shelf(b.table[site], cap, phi)[1])

    return np.array([of(int(b.site[m]), int(round(capacity[m]))) for m in range(len(capacity))])


@dataclass(frozen=True)
class Structure:
    """Everything estimated from one product split: b_hat, shelves, u, scales and shocks."""

    fits: Fits
    b_hat: BaseAttraction
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
    R_hat = reference_shelves(b_hat, cap, settings.phi)
    sh = _shelves(fits.data, b_hat, settings)
    depletion = fits.data.estimated  # shelves estimated from sales alone
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
        fits.data.store,
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
