"""Calibration: from a checked source to the demand parameters of eq. (2)-(4), written as one folder.

Steps (each in its own module): daily panel -> product split (omega, pi, gamma; EM for censored
demand) -> empirical-Bayes shrinkage of omega -> pi and gamma refitted given the shrunk omega ->
reference shelves R_m -> no-purchase weight u by structural Poisson ML -> machine scales kappa_m ->
shock parameters r, rho. When a source has inventory records for some machines, the product-level
estimates and u use only those machines (their shelves are known); sales-only machines get their
kappa from their mean daily units on the sales-rule shelves. A source with no inventory records at all
uses the sales-rule shelves everywhere (quantities unknown: full facing, fill taken as 1).
What each estimate rests on is recorded under `identification` (see `identification`); an estimate
that comes out NaN or infinite is refused with what would identify it, never written.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend import __version__
from autovend.calibration.choice import ChoiceData, ChoiceFit, choice_data, fit_choice
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.estimator import DEFAULT_ESTIMATOR, Estimator, check_estimator, paper_estimates
from autovend.calibration.identification import (
    Identification,
    gamma_status,
    kappa_status,
    no_purchase_status,
    omega_status,
    pi_status,
    refuse_non_finite,
    refuse_unscaled_machines,
    shock_status,
)
from autovend.calibration.no_purchase import fit_no_purchase, loglog_elasticity
from autovend.calibration.normalise import Factors, canonical
from autovend.calibration.panel import Panel, build_panel
from autovend.calibration.popularity import Prior, shrink
from autovend.calibration.scale import sales_only_scales
from autovend.calibration.shocks import fit_shocks
from autovend.canonical import (
    canonical_frame,
    canonical_value,
    frame_hash,
    json_bytes,
    json_hash,
    parquet_bytes,
)
from autovend.demand import kernel
from autovend.demand.settings import DemandSettings
from autovend.errors import InsufficientDataError
from autovend.io import OutputKind, output_dir

SCHEMA_VERSION = 2
TABLES = ("popularity", "site_preference", "subcategory", "machines")
INPUT_SCALARS = frozenset({"params", "settings"})  # what the calibration was given, kept as given
# scalars that describe the run rather than the estimates: not part of the content hash
DIAGNOSTIC_SCALARS = frozenset({"code_version", "choice_iterations", "notes", "content_hash", "identification"})


@dataclass(frozen=True)
class CalibrationResult:
    """Scalars (with their definitions' names) and the parameter tables of a calibration."""

    scalars: dict[str, Any]
    popularity: (
        pd.DataFrame
    )  # sku_id, category_l1, category_l2, units, demand, exposure, machine_days, omega_raw, omega
    site_preference: pd.DataFrame  # site_type, category_l1, pi
    subcategory: pd.DataFrame  # category_l2, category_l1, gamma
    machines: pd.DataFrame  # machine_id, site_type, location?, capacity, kappa, R, U, mean_daily_units, ...
    diagnostics: dict[str, pd.DataFrame] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The scalars and tables as plain Python (tables as lists of records)."""
        return {
            "scalars": self.scalars,
            "popularity": self.popularity.to_dict(orient="records"),
            "site_preference": self.site_preference.to_dict(orient="records"),
            "subcategory": self.subcategory.to_dict(orient="records"),
            "machines": self.machines.to_dict(orient="records"),
        }

    def base_attraction(self, machine_ids: list[str] | None = None) -> pd.DataFrame:
        """b_{m,k} = kappa * pi * gamma * omega for the given machines (all by default) and all products."""
        mach = (
            self.machines
            if machine_ids is None
            else self.machines.set_index("machine_id").loc[machine_ids].reset_index()
        )
        return _factors(self, mach).base_attraction()

    def content_hash(self) -> str:
        """SHA-256 over the estimates' values: the scalars but DIAGNOSTIC_SCALARS, and every table's values.

        Writer bytes (Parquet metadata, compressor) and diagnostics do not enter it, so the same estimates
        have the same hash whichever library build wrote them.
        """
        scalars = {k: v for k, v in self.scalars.items() if k not in DIAGNOSTIC_SCALARS}
        tables = {name: frame_hash(getattr(self, name)) for name in TABLES}
        return json_hash({"scalars": scalars, "tables": tables})

    def write(self, out_dir: str | Path, *, force: bool = False) -> None:
        """Write calibration.json (with its content hash) and the Parquet tables to `out_dir`, atomically.

        `out_dir` must be absent, empty or an earlier calibration (`autovend.io.output_dir`) unless `force`.
        """
        scalars = {**self.scalars, "content_hash": self.content_hash()}
        with output_dir(out_dir, OutputKind.CALIBRATION, force=force) as tmp:
            (tmp / "calibration.json").write_bytes(json_bytes(scalars))
            for name in TABLES:
                (tmp / f"{name}.parquet").write_bytes(parquet_bytes(getattr(self, name)))
            if self.diagnostics:
                (tmp / "diagnostics").mkdir()
                for name, table in self.diagnostics.items():
                    table.to_parquet(tmp / "diagnostics" / f"{name}.parquet", index=False)

    @classmethod
    def read(cls, out_dir: str | Path) -> CalibrationResult:
        """Read a folder written by `write`."""
        out_dir = Path(out_dir)
        scalars = json.loads((out_dir / "calibration.json").read_text(encoding="utf-8"))
        scalars.pop("content_hash", None)
        diag_dir = out_dir / "diagnostics"
        diagnostics = (
            {p.stem: pd.read_parquet(p) for p in sorted(diag_dir.glob("*.parquet"))} if diag_dir.exists() else {}
        )
        return cls(
            scalars=scalars,
            popularity=pd.read_parquet(out_dir / "popularity.parquet"),
            site_preference=pd.read_parquet(out_dir / "site_preference.parquet"),
            subcategory=pd.read_parquet(out_dir / "subcategory.parquet"),
            machines=pd.read_parquet(out_dir / "machines.parquet"),
            diagnostics=diagnostics,
        )


def _factors(res: CalibrationResult, machines: pd.DataFrame) -> Factors:
    pop = res.popularity.set_index("sku_id")
    pi = res.site_preference.pivot(index="site_type", columns="category_l1", values="pi")
    return Factors(
        omega=pop["omega"],
        gamma=res.subcategory.set_index("category_l2")["gamma"],
        pi=pi,
        kappa=machines.set_index("machine_id")["kappa"],
        products=pop[["category_l1", "category_l2"]],
        machines=machines.set_index("machine_id")["site_type"],
    )


@dataclass(frozen=True)
class _Fits:
    panel: Panel
    data: ChoiceData
    raw: ChoiceFit
    final: ChoiceFit
    omega: np.ndarray
    priors: dict[int, Prior]  # the popularity prior of each subcategory code (see `popularity.shrink`)


def _product_split(
    panel: Panel,
    settings: DemandSettings,
    config: CalibrationConfig,
    scale_prior: tuple[np.ndarray, float] | None = None,
) -> _Fits:
    data = choice_data(panel, settings)
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
    )
    g2_all = (
        pd.Series(np.arange(len(data.cats_l2)), index=data.cats_l2).reindex(panel.products["category_l2"]).to_numpy()
    )
    omega, priors = shrink(raw.units, raw.exposure, g2_all)
    final = fit_choice(
        data,
        em_rounds=config.em_rounds,
        max_iter=config.mm_iterations,
        tol=config.mm_tolerance,
        omega_fixed=omega,
        scale_prior=scale_prior,
    )
    return _Fits(panel=panel, data=data, raw=raw, final=final, omega=omega, priors=priors)


@dataclass(frozen=True)
class _Shelves:
    """Machine-day attractions (kappa = 1) of the cells in the product split."""

    md_m: np.ndarray
    md_d: np.ndarray
    W_act: np.ndarray  # with prices and environment: what eq. (3) saw
    W_real: np.ndarray  # at reference prices and neutral weather: for x
    sales: np.ndarray
    typical_fill: float


def _base_attraction_hat(panel: Panel, fits: _Fits, notes: list[str]) -> tuple[np.ndarray, pd.DataFrame, pd.Series]:
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
    return _Shelves(
        md_m=md_m,
        md_d=md_d,
        W_act=fill * np.bincount(data.cell_md, weights=cell_b * data.a, minlength=n),
        W_real=fill * np.bincount(data.cell_md, weights=cell_b * facing, minlength=n),
        sales=np.bincount(data.cell_md, weights=data.y, minlength=n),
        typical_fill=typical,
    )


def _no_purchase(
    sh: _Shelves, demand: np.ndarray, R_hat: np.ndarray, config: CalibrationConfig, notes: list[str]
) -> tuple[dict[str, Any], str | None]:
    """U (structural fit, or the paper's u when the source cannot identify it), x, e and the fitted c_m.

    Returns the scalars and the reason the paper's u was used (None when u was estimated).
    """
    ratio = sh.W_real / R_hat[sh.md_m]
    x_all = float(np.exp(np.mean(np.log(ratio[ratio > 0])))) if np.any(ratio > 0) else float("nan")
    why: str | None = None
    try:
        npf = fit_no_purchase(
            demand,
            sh.W_act,
            R_hat,
            sh.md_m,
            sh.W_real,
            bounds=config.u_bounds,
            min_days=config.min_machine_days_u,
            min_machines=config.min_machines_u,
            day=sh.md_d,
        )
    except InsufficientDataError as exc:
        if config.u_fallback is None:
            raise
        notes.append(f"{exc}; the paper's u is used")
        npf = None
        why = str(exc)
    if npf is not None and npf.at_bound:
        notes.append(f"u hit its bound {config.u_bounds}: this source does not identify it; the paper's u is used")
        why = f"u hit its bound {config.u_bounds}: this source does not identify it"
    if npf is None or (npf.at_bound and config.u_fallback is not None):
        u = float(config.u_fallback)  # type: ignore[arg-type]
        return {
            "u": u,
            "u_se": float("nan"),
            "u_source": "fallback",
            "u_at_bound": npf is not None,
            "x": x_all,
            "e": u / (u + x_all),
            "e_se": float("nan"),
            "x_all_machines": x_all,
            "c": pd.Series(dtype=float),
            "u_machines": 0,
            "u_machine_days": 0,
        }, why
    return {
        "u": npf.u,
        "u_se": npf.u_se,
        "u_source": "estimated",
        "u_at_bound": npf.at_bound,
        "x": npf.x,
        "e": npf.e,
        "e_se": npf.e_se,
        "x_all_machines": x_all,
        "c": npf.c,
        "u_machines": npf.n_machines,
        "u_machine_days": npf.n_machine_days,
    }, None


@dataclass(frozen=True)
class _Structure:
    """Everything estimated from one product split: b_hat, shelves, u, scales and shocks."""

    fits: _Fits
    b_hat: np.ndarray
    pi_tab: pd.DataFrame
    gamma: pd.Series
    R_hat: np.ndarray
    shelves: _Shelves
    np_fit: dict[str, Any]
    c: np.ndarray
    c_fit: pd.Series
    sales_only: Any
    demand_ratio: float
    mu: np.ndarray  # expected demand per machine-day of the split, no shock
    shocks: Any
    u_fallback_reason: str | None  # why the paper's u was used (None: u estimated)
    shock_days: pd.Series  # days per machine (code) given to the shock fit


def _structure(
    panel: Panel, fits: _Fits, settings: DemandSettings, config: CalibrationConfig, notes: list[str]
) -> _Structure:
    """Given the product split: reference shelves, u, machine scales and the shock parameters."""
    imp = fits.raw  # imputed demand comes from the maximum-likelihood split (shrunk omega is for prediction)
    M = panel.n_machines
    b_hat, pi_tab, gamma = _base_attraction_hat(panel, fits, notes)
    cap = panel.machines["capacity"].to_numpy(dtype=float)
    R_hat = np.array([kernel.reference_shelf(b_hat[m], int(round(cap[m])), settings.phi)[1] for m in range(M)])
    sh = _shelves(panel, fits.data, b_hat, settings)
    np_fit, u_fallback_reason = _no_purchase(sh, imp.md_demand, R_hat, config, notes)
    u = np_fit["u"]
    # machine scales: U_m = c_m from the structural fit, else from sales on the sales-rule shelves
    demand_ratio = float(imp.md_demand.sum() / max(sh.sales.sum(), 1e-12))
    c = np.full(M, np.nan)
    c_fit = np_fit["c"]
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
    mu = np.nan_to_num(c)[sh.md_m] * sh.W_act / (u * R_hat[sh.md_m] + sh.W_act)
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
    return _Structure(
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


def calibrate(
    source,
    config: CalibrationConfig | None = None,
    settings: DemandSettings | None = None,
    estimator: Estimator = DEFAULT_ESTIMATOR,
) -> CalibrationResult:
    """Estimate every data-derived parameter of the demand model from a checked source (module docstring).

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
    panel = build_panel(source, config)
    notes = list(panel.notes)
    first = _structure(panel, _product_split(panel, settings, config), settings, config, [])
    prior = None
    if config.em_rounds > 0 and np.isfinite(first.shocks.sigma) and first.shocks.sigma > 0:
        mu = first.mu
        fallback = np.maximum(first.fits.raw.md_demand, 0.5)
        log_mean = np.log(np.where(mu > 0, mu, fallback)) - 0.5 * first.shocks.sigma**2
        prior = (log_mean, float(first.shocks.sigma))
    st = _structure(panel, _product_split(panel, settings, config, prior), settings, config, notes)
    fits, imp, sh, np_fit, c, shocks = st.fits, st.fits.raw, st.shelves, st.np_fit, st.c, st.shocks
    pi_tab, gamma, R_hat, so, demand_ratio = st.pi_tab, st.gamma, st.R_hat, st.sales_only, st.demand_ratio
    c_fit = st.c_fit
    M = panel.n_machines
    u = np_fit["u"]
    weekday = panel.days["weekday"].to_numpy()
    e_loglog, e_loglog_se = loglog_elasticity(sh.sales, sh.W_act, sh.md_m, weekday[sh.md_d])
    paper = None
    if estimator == "paper":
        units_m = panel.machine_days.groupby("m")["units"].mean().reindex(range(M)).to_numpy(dtype=float)
        paper = paper_estimates(np_fit["x_all_machines"], e_loglog, e_loglog_se, shocks.r_median, units_m, R_hat)
        u, c = paper.u, paper.c
        np_fit = {**np_fit, "u": paper.u, "u_se": paper.u_se, "u_source": "paper", "x": paper.x}
        np_fit = {**np_fit, "e": paper.e, "e_se": paper.e_se}
    refuse_unscaled_machines(panel.machines["machine_id"].to_numpy(), c)
    kappa = c / (u * R_hat)
    f_md = sh.W_act / (u * R_hat[sh.md_m] + sh.W_act)
    popularity, site_pref, subcat, machines_out = _tables(panel, fits, pi_tab, gamma, kappa, R_hat, u)
    per_m_ratio = pd.Series(imp.md_demand).groupby(sh.md_m).sum() / pd.Series(sh.sales).groupby(sh.md_m).sum()
    machines_out["kappa_source"] = np.where(
        np.isin(np.arange(M), c_fit.index.to_numpy(dtype=int)), "structural_fit", "sales_rule"
    )
    if paper is not None:  # every machine's scale from its observed mean daily units
        machines_out["kappa_source"] = "observed_mean_units"
    scalars = {
        "schema_version": SCHEMA_VERSION,
        "code_version": __version__,
        "source_hash": panel.source_hash,
        "source_name": getattr(source.meta, "name", ""),
        "params": config.model_dump(mode="json"),
        "settings": settings.model_dump(mode="json"),
        "eta": settings.eta,
        "phi": settings.phi,
        **{k: v for k, v in np_fit.items() if k != "c"},
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
        "u_first_pass": first.np_fit["u"],
        "choice_loglik": fits.final.loglik,
        "choice_iterations": fits.raw.iterations + fits.final.iterations,
        "notes": notes,
        "identification": _identification(panel, st, config, settings).model_dump(mode="json"),
    }
    if paper is not None:  # recorded only when not the default, so default calibrations keep their bytes
        scalars.update({"estimator": estimator, "r": paper.r, "sigma": paper.sigma})
    refuse_non_finite(scalars, config)
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
        "panel": _panel_table(panel),
    }
    if not (fits.raw.converged and fits.final.converged):
        notes.append(
            f"the product split's MM loops hit their cap of {config.mm_iterations} iterations before moving "
            f"less than {config.mm_tolerance:g}; raise mm_iterations"
        )
    return canonical_result(
        CalibrationResult(
            scalars=scalars,
            popularity=popularity,
            site_preference=site_pref,
            subcategory=subcat,
            machines=machines_out,
            diagnostics=diagnostics,
        )
    )


def _identification(
    panel: Panel, st: _Structure, config: CalibrationConfig, settings: DemandSettings
) -> Identification:
    """The identification record (`identification`) of the code paths this calibration took."""
    data = st.fits.data
    shelves_known = bool(panel.machines["has_inventory"].any())  # `choice_data` then uses known shelves only
    np_fit = st.np_fit
    u_days = pd.Series(st.shelves.md_m).value_counts()
    u, e, x = no_purchase_status(
        shelves_known=shelves_known,
        fallback_reason=st.u_fallback_reason,
        at_bound=bool(np_fit["u_at_bound"]),
        machines=int(np_fit["u_machines"]),
        machine_days=int(np_fit["u_machine_days"]),
        machines_left_out=int((u_days < config.min_machine_days_u).sum()),
        x_machine_days=int(np.count_nonzero(st.shelves.W_real > 0)),
        config=config,
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


def canonical_result(res: CalibrationResult) -> CalibrationResult:
    """The result with every estimate rounded to `autovend.canonical.SIGNIFICANT_DIGITS` significant digits.

    The settings and params the calibration was made with are inputs and stay as given; diagnostics
    (per machine-day tables) are kept at full precision and are not part of the content hash.
    Raises NonFiniteError when an estimate is NaN or infinite where a value is required.
    """
    scalars = {
        k: v if k in INPUT_SCALARS else canonical_value(v, path=f"calibration.{k}") for k, v in res.scalars.items()
    }
    return dataclasses.replace(
        res,
        scalars=scalars,
        popularity=canonical_frame(res.popularity, what="popularity"),
        site_preference=canonical_frame(res.site_preference, what="site preference"),
        subcategory=canonical_frame(res.subcategory, what="subcategory coefficients"),
        machines=canonical_frame(res.machines, what="machine scales"),
    )


def _panel_table(panel: Panel) -> pd.DataFrame:
    """The daily panel with ids and calendar joined: one row per machine x product x day on the shelf or sold.

    Ids and day types are categorical (codes into the machines, products and day types), so the table
    costs a few bytes per cell beyond its numbers.
    """
    cells = panel.cells
    d = cells["d"].to_numpy()
    days = panel.days
    day_types = pd.Categorical(days["day_type"])

    def codes(labels: pd.Series, index: np.ndarray) -> pd.Categorical:
        return pd.Categorical.from_codes(index, categories=pd.Index(labels.to_numpy(dtype=object), dtype="str"))

    return pd.DataFrame(
        {
            "machine_id": codes(panel.machines["machine_id"], cells["m"].to_numpy()),
            "sku_id": codes(panel.products["sku_id"], cells["k"].to_numpy()),
            "date": days["date"].to_numpy()[d],
            "units": cells["units"].to_numpy(),
            "revenue": cells["revenue"].to_numpy(),
            "price": cells["price"].to_numpy(),
            "shelf_qty": cells["q"].to_numpy(),
            "sold_out": cells["censored"].to_numpy(),
            "shelf_known": cells["known"].to_numpy(),
            "weekday": days["weekday"].to_numpy()[d],
            "day_type": pd.Categorical.from_codes(day_types.codes[d], categories=day_types.categories),
            "t_max_c": days["t_max_c"].to_numpy()[d],
            "precip_mm": days["precip_mm"].to_numpy()[d],
        }
    )


def _tables(
    panel: Panel,
    fits: _Fits,
    pi_tab: pd.DataFrame,
    gamma: pd.Series,
    kappa: np.ndarray,
    R_hat: np.ndarray,
    u: float,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Output tables in canonical normalisation.

    omega's reference is the units-weighted mean over the products with exposure, so products too
    rare to measure do not move it.
    """
    prod = panel.products
    data, raw = fits.data, fits.raw
    K = panel.n_products
    units = np.bincount(data.k, weights=data.y, minlength=K)
    popularity = pd.DataFrame(
        {
            "sku_id": prod["sku_id"],
            "category_l1": prod["category_l1"],
            "category_l2": prod["category_l2"],
            "units": units.astype(np.int64),
            "demand": raw.units,
            "exposure": raw.exposure,
            "machine_days": raw.machine_days.astype(np.int64),
            "omega_raw": raw.omega,
            "omega": fits.omega,
        }
    )
    machines_out = panel.machines[["machine_id", "site_type", "capacity", "has_inventory"]].copy()
    pop_idx = popularity.set_index("sku_id")
    factors = Factors(
        omega=pop_idx["omega"],
        gamma=gamma,
        pi=pi_tab,
        kappa=pd.Series(kappa, index=machines_out["machine_id"]),
        products=pop_idx[["category_l1", "category_l2"]],
        machines=machines_out.set_index("machine_id")["site_type"],
    )
    exposed = pd.Index(prod["sku_id"][raw.exposure > 0])
    can = canonical(factors, reference_products=exposed, weights=pd.Series(units, index=prod["sku_id"]))
    rescale = (can.omega / pop_idx["omega"]).to_numpy()
    popularity["omega"] = can.omega.to_numpy()
    popularity["omega_raw"] = popularity["omega_raw"] * rescale
    popularity["exposure"] = popularity["exposure"] / np.where(rescale > 0, rescale, 1.0)
    machines_out["kappa"] = can.kappa.to_numpy()
    machines_out["R"] = kappa * R_hat  # the rescalings leave b, hence R, unchanged
    machines_out["U"] = u * kappa * R_hat
    md = panel.machine_days
    machines_out["mean_daily_units"] = md.groupby("m")["units"].mean().reindex(range(panel.n_machines)).to_numpy()
    machines_out["n_days"] = md.groupby("m").size().reindex(range(panel.n_machines)).fillna(0).astype(int).to_numpy()
    site_pref = (
        can.pi.rename_axis("site_type").reset_index().melt(id_vars="site_type", var_name="category_l1", value_name="pi")
    )
    l1_of = prod.drop_duplicates("category_l2").set_index("category_l2")["category_l1"]
    subcat = pd.DataFrame(
        {
            "category_l2": can.gamma.index,
            "category_l1": l1_of.reindex(can.gamma.index).to_numpy(),
            "gamma": can.gamma.to_numpy(),
        }
    )
    return popularity, site_pref, subcat, machines_out
