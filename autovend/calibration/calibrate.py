"""Calibration: from a checked source to the demand parameters of eq. (2)-(4), written as one folder.

Steps (each in its own module): daily panel -> product split (omega, pi, gamma; EM for censored
demand) -> empirical-Bayes shrinkage of omega -> pi and gamma refitted given the shrunk omega ->
reference shelves R_m -> no-purchase weight u by structural Poisson ML -> machine scales kappa_m ->
shock parameters r, rho. When a source has inventory records for some machines, the product-level
estimates and u use only those machines (their shelves are known); sales-only machines get their
kappa from their mean daily units on the sales-rule shelves. A source with no inventory records at all
has its shelves estimated from the sales with demand (`availability`: whether each product was on the
shelf is a hidden state), and u, with the depletion and level of those shelves, is profiled
(`u_estimate`, `u_profile`): where the records do not identify it, the paper's u is used and the range
the data cannot reject is recorded.
What each estimate rests on is recorded under `identification` (see `identification`); an estimate
that comes out NaN or infinite is refused with what would identify it, never written.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from autovend import __version__
from autovend.calibration.assemble import Prepared, gathered, in_memory, on_executor, rescattered
from autovend.calibration.availability import estimate_availability
from autovend.calibration.blocks import Block, freeze, lean, release
from autovend.calibration.choice import choice_cells
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.estimates import Estimates
from autovend.calibration.estimator import DEFAULT_ESTIMATOR, Estimator, check_estimator, paper_estimates
from autovend.calibration.identification import (
    gamma_status,
    kappa_status,
    no_purchase_status,
    omega_status,
    pi_status,
    refuse_non_finite,
    refuse_unscaled_machines,
    shock_status,
)
from autovend.calibration.idrecord import Identification
from autovend.calibration.no_purchase import loglog_elasticity
from autovend.calibration.panel import Panel
from autovend.calibration.result import SCHEMA_VERSION, CalibrationResult, canonical_result
from autovend.calibration.store import CellStore
from autovend.calibration.structure import Structure, fit_structure, product_split
from autovend.calibration.tables import block_panel_rows, output_tables
from autovend.data.load import Source
from autovend.demand.settings import DemandSettings
from autovend.memory import release_freed
from autovend.parallel import Executor
from autovend.progress import step, steps

# the steps of `calibrate` and their shares of its time (autovend.progress)
CALIBRATION_STEPS = {
    "daily panel": 0.4,
    "latent availability": 4.0,
    "choice cells": 0.1,
    "first pass": 5.0,
    "second pass": 8.5,
    "estimates": 0.2,
}


def calibrate(
    source: Source | Prepared,
    config: CalibrationConfig | None = None,
    settings: DemandSettings | None = None,
    estimator: Estimator = DEFAULT_ESTIMATOR,
) -> CalibrationResult:
    """Estimate every data-derived parameter of the demand model from a checked source (module docstring).

    `source`: a checked source in memory, or its panel already built where its blocks are held
    (`assemble.Prepared`: on a Dask cluster, or from a partitioned source); the statistics are the same either way.
    `estimator` "paper" replaces u, e, x, r and the machine scales by the paper's definitions
    (`autovend.calibration.estimator`); everything else is the same fit.

    Two passes. The first imputes sold-out demand with each machine-day's maximum-likelihood demand
    scale and fits the structure; the second gives each day's scale a log-normal prior centred on the
    first pass's structural expected demand (sd: its shock sigma) and integrates over its posterior.
    Plugging in the maximum-likelihood scale over-imputes on days that merely sold out and
    under-imputes on days of heavy loss, which biased u by about -3% on the synthetic truth.
    """
    config = config or CalibrationConfig()
    settings = settings or DemandSettings()
    check_estimator(estimator)
    with steps("calibration", CALIBRATION_STEPS):
        step("daily panel")
        executor = _EXECUTOR.get()
        if isinstance(source, Prepared):
            prepared = source
        elif executor is None:
            prepared = in_memory(source, config)
        else:
            prepared = on_executor(source, config, executor)
        del source  # the panel holds what calibration needs (a caller that keeps no reference frees the tables here)
        release_freed()
        panel = prepared.panel
        notes = list(panel.notes)
        availability = None
        if not panel.machines["has_inventory"].any():  # shelves from sales alone: estimate what was on them
            step("latent availability")
            panel = gathered(prepared)  # the availability's EM runs in this process (its chains are per pair)
            availability = estimate_availability(panel, settings, config.availability_rounds, config.mm_pseudo_units)
            panel = dataclasses.replace(panel, cells=availability.cells())
            prepared = rescattered(prepared, panel)
            panel = prepared.panel
            release_freed()
        store = prepared.store
        step("choice cells")
        data = choice_cells(panel, store, settings)  # the cells of the split, shared by both passes
        if not len(panel.cells):  # the blocks hold the only copy of the cells: what the fits do not read, packed
            store.map(freeze)
        release_freed()
        step("first pass")
        start = None if availability is None else availability.params
        split = product_split(panel, settings, config, data=data, start=start)
        censored = data.censored  # the second pass differs from the first only through imputation
        first = fit_structure(panel, split, settings, config, [] if censored else notes)
        prior = None
        if censored and config.em_rounds > 0 and np.isfinite(first.shocks.sigma) and first.shocks.sigma > 0:
            mu = first.mu
            fallback = np.maximum(first.fits.raw.md_demand, 0.5)
            log_mean = np.log(np.where(mu > 0, mu, fallback)) - 0.5 * first.shocks.sigma**2
            prior = (log_mean, float(first.shocks.sigma))
        u_first_pass = first.np_fit.u
        if prior is None and not censored:
            st = first  # nothing censored: the second pass would repeat the first
        else:
            del first  # the first pass's per-cell arrays are not needed past its prior (memory at operator scale)
            release_freed()
            step("second pass")
            split = product_split(panel, settings, config, prior, data, start=start)
            st = fit_structure(panel, split, settings, config, notes)
        del split
        step("estimates")
        fits, imp, sh, np_fit, c, shocks = st.fits, st.fits.raw, st.shelves, st.np_fit, st.c, st.shocks
        pi_tab, gamma, R_hat, so, demand_ratio = st.pi_tab, st.gamma, st.R_hat, st.sales_only, st.demand_ratio
        c_fit = st.c_fit
        M = panel.n_machines
        u = np_fit.u
        weekday = panel.days["weekday"].to_numpy()
        e_loglog, e_loglog_se = loglog_elasticity(sh.sales, sh.W_act, sh.md_m, weekday[sh.md_d])
        paper = None
        if estimator == "paper":
            units_m = panel.machine_days.groupby("m")["units"].mean().reindex(range(M)).to_numpy(dtype=float)
            paper = paper_estimates(np_fit.x_all_machines, e_loglog, e_loglog_se, shocks.r_median, units_m, R_hat)
            u, c = paper.u, paper.c
            np_fit = dataclasses.replace(np_fit, u=paper.u, u_se=paper.u_se, u_source="paper", x=paper.x)
            np_fit = dataclasses.replace(np_fit, e=paper.e, e_se=paper.e_se)
        refuse_unscaled_machines(panel.machines["machine_id"].to_numpy(), c)
        kappa = c / (u * R_hat)
        f_md = sh.W_act / (u * R_hat[sh.md_m] + sh.W_act)
        popularity, site_pref, subcat, machines_out = output_tables(panel, fits, pi_tab, gamma, kappa, R_hat, u)
        per_m_ratio = pd.Series(imp.md_demand).groupby(sh.md_m).sum() / pd.Series(sh.sales).groupby(sh.md_m).sum()
        machines_out["kappa_source"] = np.where(
            np.isin(np.arange(M), c_fit.index.to_numpy(dtype=int)), "structural_fit", "sales_rule"
        )
        if paper is not None:  # every machine's scale from its observed mean daily units
            machines_out["kappa_source"] = "observed_mean_units"
        fields: dict[str, Any] = {  # the calibration's `Estimates`, checked before it is built
            "schema_version": SCHEMA_VERSION,
            "code_version": __version__,
            "source_hash": panel.source_hash,
            "source_name": prepared.source_name,
            "params": config.model_dump(mode="json"),
            "settings": settings.model_dump(mode="json"),
            "eta": settings.eta,
            "phi": settings.phi,
            "u": np_fit.u,
            "u_se": np_fit.u_se,
            "u_source": np_fit.u_source,
            "u_at_bound": np_fit.u_at_bound,
            "x": np_fit.x,
            "e": np_fit.e,
            "e_se": np_fit.e_se,
            "x_all_machines": np_fit.x_all_machines,
            "u_machines": np_fit.u_machines,
            "u_machine_days": np_fit.u_machine_days,
            "e_loglog": e_loglog,
            "e_loglog_se": e_loglog_se,
            "r": shocks.r,
            "r_median": shocks.r_median,
            "sigma": shocks.sigma,
            "rho": shocks.rho,
            "rho_naive_counts": shocks.naive_rho,
            "latent_lag1_corr": shocks.latent_lag1,
            "kept_unit_share": panel.kept_unit_share,
            "units_all": panel.units_all,
            "units_kept": panel.units_kept,
            "n_machines": M,
            "n_machines_inventory": int(panel.machines["has_inventory"].sum()),
            "n_products_kept": panel.n_products,
            "n_subcategories_kept": int(panel.products["category_l2"].nunique()),
            "n_days": panel.n_days,
            "period": [str(panel.days["date"].iat[0].date()), str(panel.days["date"].iat[-1].date())],
            "demand_to_sales_ratio": demand_ratio,
            "demand_to_sales_ratio_by_machine_sd": float(np.std(per_m_ratio)) if len(per_m_ratio) else float("nan"),
            "typical_fill": sh.typical_fill,
            "sales_rule_attraction_factor": so.attraction_factor,
            "sales_rule_scale_factor": so.scale_factor,
            "scale_prior_sigma": prior[1] if prior is not None else float("nan"),
            "u_first_pass": u_first_pass,
            "choice_loglik": fits.final.loglik,
            "choice_iterations": fits.raw.iterations + fits.final.iterations,
            "notes": notes,
            "identification": _identification(panel, st, config, settings),
        }
        prof = np_fit.profile
        if prof is not None:
            fields.update(
                {
                    "u_interval": (prof.low, prof.high),
                    "u_identified": prof.identified,
                    "u_profile_max": prof.u_hat,
                    "u_profile_adjustment": prof.adjustment if np.isfinite(prof.adjustment) else None,
                }
            )
        if availability is not None:
            gain = availability.loglik[-1] - availability.loglik[-2] if len(availability.loglik) > 1 else float("nan")
            fields.update(
                {
                    "shelf_depletion": np_fit.theta,
                    "shelf_level": np_fit.level,
                    "availability_rounds": availability.rounds,
                    "availability_last_gain": gain,
                    "availability_on_share": float(np.mean(availability.on)),
                }
            )
        if paper is not None:  # recorded only when not the default, so default calibrations keep their bytes
            fields.update({"estimator": estimator, "r": paper.r, "sigma": paper.sigma})
        refuse_non_finite(fields, config)
        ids = panel.machines["machine_id"].to_numpy()
        diagnostics = {
            "machine_days": pd.DataFrame(
                {
                    "machine_id": ids[sh.md_m],
                    "date": panel.days["date"].to_numpy()[sh.md_d],
                    "units": sh.sales.astype(np.int64),
                    "demand": imp.md_demand,
                    "W": sh.W_act * kappa[sh.md_m],
                    "W_real": sh.W_real * kappa[sh.md_m],
                    "expected": np.where(np.isnan(c), np.nan, c)[sh.md_m] * f_md,
                    "var_adjust": imp.md_var_adjust,
                }
            ),
            "overdispersion": pd.DataFrame(
                {  # null r_m: the machine shows no overdispersion (r_m infinite)
                    "machine_id": ids[shocks.r_by_machine.index.to_numpy()],
                    "r": shocks.r_by_machine.replace(np.inf, np.nan).to_numpy(),
                }
            ),
        }
        if not (fits.raw.converged and fits.final.converged):
            notes.append(
                f"the product split's MM loops hit their cap of {config.mm_iterations} iterations before moving "
                f"less than {config.mm_tolerance:g}; raise mm_iterations"
            )
        del st, fits, imp, data  # the split's per-cell arrays go before the per-cell panel table is written
        store.map(drop_split_data)
        estimates = Estimates(**fields)  # with every note (the MM loops' cap is noted above)
        return canonical_result(
            CalibrationResult(
                estimates=estimates,
                popularity=popularity,
                site_preference=site_pref,
                subcategory=subcat,
                machines=machines_out,
                diagnostics=diagnostics,
                availability=availability,
                panel_rows=functools.partial(panel_rows, store, lean(panel)),
            )
        )


_EXECUTOR: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("calibration_executor", default=None)


@contextlib.contextmanager
def blocks_on(executor: Executor | None) -> Iterator[None]:
    """Inside the block, `calibrate` of a source in memory holds and sums its blocks on `executor` (None: here).

    For callers that calibrate as one step among others (validation): the estimates are the same bytes anywhere.
    """
    token = _EXECUTOR.set(executor)
    try:
        yield
    finally:
        _EXECUTOR.reset(token)


def drop_split_data(block: Block) -> None:
    """Forget a block's split cells (the calibration is done with them)."""
    release(block)


def panel_rows(store: CellStore, meta: Panel) -> Iterator[pd.DataFrame]:
    """The panel's diagnostic table (`tables.panel_table`), block by block, rounded where each block is held.

    The next block's rows are made while the caller writes the last ones (`CellStore.each`).
    """
    yield from store.each(block_panel_rows, meta)


def _identification(panel: Panel, st: Structure, config: CalibrationConfig, settings: DemandSettings) -> Identification:
    """The identification record (`identification`) of the code paths this calibration took."""
    data = st.fits.data
    shelves_known = bool(panel.machines["has_inventory"].any())  # `choice_data` then uses known shelves only
    np_fit = st.np_fit
    u_days = pd.Series(st.shelves.md_m).value_counts()
    u, e, x = no_purchase_status(
        shelves_known=shelves_known,
        fallback_reason=st.u_fallback_reason,
        at_bound=bool(np_fit.u_at_bound),
        machines=int(np_fit.u_machines),
        machine_days=int(np_fit.u_machine_days),
        machines_left_out=int((u_days < config.min_machine_days_u).sum()),
        x_machine_days=int(np.count_nonzero(st.shelves.W_real > 0)),
        config=config,
        interval=None if np_fit.profile is None else (np_fit.profile.low, np_fit.profile.high),
    )
    r, rho = shock_status(
        st.shocks,
        st.shock_days,
        shelves_known=shelves_known,
        structural=len(st.c_fit) > 0,
        min_days=config.min_machine_days_shock,
    )
    return Identification(
        shelves_known=shelves_known,
        u=u,
        e=e,
        x=x,
        r=r,
        rho=rho,
        kappa=kappa_status(
            panel,
            st.c_fit.index.to_numpy(dtype=int),
            st.sales_only.c.index.to_numpy(dtype=int),
            shelves_known=shelves_known,
            u_borrowed=st.u_fallback_reason is not None,
            config=config,
        ),
        omega=omega_status(panel, data, st.fits.raw.exposure, st.fits.priors, shelves_known=shelves_known),
        gamma=gamma_status(panel, data, shelves_known=shelves_known),
        pi=pi_status(panel, data, settings, shelves_known=shelves_known),
    )
