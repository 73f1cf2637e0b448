"""The two estimators of u, e, x, r and the machine scales kappa: `structural` (the default) and `paper`.

`structural` (see `calibrate`): u and the machine scales c_m = U_m from a structural Poisson fit of the
imputed demand (sales grossed up for sold-out days), e = u / (u + x) implied by that fit, and r pooled
over machines (`shocks`). It is the default because it recovers the synthetic operator's truth.

`paper` follows the definitions of the paper's §3.3 literally:
- x: the geometric mean ratio of real-shelf attraction to the reference shelf's, over every machine-day;
- e: the within-machine log-log slope of daily units on shelf attraction (`no_purchase.loglog_elasticity`,
  reported as `e_loglog` by both estimators);
- u = x e / (1 - e);
- kappa_m: a typical real shelf (attraction x R_m) at reference prices and neutral weather sells the
  machine's observed mean daily units. Expected units on a shelf of attraction W are U W / (U + W) with
  U = u R_m, so on the typical shelf they are R_m u x / (u + x) = R_m x e, and kappa_m = units_m / (x e R_m)
  (R_m here with kappa = 1);
- r: the median of the per-machine overdispersions r_m (`r_median`, reported by both); sigma^2 = ln(1 + 1/r).
rho is the same latent lag-one estimate under both (the paper's "lag-one residual autocorrelation").

A calibration records `estimator` in calibration.json only when it is not the default, so a default
calibration's bytes are those of calibrations made before the switch existed (`Estimates.estimator` reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from autovend.errors import InsufficientDataError

Estimator = Literal["structural", "paper"]
ESTIMATORS: tuple[str, ...] = ("structural", "paper")
DEFAULT_ESTIMATOR: Estimator = "structural"


def check_estimator(name: str) -> Estimator:
    """`name` if it is an estimator, else a ValueError that lists them."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; choose one of: {', '.join(ESTIMATORS)}")
    return name  # type: ignore[return-value]


@dataclass(frozen=True)
class PaperEstimates:
    """The paper's u, e, x, r and per-machine scales (kappa with R_m at kappa = 1; c = U_m = u kappa R_m)."""

    u: float
    u_se: float
    e: float
    e_se: float
    x: float
    r: float
    sigma: float
    kappa: np.ndarray  # (M,)
    c: np.ndarray  # (M,)


def paper_estimates(
    x_all: float, e_loglog: float, e_loglog_se: float, r_median: float, mean_units: np.ndarray, R_hat: np.ndarray
) -> PaperEstimates:
    """The paper's estimates from the quantities both estimators compute (module docstring).

    Raises InsufficientDataError when they do not define a finite u and positive scales: e_loglog
    outside (0, 1), x not positive, r_median not positive and finite, or a machine with no units.
    """
    fix = "; calibrate with --estimator structural instead"
    if not (np.isfinite(e_loglog) and 0.0 < e_loglog < 1.0):
        raise InsufficientDataError(
            f"the paper's estimator needs a log-log elasticity e_loglog strictly between 0 and 1 "
            f"(u = x e / (1 - e)); this source gives {e_loglog:.4g}{fix}"
        )
    if not (np.isfinite(x_all) and x_all > 0.0):
        raise InsufficientDataError(f"the paper's estimator needs real shelves with attraction (x > 0){fix}")
    if not (np.isfinite(r_median) and r_median > 0.0):
        raise InsufficientDataError(
            f"the paper's estimator takes r as the median overdispersion r_m over machines; this source gives "
            f"{r_median:.4g} (no machine is overdispersed){fix}"
        )
    units = np.asarray(mean_units, dtype=float)
    R = np.asarray(R_hat, dtype=float)
    bad = ~(np.isfinite(units) & (units > 0) & (R > 0))
    if bad.any():
        raise InsufficientDataError(
            f"the paper's estimator sets each machine's scale from its observed mean daily units; machine "
            f"position(s) {np.flatnonzero(bad).tolist()} have no units or no reference shelf{fix}"
        )
    e = float(e_loglog)
    u = x_all * e / (1.0 - e)
    kappa = units / (x_all * e * R)
    return PaperEstimates(
        u=float(u),
        u_se=float(x_all * e_loglog_se / (1.0 - e) ** 2),  # delta method in e (x taken as known)
        e=e,
        e_se=float(e_loglog_se),
        x=float(x_all),
        r=float(r_median),
        sigma=float(np.sqrt(np.log1p(1.0 / r_median))),
        kappa=kappa,
        c=u * kappa * R,
    )
