"""u as the calibration records it: the structural fit, its profile, or the prior when the records do not identify it.

`no_purchase` also gives x, e and the machine scales c_m that go with the u used. On known shelves the point
estimate is the structural fit's (`no_purchase.fit_no_purchase`, with its shock control). On shelves estimated
from sales alone it is the profile's maximum over u, the depletion exponent theta
and the shelves' level s (`u_profile`): sales alone do not say how full the shelves were, so u is pinned only
through u / s, the elasticity. Either way the profile's adjusted 95% interval decides: when it is open or wider than
`u_profile.IDENTIFIED_SPAN`, the paper's u = x e / (1 - e) (`CalibrationConfig.u_fallback`) is used, the machine
scales are those that fit best at that u (on estimated shelves with the paper's typical shelf, x = `x_prior`: the
paper's u and its x go together), and the interval is reported as the range of u the data cannot reject.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.calibration.config import CalibrationConfig
from autovend.calibration.no_purchase import fit_no_purchase
from autovend.calibration.u_profile import ProfileData, UProfile, best_nuisance, mean_at, profile_u
from autovend.errors import InsufficientDataError


@dataclass(frozen=True)
class NoPurchase:
    """The no-purchase fit as the calibration records it (the scalars' u, x and e and their companions).

    u is the structural fit's, the paper's fallback, or the paper estimator's (`u_source`); c holds the machine
    scales c_m of the machines in the fit, at the u used.
    """

    u: float
    u_se: float
    u_source: str  # "estimated", "fallback" or "paper"
    u_at_bound: bool
    x: float
    e: float
    e_se: float
    x_all_machines: float
    c: pd.Series  # c_m of the machines of the structural fit (empty when no machine could enter it)
    u_machines: int
    u_machine_days: int
    profile: UProfile | None = None  # None when no fit was possible
    theta: float = 1.0  # the depletion exponent of estimated shelves (1 on known shelves)
    level: float = 1.0  # s: estimated shelves' attraction is s R (W / R) ** theta (1 on known shelves)


def _geomean_ratio(W_real: np.ndarray, R: np.ndarray, theta: float) -> float:
    ratio = (W_real / R) ** theta
    pos = ratio > 0
    return float(np.exp(np.mean(np.log(ratio[pos])))) if np.any(pos) else float("nan")


def no_purchase(
    W_fit: np.ndarray,
    W_real_fit: np.ndarray,
    md_m: np.ndarray,
    md_d: np.ndarray,
    demand: np.ndarray,
    R_hat: np.ndarray,
    config: CalibrationConfig,
    notes: list[str],
    *,
    depletion: bool,
) -> tuple[NoPurchase, str | None]:
    """U, x, e and the c_m (module docstring); returns them and why the prior was used (None: u estimated).

    `depletion`: the shelves were estimated from sales alone, so theta is estimated with u.
    """
    x_all = _geomean_ratio(W_real_fit, R_hat[md_m], 1.0)
    u_prior = config.u_fallback
    try:
        npf = fit_no_purchase(
            demand,
            W_fit,
            R_hat,
            md_m,
            W_real_fit,
            bounds=config.u_bounds,
            min_days=config.min_machine_days_u,
            min_machines=config.min_machines_u,
            day=md_d,
        )
    except InsufficientDataError as exc:
        if u_prior is None:
            raise
        notes.append(f"{exc}; the paper's u is used")
        u = float(u_prior)
        fallback = NoPurchase(u, float("nan"), "fallback", False, x_all, u / (u + x_all), float("nan"), x_all,
                              pd.Series(dtype=float), 0, 0)  # fmt: skip
        return fallback, str(exc)
    arrays = npf.arrays
    assert arrays is not None
    data = ProfileData(arrays.D, arrays.W, arrays.R, arrays.m, arrays.n_m, arrays.control, depletion, arrays.W_real)
    prof = profile_u(data, config.u_bounds, npf.u)
    codes = npf.c.index
    if prof.identified or u_prior is None:
        if not prof.identified:
            notes.append(f"u is not identified ({prof.reason}) and no prior is set: the profile's maximum is used")
        if not depletion:  # known shelves: the structural fit, as it always was
            return NoPurchase(npf.u, npf.u_se, "estimated", npf.at_bound, npf.x, npf.e, npf.e_se, x_all, npf.c,
                              npf.n_machines, npf.n_machine_days, prof, 1.0), None  # fmt: skip
        u, nuis = prof.u_hat, prof.nuisance
        x = data.x(nuis[0], nuis[2])
        why = None
        source = "estimated"
    else:
        u = float(u_prior)
        if depletion:  # the paper's shelf with the paper's u: the level s gives the borrowed x
            data = dataclasses.replace(data, level=config.x_prior)
        _, nuis = best_nuisance(data, float(np.log(u)), prof.nuisance)
        x = data.x(nuis[0], nuis[2]) if depletion else _geomean_ratio(arrays.W_real, arrays.R, 1.0)
        why = f"the records do not identify u: {prof.reason}"
        notes.append(f"{why}; the paper's u is used ({_range(prof)} cannot be rejected)")
        source = "fallback"
    _, _, f = mean_at(data, float(np.log(u)), nuis)
    c = np.bincount(data.m, weights=data.D, minlength=data.n_m) / np.maximum(
        np.bincount(data.m, weights=f, minlength=data.n_m), 1e-300
    )
    se = u * (np.log(prof.high) - np.log(prof.low)) / (2 * 1.959964) if prof.low and prof.high else float("nan")
    out = NoPurchase(
        u=u,
        u_se=float(se) if source == "estimated" else float("nan"),
        u_source=source,
        u_at_bound=prof.u_hat <= config.u_bounds[0] * 1.001 or prof.u_hat >= config.u_bounds[1] / 1.001,
        x=x,
        e=u / (u + x),
        e_se=float("nan"),
        x_all_machines=x_all,
        c=pd.Series(c, index=codes),
        u_machines=npf.n_machines,
        u_machine_days=npf.n_machine_days,
        profile=prof,
        theta=nuis[0],
        level=float(np.exp(nuis[2])) if not (depletion and data.level is not None) else data.attraction_level(nuis[0]),
    )
    return out, why


def _range(prof: UProfile) -> str:
    """The interval in words: 'u from 0.0085 to 0.037', open ends said."""
    low = f"{prof.low:.3g}" if prof.low is not None else "the search bound"
    high = f"{prof.high:.3g}" if prof.high is not None else "the search bound"
    return f"u from {low} to {high}"
