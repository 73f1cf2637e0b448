"""The calibration report: calibration.md beside the paper's values, with diagnostic figures."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from autovend.calibration.estimates import Estimates, EstimatesError  # noqa: E402
from autovend.calibration.idrecord import Identification, StatusGroup  # noqa: E402
from autovend.calibration.result import CalibrationResult  # noqa: E402
from autovend.canonical import diagnostic_frame, round_sig  # noqa: E402
from autovend.demand.model import DemandModel, ShockProcess  # noqa: E402
from autovend.io import OutputKind, output_dir  # noqa: E402
from autovend.png import fixed_style, save_png  # noqa: E402
from autovend.world.price_response import site_response, units_lines  # noqa: E402

# The paper's reported values (§3.3), for the side-by-side table.
PAPER = {
    "x": 0.0638,
    "e": 0.318,
    "r": 2.74,
    "rho": 0.21,
    "eta": 0.5,
    "phi": 5,
    "kept_unit_share": 0.893,
    "n_products_kept": 1372,
    "n_subcategories_kept": 18,
    "n_machines": 99,
    "units_all": 220128,
}


def _fmt(v: object) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


MAX_MEMBERS = 8  # machines or subcategories named in a row of the identification table


def _status(status: str, weak: bool) -> str:
    return f"{status}, weak" if weak else status


def _members(group: StatusGroup, noun: str, plural: str) -> str:
    shown = f"{group.count:,} {noun if group.count == 1 else plural}"
    if group.members and (group.status != "estimated" or group.weak):
        names = ", ".join(group.members[:MAX_MEMBERS])
        more = f" and {len(group.members) - MAX_MEMBERS} more" if len(group.members) > MAX_MEMBERS else ""
        shown += f" ({names}{more})"
    return shown


def identification_rows(res: CalibrationResult, ident: Identification) -> list[tuple[str, str, str, str]]:
    """(parameter, value, status, reason) for each parameter group of the identification record."""
    s = res.estimates
    rows = [
        (f"`{key}`", _fmt(value), _status(est.status, est.weak), est.reason)
        for key, value, est in (("u", s.u, ident.u), ("e", s.e, ident.e), ("x", s.x, ident.x))
    ]
    r_value = f"{_fmt(s.r)}, {_fmt(s.sigma)}"
    rows.append(("`r`, `sigma`", r_value, _status(ident.r.status, ident.r.weak), ident.r.reason))
    rows.append(("`rho`", _fmt(s.rho), _status(ident.rho.status, ident.rho.weak), ident.rho.reason))
    nouns = {
        "kappa": ("machine", "machines"),
        "omega": ("product", "products"),
        "gamma": ("subcategory", "subcategories"),
    }
    for key, (noun, plural) in nouns.items():
        for g in getattr(ident, key):
            rows.append((f"`{key}`", _members(g, noun, plural), _status(g.status, g.weak), g.reason))
    pi = res.site_preference.pivot(index="site_type", columns="category_l1", values="pi")
    for sp in ident.pi:
        value = ", ".join(f"{c} {v:.3g}" for c, v in pi.loc[sp.site_type].items()) if sp.site_type in pi.index else ""
        reason = sp.reason
        if sp.neutral_categories:
            reason += f"; neutral for categories none of its machines offered: {', '.join(sp.neutral_categories)}"
        if sp.pooled_settings:
            reason += "; no demand settings of its own: price elasticity and environment from the pooled `unknown`"
        rows.append((f"`pi`, {sp.site_type}", value, _status(sp.status, sp.weak), reason))
    return rows


def _identification_section(res: CalibrationResult) -> list[str]:
    ident = res.estimates.identification
    if ident is None:
        return []
    lines = [
        "## What the data identify",
        "",
        "Status: `estimated` from this source's records; `pooled` from a method or prior pooled over other "
        "machines or products; `borrowed` from the paper or a neutral value. `weak`: the estimate rests on "
        "something the data do not show (shelves inferred from sales) or sits at a bound of its range.",
        "",
        "| parameter | value | status | reason |",
        "|---|---|---|---|",
    ]
    lines += [f"| {p} | {v} | {st} | {r} |" for p, v, st, r in identification_rows(res, ident)]
    return [*lines, ""]


def _u_sentence(s: Estimates) -> str:
    if s.identification is not None:
        u = s.identification.u
        return f"u: {u.status}{' (weak)' if u.weak else ''}: {u.reason}."
    shelves = "known shelves" if s.n_machines_inventory else "shelves estimated from sales (no inventory records)"
    return f"u: {s.u_source} from {s.u_machines or 0} machines and {s.u_machine_days or 0:,} machine-days of {shelves}."


@fixed_style
def shrinkage_figure(pop: pd.DataFrame, path: Path) -> None:
    """Raw (maximum-likelihood) against shrunk popularity, coloured by exposure."""
    fig, ax = plt.subplots(figsize=(6, 5))
    d = pop[pop["exposure"] > 0]
    raw = np.maximum(d["omega_raw"], 1e-4)
    sc = ax.scatter(raw, d["omega"], c=np.log10(d["machine_days"].clip(lower=1)), s=8, cmap="viridis", alpha=0.7)
    lo, hi = 1e-4, max(raw.max(), d["omega"].max()) * 1.5
    ax.plot([lo, hi], [lo, hi], color="grey", lw=1, ls="--")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="omega, maximum likelihood (0 shown at 1e-4)",
        ylabel="omega, empirical Bayes",
        title="Shrinkage of product popularity",
    )
    fig.colorbar(sc, ax=ax, label="log10 machine-days of exposure")
    fig.tight_layout()
    save_png(fig, path)


@fixed_style
def overdispersion_figure(od: pd.DataFrame, r: float, r_median: float, path: Path) -> None:
    """Per-machine overdispersion r_m with the pooled and median estimates."""
    fig, ax = plt.subplots(figsize=(6, 4))
    vals = od["r"].replace([np.inf], np.nan).dropna()
    vals = vals[vals < 50]
    ax.hist(vals, bins=30, color="#4c72b0", alpha=0.8)
    ax.axvline(r, color="black", lw=2, label=f"pooled r = {r:.2f}")
    ax.axvline(r_median, color="#dd8452", lw=2, ls="--", label=f"median r_m = {r_median:.2f}")
    ax.set(
        xlabel="r_m = mu^2 / (variance - mu), per machine",
        ylabel="machines",
        title="Overdispersion of daily demand by machine",
    )
    ax.legend()
    fig.tight_layout()
    save_png(fig, path)


@fixed_style
def site_preference_figure(sp: pd.DataFrame, path: Path) -> None:
    """Heatmap of the site preference pi (site type x category)."""
    tab = sp.pivot(index="site_type", columns="category_l1", values="pi")
    fig, ax = plt.subplots(figsize=(1.6 + 1.2 * tab.shape[1], 1.2 + 0.5 * tab.shape[0]))
    im = ax.imshow(np.log(tab.to_numpy()), cmap="RdBu_r", vmin=-0.5, vmax=0.5)
    ax.set_xticks(range(tab.shape[1]), tab.columns)
    ax.set_yticks(range(tab.shape[0]), tab.index)
    for i in range(tab.shape[0]):
        for j in range(tab.shape[1]):
            ax.text(j, i, f"{tab.iat[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_title("Site preference pi")
    fig.colorbar(im, ax=ax, label="log pi")
    fig.tight_layout()
    save_png(fig, path)


@fixed_style
def demand_fit_figure(md: pd.DataFrame, path: Path) -> None:
    """Observed (imputed) against fitted weekly demand per machine."""
    d = md.dropna(subset=["expected"]).copy()
    d["week"] = pd.to_datetime(d["date"]).dt.to_period("W")
    w = d.groupby(["machine_id", "week"])[["demand", "expected"]].sum()
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(w["expected"], w["demand"], s=5, alpha=0.4)
    hi = float(max(w["expected"].max(), w["demand"].max())) * 1.05 if len(w) else 1.0
    ax.plot([0, hi], [0, hi], color="grey", ls="--", lw=1)
    ax.set(
        xlabel="fitted weekly demand (no shock)",
        ylabel="weekly demand (censored sales imputed)",
        title="Structural fit, machine-weeks",
    )
    fig.tight_layout()
    save_png(fig, path)


def calibration_model(res: CalibrationResult) -> DemandModel:
    """The calibrated demand model of the source's own machines (no world: no unit costs, no network)."""
    m = res.machines
    pop = res.popularity
    return DemandModel(
        b=res.base_attraction().reindex(index=m["machine_id"], columns=pop["sku_id"]).to_numpy(dtype=float),
        U=m["U"].to_numpy(dtype=float),
        capacity=m["capacity"].to_numpy(dtype=float),
        site_types=tuple(m["site_type"].astype(str)),
        categories=tuple(pop["category_l1"].astype(str)),
        settings=res.estimates.demand_settings(),
        shock=ShockProcess(sigma=res.estimates.sigma, rho=res.estimates.rho),
    )


def _price_response_section(res: CalibrationResult) -> list[str]:
    """Units against a common price multiplier of the calibrated machines (a world's README adds gross profit)."""
    try:
        model = calibration_model(res)
    except (EstimatesError, KeyError, ValueError):  # no settings recorded, or a site type without elasticity
        return []
    n_products = len(res.popularity)
    resp = site_response(model, res.machines["site_type"], np.ones(n_products), np.zeros(n_products), "")
    return [
        "## Price response",
        "",
        "Expected units a day of a calibrated machine with every product at the same multiple of its reference "
        f"price (neutral environment, xi = 1), mean per site type, on a typical shelf (F = {resp.typical_fill:g}, "
        "its best products phi units each) and the full reference shelf; W/U is the shelf's attraction over the "
        "no-purchase weight at reference prices. Gross profit needs unit costs: see the exported world's README "
        "(`autovend.world.price_response`).",
        "",
        *units_lines(resp),
        "",
    ]


def render_markdown(res: CalibrationResult, figures: list[str]) -> str:
    """The calibration.md text."""
    s = res.estimates
    rows: list[tuple[str, str, object, float | None]] = [  # (label, symbol, value, its standard error)
        ("x: real / reference shelf attraction (geometric mean)", "x", s.x, None),
        ("e: elasticity of units to attraction at the typical shelf", "e", s.e, s.e_se),
        ("e, paper's log-log slope with machine and weekday effects", "e_loglog", s.e_loglog, s.e_loglog_se),
        ("u = x e / (1 - e)", "u", s.u, s.u_se),
        ("r: overdispersion (pooled)", "r", s.r, None),
        ("r: median of per-machine r_m (the paper's statistic)", "r_median", s.r_median, None),
        ("rho: lag-one autocorrelation of the latent shock", "rho", s.rho, None),
        ("rho if Poisson attenuation is ignored (counts)", "rho_naive_counts", s.rho_naive_counts, None),
        ("sigma = sqrt(ln(1 + 1/r))", "sigma", s.sigma, None),
        ("share of units in the kept subcategories", "kept_unit_share", s.kept_unit_share, None),
        ("kept products", "n_products_kept", s.n_products_kept, None),
        ("kept subcategories", "n_subcategories_kept", s.n_subcategories_kept, None),
        ("machines (with inventory records)", "n_machines", f"{s.n_machines} ({s.n_machines_inventory})", None),
        ("units sold, all categories", "units_all", s.units_all, None),
        ("demand / sales (lost to stockouts, imputed)", "demand_to_sales_ratio", s.demand_to_sales_ratio, None),
    ]
    first, last = s.period or ("", "")
    lines = [
        f"# Calibration: {s.source_name}",
        "",
        f"Source hash `{s.source_hash[:16]}…`, period {first} to "
        f"{last} ({s.n_days} days), code {s.code_version}. "
        "Generated by `autovend calibrate`; the numbers below are what this source gives, whatever they are. "
        f"Estimator: {s.estimator} (`autovend calibrate --estimator`).",
        "",
        "| quantity | symbol | this source | paper |",
        "|---|---|---|---|",
    ]
    for label, key, value, se in rows:
        paper = PAPER.get(key)
        shown = _fmt(value)
        if isinstance(se, float) and not math.isnan(se):
            shown += f" ± {se:.2g}"
        lines.append(f"| {label} | `{key}` | {shown} | {_fmt(paper) if paper is not None else ''} |")
    lines += ["", _u_sentence(s), ""]
    lines += _identification_section(res)
    lines += ["## Subcategory coefficients gamma", "", "| subcategory | category | gamma |", "|---|---|---|"]
    for r in res.subcategory.sort_values(["category_l1", "gamma"], ascending=[True, False]).itertuples():
        lines.append(f"| {r.category_l2} | {r.category_l1} | {r.gamma:.3f} |")
    lines += ["", "## Machine scales", ""]
    m = res.machines
    n_fit = int((m["kappa_source"] == "structural_fit").sum())
    how = (
        f"kappa from the structural fit for {n_fit}, "
        f"from mean sales on shelves without a structural fit for {(m['kappa_source'] == 'sales_rule').sum()}"
        if s.estimator == "structural"
        else "kappa from each machine's observed mean daily units on a typical real shelf (the paper's estimator)"
    )
    lines.append(
        f"{len(m)} machines; {how}. "
        f"Mean daily units: median {m['mean_daily_units'].median():.1f}, range "
        f"{m['mean_daily_units'].min():.1f} to {m['mean_daily_units'].max():.1f}."
    )
    lines += ["", *_price_response_section(res)]
    notes = s.notes
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    lines += ["", "## Figures", ""] + [f"![{f}]({f})" for f in figures]
    lines += [
        "",
        "Settings (not estimates, paper §3.3): eta, phi, the site price elasticities and the environment "
        "multipliers come from `params/benchmark.yaml`; their effects are taken out of the data through the "
        "model, not estimated.",
        "",
    ]
    return "\n".join(lines)


def write_report(res: CalibrationResult, out_dir: str | Path, *, force: bool = False) -> None:
    """Write calibration.md and its PNG figures to `out_dir` (atomically).

    `out_dir` must be absent, empty or an earlier calibration report (`autovend.io.output_dir`) unless `force`.
    """
    with output_dir(out_dir, OutputKind.CALIBRATION_REPORT, force=force) as tmp:
        figs = []
        shrinkage_figure(diagnostic_frame(res.popularity), tmp / "shrinkage.png")
        figs.append("shrinkage.png")
        # figures are drawn from rounded diagnostics and scalars: their last bits depend on the CPU
        diagnostics = {name: diagnostic_frame(table) for name, table in res.diagnostics.items()}
        if "overdispersion" in diagnostics:
            overdispersion_figure(
                diagnostics["overdispersion"],
                round_sig(res.estimates.r),
                round_sig(math.nan if res.estimates.r_median is None else res.estimates.r_median),
                tmp / "overdispersion.png",
            )
            figs.append("overdispersion.png")
        site_preference_figure(diagnostic_frame(res.site_preference), tmp / "site_preference.png")
        figs.append("site_preference.png")
        if "machine_days" in diagnostics:
            demand_fit_figure(diagnostics["machine_days"], tmp / "demand_fit.png")
            figs.append("demand_fit.png")
        (tmp / "calibration.md").write_text(render_markdown(res, figs), encoding="utf-8")
