"""What the data identify: the identification record of a calibration, and the refusal of non-finite estimates.

Every parameter group of eq. (2)-(4) gets a status from the code path that produced it:
- `estimated`: fitted on this source's records;
- `pooled`: taken from a method or prior pooled over other machines or products (a sales-only
  machine's kappa from the sales-rule method calibrated on the machines with known shelves; a
  product never on a shelf of the product split gets its subcategory's prior mean);
- `borrowed`: not from this source (u from the paper when the source cannot identify it; a neutral
  factor 1 where no shelf of the product split shows the group).
`weak` marks an estimate that rests on something the data do not show: shelves inferred from the sales
themselves (no inventory records: `availability` estimates what was on them, their fill and facings
unknown), or a value at a bound of its range. Each entry says why in `reason`. The record is stored under
the `identification` key of calibration.json; it is a diagnostic (outside the content hash), built from
flags and counts the calibration computed, not from the estimates' values.

`refuse_non_finite` stops a calibration whose estimate came out NaN or infinite, naming the parameter
and the data that would identify it, before anything is written.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.choice import ChoiceCells
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.idrecord import Estimate, SitePreference, Status, StatusGroup
from autovend.calibration.panel import Panel
from autovend.calibration.popularity import Prior, shrink
from autovend.calibration.shocks import ShockFit
from autovend.demand.settings import DemandSettings
from autovend.demand.shock import latent_lag1_corr
from autovend.distinct import distinct
from autovend.errors import InsufficientDataError

# products with exposure a subcategory needs for its own popularity prior (`popularity.shrink`'s default)
SHRINK_MIN_PRODUCTS = int(inspect.signature(shrink).parameters["min_products"].default)
RHO_UPPER = latent_lag1_corr(0.99)  # `shocks.fit_shocks` clips the latent lag-one correlation here
SALES_RULE_SHELVES = (
    "shelves estimated from sales (no inventory records: whether each product was on the shelf is a hidden state "
    "estimated with demand, its fill and facings unknown)"
)


def _group(status: Status, reason: str, names: np.ndarray, weak: bool, named: bool = True) -> StatusGroup:
    plain = status == "estimated" and not weak
    members = tuple(str(n) for n in names) if named and not plain else ()
    return StatusGroup(status=status, reason=reason, count=len(names), weak=weak, members=members)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _interval(interval: tuple[float | None, float | None] | None) -> str:
    """The 95% interval of u in words ('' without one)."""
    if interval is None:
        return ""
    low = f"{interval[0]:.3g}" if interval[0] is not None else "the search bound"
    high = f"{interval[1]:.3g}" if interval[1] is not None else "the search bound"
    return f"95% profile-likelihood interval {low} to {high}"


def no_purchase_status(
    *,
    shelves_known: bool,
    fallback_reason: str | None,
    at_bound: bool,
    machines: int,
    machine_days: int,
    machines_left_out: int,
    x_machine_days: int,
    config: CalibrationConfig,
    interval: tuple[float | None, float | None] | None = None,
) -> tuple[Estimate, Estimate, Estimate]:
    """(u, e, x): the structural fit of `no_purchase`, or the paper's u when it fell back (`fallback_reason`).

    `interval`: u's adjusted 95% profile-likelihood interval (`u_profile`), None when no fit was possible.
    """
    weak = not shelves_known
    shelves = "known shelves (inventory records)" if shelves_known else SALES_RULE_SHELVES
    borrowed_x = Estimate(
        status="borrowed",
        reason="the paper's x: how full shelves estimated from sales were is not observed, so their level is the "
        "paper's typical shelf",
    )

    def x_reason(where: str) -> str:
        return f"geometric mean of real over reference shelf attraction {where}"

    if fallback_reason is not None:
        cannot = f"; the data cannot reject u in its {_interval(interval)}" if interval is not None else ""
        u = Estimate(status="borrowed", reason=f"{fallback_reason}; the paper's u = x e / (1 - e) is used{cannot}")
        e = Estimate(status="borrowed", reason="u / (u + x) with the paper's u and this source's x")
        if not shelves_known and interval is not None:  # the profile's fallback: the paper's u with its x
            return u, Estimate(status="borrowed", reason="the paper's e, with its u and x"), borrowed_x
        x = Estimate(
            status="estimated",
            reason=x_reason(f"over all {x_machine_days:,} machine-days of the product split"),
            weak=weak,
            machine_days=x_machine_days,
        )
        return u, e, x
    left = (
        f"; {_plural(machines_left_out, 'machine')} with fewer than {config.min_machine_days_u} days left out"
        if machines_left_out
        else ""
    )
    reason = (
        f"structural Poisson fit on {_plural(machines, 'machine')}, {machine_days:,} machine-days of {shelves}{left}"
    )
    if interval is not None:
        reason += f"; {_interval(interval)}"
    if at_bound:
        reason = f"at its bound {tuple(config.u_bounds)}: the source does not identify it ({reason})"
    u = Estimate(status="estimated", reason=reason, weak=weak or at_bound, machines=machines, machine_days=machine_days)
    e = Estimate(
        status="estimated",
        reason="u / (u + x): the elasticity of units to shelf attraction at the typical shelf",
        weak=u.weak,
        machines=machines,
        machine_days=machine_days,
    )
    x = Estimate(
        status="estimated",
        reason=x_reason("on the machine-days of the u fit")
        + ("" if shelves_known else "; the level of shelves estimated from sales, fitted with u"),
        weak=weak,
        machines=machines,
        machine_days=machine_days,
    )
    return u, e, x


def shock_status(
    shocks: ShockFit, days_by_machine: pd.Series, *, shelves_known: bool, structural: bool, min_days: int
) -> tuple[Estimate, Estimate]:
    """(r, rho) from the machine-days the shock fit was given (`days_by_machine`: days per machine)."""
    used = days_by_machine[days_by_machine >= min_days]
    short = int((days_by_machine < min_days).sum())
    of = "of the structural fit " if structural else ""
    basis = f"{_plural(len(used), 'machine')} {of}with {min_days}+ days ({int(used.sum()):,} machine-days)"
    if short:
        basis += f"; {_plural(short, 'machine')} with fewer days left out"
    if not shelves_known:
        basis += "; expected demand on shelves estimated from sales"
    weak = not shelves_known
    r = Estimate(
        status="estimated",
        reason=f"residual variance beyond Poisson noise over {basis}",
        weak=weak,
        machines=len(used),
        machine_days=int(used.sum()),
    )
    rho_reason = f"lag-one covariance of the residuals over {basis}"
    rho_weak = weak
    if shocks.latent_lag1 <= 0.0:
        rho_reason = (
            "at its lower bound 0: the residuals' lag-one covariance is not positive, so the data do not tell rho = 0 "
            f"from a small positive value ({rho_reason})"
        )
        rho_weak = True
    elif shocks.latent_lag1 >= RHO_UPPER:
        rho_reason = f"at its upper bound 0.99: the residuals are as persistent as the model allows ({rho_reason})"
        rho_weak = True
    rho = Estimate(
        status="estimated", reason=rho_reason, weak=rho_weak, machines=len(used), machine_days=int(used.sum())
    )
    return r, rho


def kappa_status(
    panel: Panel,
    structural: np.ndarray,
    sales_rule: np.ndarray,
    *,
    shelves_known: bool,
    u_borrowed: bool,
    config: CalibrationConfig,
) -> tuple[StatusGroup, ...]:
    """Machine scales: from the structural fit (`structural`, machine codes) or the sales-rule method."""
    ids = panel.machines["machine_id"].astype(str).to_numpy()
    has_inv = panel.machines["has_inventory"].to_numpy(dtype=bool)
    groups: list[StatusGroup] = []
    if len(structural):
        where = "known shelves" if shelves_known else SALES_RULE_SHELVES
        groups.append(
            _group(
                "estimated", f"U_m of the structural fit of u, on {where}", ids[np.sort(structural)], not shelves_known
            )
        )
    method = f"mean daily sales on {'sales-rule shelves' if shelves_known else 'shelves estimated from sales'}"
    if len(structural):
        method += f", with corrections learned on the {_plural(len(structural), 'machine')} of the structural fit"
    else:
        method += ", the scale correction not learned (no machine in a structural fit)"
    sales_rule = np.sort(np.asarray(sales_rule, dtype=int))
    causes = [
        (~has_inv[sales_rule], "no inventory records"),
        (
            has_inv[sales_rule],
            "u borrowed, so no structural fit"
            if u_borrowed
            else f"fewer than {config.min_machine_days_u} days of known shelves",
        ),
    ]
    for mask, cause in causes:
        if mask.any():
            groups.append(_group("pooled", f"{cause}: {method}", ids[sales_rule[mask]], not shelves_known))
    return tuple(groups)


def omega_status(
    panel: Panel, data: ChoiceCells, exposure: np.ndarray, priors: Mapping[int, Prior], *, shelves_known: bool
) -> tuple[StatusGroup, ...]:
    """Product popularity: shrunk toward its subcategory's own prior, a pooled prior, or the prior mean."""
    g2 = pd.Series(np.arange(len(data.cats_l2)), index=data.cats_l2).reindex(panel.products["category_l2"]).to_numpy()
    own_prior = np.array([not math.isnan(priors[int(g)].loglik) for g in g2], dtype=bool)
    exposed = np.asarray(exposure) > 0
    sold_anywhere = data.sold_by_k > 0
    where = "known shelves" if shelves_known else "shelves estimated from sales"
    rows = [
        (
            exposed & own_prior,
            "estimated",
            f"units over exposure on {where}, shrunk toward its subcategory's fitted prior (empirical Bayes)",
        ),
        (
            exposed & ~own_prior,
            "pooled",
            f"its subcategory has fewer than {SHRINK_MIN_PRODUCTS} products with exposure: shrunk toward the prior "
            "pooled over all products, at the subcategory's level",
        ),
        (
            ~exposed & sold_anywhere,
            "pooled",
            "never on a shelf of the product split (sold only where the shelves are not known): "
            "its subcategory's prior mean",
        ),
        (
            ~exposed & ~sold_anywhere,
            "pooled",
            "never on a shelf of the product split and never sold in the records: its subcategory's prior mean",
        ),
    ]
    skus = panel.products["sku_id"].to_numpy()
    return tuple(
        _group(status, reason, skus[mask], not shelves_known, named=False)  # type: ignore[arg-type]
        for mask, status, reason in rows
        if mask.any()
    )


def gamma_status(panel: Panel, data: ChoiceCells, *, shelves_known: bool) -> tuple[StatusGroup, ...]:
    """Subcategory coefficients: fitted on the product split, 0 when never sold, neutral when never shown."""
    cells, units = data.cells_by_g2, data.units_by_g2
    l1_of = panel.products.drop_duplicates("category_l2").set_index("category_l2")["category_l1"]
    alone = l1_of.map(l1_of.value_counts()).reindex(data.cats_l2).to_numpy() == 1
    names = np.array(data.cats_l2, dtype=object)
    where = "known shelves" if shelves_known else "shelves estimated from sales"
    shown = cells > 0
    rows = [
        (shown & (units > 0) & ~alone, "estimated", f"realised over predicted units of the subcategory on {where}", 0),
        (
            shown & (units > 0) & alone,
            "estimated",
            "the only subcategory of its category: 1 by the normalisation (pi carries the category's level)",
            0,
        ),
        (shown & (units <= 0), "estimated", "offered but never sold on the product split's shelves: 0, its bound", 1),
        (
            ~shown,
            "borrowed",
            "no product of it on a shelf of the product split: neutral (1 before the normalisation)",
            0,
        ),
    ]
    return tuple(
        _group(status, reason, names[mask], bool(at_bound) or not shelves_known)  # type: ignore[arg-type]
        for mask, status, reason, at_bound in rows
        if mask.any()
    )


def pi_status(
    panel: Panel, data: ChoiceCells, settings: DemandSettings, *, shelves_known: bool
) -> tuple[SitePreference, ...]:
    """Site preference per site type of the panel's machines."""
    site_types = sorted({str(s) for s in panel.machines["site_type"]})
    pooled = set(settings.site_types_without_settings(site_types))
    md_site = panel.machines["site_type"].astype(str).to_numpy()[data.md_m]
    n_sites, n_cats = len(data.sites), len(data.cats_l1)
    offered = pd.DataFrame(  # cells per site type x category (a count per code, never a text value per cell)
        data.cells_by_pig.reshape(n_sites, n_cats),
        index=data.sites,
        columns=data.cats_l1,
    )
    where = "known shelves" if shelves_known else "shelves estimated from sales"
    out = []
    for s in site_types:
        if s not in data.sites:
            out.append(
                SitePreference(
                    site_type=s,
                    status="borrowed",
                    reason="no machine of this site type has shelves in the product split (none has inventory "
                    "records): neutral pi = 1",
                    pooled_settings=s in pooled,
                )
            )
            continue
        rows = md_site == s
        machines = int(len(distinct(data.md_m[rows])))
        reason = f"category mix of {_plural(machines, 'machine')} ({int(rows.sum()):,} machine-days) on {where}"
        if machines == 1:
            reason += ": one machine, so its own mix stands for the site type"
        neutral = tuple(str(c) for c in data.cats_l1 if offered.loc[s, c] == 0)
        out.append(
            SitePreference(
                site_type=s,
                status="estimated",
                reason=reason,
                weak=not shelves_known or machines == 1,
                machines=machines,
                machine_days=int(rows.sum()),
                neutral_categories=neutral,
                pooled_settings=s in pooled,
            )
        )
    return tuple(out)


# ------------------------------------------------------------------------------------------- refusal

# scalars a world or a validation needs: NaN is refused as well as infinities (other scalars may be null)
_REQUIRED = ("u", "x", "e", "r", "sigma", "rho", "typical_fill")


def _what_identifies(key: str, config: CalibrationConfig) -> str:
    u_data = (
        f"at least {config.min_machines_u} machines with {config.min_machine_days_u}+ days of known shelves "
        "(inventory records) whose shelf attraction varies from day to day"
    )
    shock_data = f"more machines with {config.min_machine_days_shock}+ days of records, or a longer period"
    return {
        "u": f"the no-purchase weight u is not identified; it needs {u_data}, or set `u_fallback`",
        "u_se": f"the standard error of u is infinite: the fit has no information on u; it needs {u_data}",
        "e": "the elasticity e = u / (u + x) is not identified; see u and x",
        "e_se": f"the standard error of e is infinite: the fit has no information on u; it needs {u_data}",
        "x": "x (real over reference shelf attraction) is not identified; it needs machine-days with products of "
        "positive attraction on the shelf",
        "r": "the overdispersion r is not identified: the daily demand varies no more than Poisson noise on the "
        f"machines of the shock fit, so there is no shock to measure; it needs {shock_data}",
        "r_median": "the median of the per-machine overdispersion r_m is not identified: most machines' daily "
        f"demand varies no more than Poisson noise; it needs {shock_data}",
        "sigma": f"the shock's sigma is not identified (see r); it needs {shock_data}",
        "rho": f"the shock's autocorrelation rho is not identified; it needs {shock_data}",
        "typical_fill": "the typical shelf fill is not identified; it needs inventory records",
        "demand_to_sales_ratio": "the demand to sales ratio is not identified; it needs machine-days with sales",
    }.get(key, f"{key} is not identified by this source")


def refuse_non_finite(scalars: Mapping[str, Any], config: CalibrationConfig) -> None:
    """Raise InsufficientDataError for a required scalar that is not finite, or any scalar that is infinite.

    Other scalars may be NaN (no standard error for a borrowed u, no log-log slope on too few days);
    they are written as null.
    """
    for key, value in scalars.items():
        if not isinstance(value, (float, np.floating)):
            continue
        v = float(value)
        if math.isinf(v) or (math.isnan(v) and key in _REQUIRED):
            raise InsufficientDataError(f"calibration refused: {key} = {v}; {_what_identifies(key, config)}")


def refuse_unscaled_machines(machine_ids: np.ndarray, kappa: np.ndarray) -> None:
    """Raise InsufficientDataError naming the machines whose scale kappa is not finite."""
    bad = ~np.isfinite(np.asarray(kappa, dtype=float))
    if bad.any():
        names = ", ".join(str(m) for m in np.asarray(machine_ids)[bad])
        raise InsufficientDataError(
            f"calibration refused: the machine scale kappa is not identified for {names}; each machine needs "
            "sales of kept products on at least one day (or leave it out of machines.csv)"
        )
