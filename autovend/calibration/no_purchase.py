"""The no-purchase weight U_m = u * R_m (§3.3) and the shelf-attraction elasticity e.

Eq. (3) with b = kappa_m * b_hat gives, for a machine-day, expected demand
    E[N] = xi * kappa * u * R_hat * W_hat / (u * R_hat + W_hat) = c_m * W_hat / (u * R_hat + W_hat)
where W_hat is the real shelf's attraction with kappa = 1 and R_hat the reference shelf's. u is
common to all machines; c_m is free per machine. The local elasticity of units to W is
U / (U + W), which is not constant: it nears 1 on days when shelves run low. A log-log slope over all
days is therefore not the elasticity of the typical shelf, and a u built from it is biased. We fit the
structural form instead: Poisson maximum likelihood of the machine-day demand totals (censored demand
imputed, see `choice`) over u and the c_m, profiling the c_m out in closed form and maximising over
log u. Its standard error is a sandwich clustered by machine (overdispersion and serial correlation
of the shock are left in the residuals), using the efficient score of log u after profiling.

x is the geometric mean over machine-days of W_real / R (real shelf at reference prices and neutral
weather over the reference shelf), and e = u / (u + x) is the elasticity at that typical shelf, so that
u = x e / (1 - e) as in the paper. The paper's own statistic, the within-machine log-log slope of daily
units on shelf attraction with machine and weekday fixed effects, is reported beside it as `e_loglog`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize

from autovend.calibration.solve import polish
from autovend.errors import InsufficientDataError

BOUND_MARGIN = 1e-3  # log u this close to a bound is reported at the bound (not identified), not polished
CONTROL_FLOOR = 0.05  # the control function's factor 1 + lambda (r_{t-1} - 1) is kept above this


@dataclass(frozen=True)
class FitArrays:
    """The machine-days a fit used (aligned arrays; machines coded 0..n_m-1 in the order of `NoPurchaseFit.c`)."""

    D: np.ndarray
    W: np.ndarray
    R: np.ndarray
    W_real: np.ndarray
    m: np.ndarray
    n_m: int
    control: np.ndarray | None  # the shock control's regressor (None: no control)


@dataclass(frozen=True)
class NoPurchaseFit:
    """u with its standard error, the machines' c_m, and x, e consistent with u."""

    u: float
    u_se: float
    c: pd.Series  # by machine code
    x: float
    e: float
    e_se: float
    n_machines: int
    n_machine_days: int
    loglik: float
    at_bound: bool
    shock_control: float = 0.0  # lambda of the control function (0: none)
    arrays: FitArrays | None = None  # what the fit used, for its profile (`u_profile`)


def _profile(
    log_u: float,
    D: np.ndarray,
    W: np.ndarray,
    R: np.ndarray,
    m: np.ndarray,
    n_m: int,
    control: np.ndarray | None = None,
    lam: float = 0.0,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Poisson log-likelihood with the c_m profiled out; f carries the control-function factor if given."""
    u = np.exp(log_u)
    f = W / (u * R + W)
    if control is not None:
        f = f * np.maximum(1.0 + lam * (control - 1.0), CONTROL_FLOOR)
    c = np.bincount(m, weights=D, minlength=n_m) / np.maximum(np.bincount(m, weights=f, minlength=n_m), 1e-300)
    mu = c[m] * f
    pos = D > 0
    ll = float(np.sum(D[pos] * np.log(mu[pos])) - np.sum(mu))
    return ll, c, f


def _score(
    log_u: float | np.ndarray,
    D: np.ndarray,
    W: np.ndarray,
    R: np.ndarray,
    m: np.ndarray,
    n_m: int,
    control: np.ndarray | None = None,
    lam: float | np.ndarray = 0.0,
) -> np.ndarray:
    """Gradient of `_profile`'s log-likelihood in log u (and lambda when `control` is given).

    The c_m are profiled out, so by the envelope theorem the gradient is that of the log-likelihood
    with c_m held at their profile values: sum (D - mu) d log f / d theta.
    """
    t = float(np.asarray(log_u).reshape(-1)[0])
    la = float(np.asarray(lam).reshape(-1)[0])
    _, c, f = _profile(t, D, W, R, m, n_m, control, la)
    resid = D - c[m] * f
    u = np.exp(t)
    d_log_u = -float(np.sum(resid * (u * R / (u * R + W))))
    if control is None:
        return np.array([d_log_u])
    h = 1.0 + la * (control - 1.0)
    d_lam = float(np.sum(np.where(h > CONTROL_FLOOR, resid * (control - 1.0) / np.maximum(h, CONTROL_FLOOR), 0.0)))
    return np.array([d_log_u, d_lam])


def fit_no_purchase(
    demand: np.ndarray,
    W_hat: np.ndarray,
    R_hat_m: np.ndarray,
    machine: np.ndarray,
    W_real: np.ndarray,
    *,
    bounds: tuple[float, float],
    min_days: int,
    min_machines: int,
    day: np.ndarray | None = None,
) -> NoPurchaseFit:
    """Fit u on machine-days (arrays aligned by machine-day; `R_hat_m` indexed by machine code).

    With `day`, the persistent shock is controlled for: a day's shelf is low after days of high sales,
    and the shock of those days carries over (rho > 0), so shelf attraction and today's shock are
    negatively correlated and a plain fit understates u (by about 5% on the synthetic truth even with the
    true demand). The control function multiplies the mean by 1 + lambda (r_{t-1} - 1), r_{t-1} being the
    previous day's demand over its plain-fit mean (1 where there is no previous day), with lambda fitted
    jointly with u. Its standard error treats lambda as known.
    """
    counts = pd.Series(machine).value_counts()
    ok_m = counts.index[counts >= min_days].to_numpy()
    if len(ok_m) < min_machines:
        raise InsufficientDataError(
            f"the no-purchase weight u needs at least {min_machines} machines with {min_days}+ days of known "
            f"shelves; the source has {len(ok_m)} (add inventory records, or a longer period)"
        )
    sel = np.isin(machine, ok_m) & (W_hat > 0)
    codes, m = np.unique(machine[sel], return_inverse=True)
    D, W, R = demand[sel], W_hat[sel], R_hat_m[machine[sel]]
    n_m = len(codes)
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    res = optimize.minimize_scalar(
        lambda t: -_profile(t, D, W, R, m, n_m)[0], bounds=(lo, hi), method="bounded", options={"xatol": 1e-6}
    )
    log_u = float(res.x)
    if min(log_u - lo, hi - log_u) >= BOUND_MARGIN:
        log_u = float(polish(lambda p: _score(p, D, W, R, m, n_m), log_u, what="the no-purchase weight u")[0])
    control, lam = None, 0.0
    if day is not None:
        _, c0, f0 = _profile(log_u, D, W, R, m, n_m)
        ratio = D / np.maximum(c0[m] * f0, 1e-12)
        d = day[sel]
        prev = np.ones(len(D))
        same = np.r_[False, (m[1:] == m[:-1]) & (d[1:] == d[:-1] + 1)]
        prev[same] = ratio[:-1][same[1:]]
        control = np.minimum(prev, 10.0)
        joint = optimize.minimize(
            lambda p: -_profile(p[0], D, W, R, m, n_m, control, p[1])[0],
            x0=np.array([log_u, 0.1]),
            method="Nelder-Mead",
            options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 400},
        )
        log_u, lam = float(np.clip(joint.x[0], lo, hi)), float(joint.x[1])
        if min(log_u - lo, hi - log_u) >= BOUND_MARGIN:
            log_u, lam = (
                float(v)
                for v in polish(
                    lambda p: _score(p[0], D, W, R, m, n_m, control, p[1]),
                    np.array([log_u, lam]),
                    what="the no-purchase weight u with its shock control",
                )
            )
    at_bound = bool(min(log_u - lo, hi - log_u) < BOUND_MARGIN)
    ll, c, f = _profile(log_u, D, W, R, m, n_m, control, lam)
    u = float(np.exp(log_u))
    mu = c[m] * f
    g = u * R / (u * R + W)  # -d log f / d log u (the control factor does not depend on u)
    gbar = np.bincount(m, weights=mu * g, minlength=n_m) / np.bincount(m, weights=mu, minlength=n_m)
    s_eff = (D - mu) * (gbar[m] - g)
    info = float(np.sum(mu * (g - gbar[m]) ** 2))
    meat = float(np.sum(np.bincount(m, weights=s_eff, minlength=n_m) ** 2))
    se_log_u = np.sqrt(meat) / info if info > 0 else np.inf
    # x over the same machine-days; e at the typical shelf and its delta-method standard error
    ratio = W_real[sel] / R
    x = float(np.exp(np.mean(np.log(ratio[ratio > 0]))))
    e = u / (u + x)
    e_se = x / (u + x) ** 2 * u * se_log_u
    return NoPurchaseFit(
        u=u,
        u_se=u * se_log_u,
        c=pd.Series(c, index=codes),
        x=x,
        e=e,
        e_se=float(e_se),
        n_machines=n_m,
        n_machine_days=int(sel.sum()),
        loglik=ll,
        at_bound=at_bound,
        shock_control=lam,
        arrays=FitArrays(D, W, R, W_real[sel], m, n_m, control),
    )


def loglog_elasticity(
    units: np.ndarray, W: np.ndarray, machine: np.ndarray, weekday: np.ndarray
) -> tuple[float, float]:
    """The paper's statistic: OLS slope of log units on log W with machine and weekday fixed effects.

    Days with no sales are dropped (the log is undefined). Returns (slope, standard error clustered by
    machine; heteroskedasticity-robust with one machine). The slope and its standard error are those of
    the regression with a dummy per machine and weekday (statsmodels' OLS with `C(m) + C(wd)`, CR1 or HC1
    small-sample factors with the dummies counted), computed by Frisch-Waugh-Lovell: the machine effects
    are removed by demeaning within each machine and the weekday dummies partialled out, so memory grows
    with the machine-days, not with machine-days x machines.
    """
    ok = (units > 0) & (W > 0)
    m_codes, m = np.unique(machine[ok], return_inverse=True)
    if len(m_codes) < 1 or ok.sum() < 10:
        return float("nan"), float("nan")
    wd_codes, wd = np.unique(weekday[ok], return_inverse=True)
    n, G = int(ok.sum()), len(m_codes)
    count = np.bincount(m, minlength=G).astype(float)

    def within(x: np.ndarray) -> np.ndarray:
        return x - (np.bincount(m, weights=x, minlength=G) / count)[m]

    y = within(np.log(units[ok].astype(float)))
    x = within(np.log(W[ok]))
    dummies = np.column_stack([within((wd == j).astype(float)) for j in range(1, len(wd_codes))] or [np.zeros(n)])
    if len(wd_codes) > 1:
        y = y - dummies @ np.linalg.lstsq(dummies, y, rcond=None)[0]
        x = x - dummies @ np.linalg.lstsq(dummies, x, rcond=None)[0]
    xx = float(x @ x)
    if xx <= 0:
        return float("nan"), float("nan")
    slope = float(x @ y) / xx
    resid = y - slope * x
    k = G + len(wd_codes)  # intercept, G - 1 machine and W - 1 weekday dummies, log W
    if G >= 2:
        meat = float(np.sum(np.bincount(m, weights=x * resid, minlength=G) ** 2))
        factor = G / (G - 1.0) * (n - 1.0) / (n - k)
    else:  # one machine: no clusters to speak of
        meat = float(np.sum((x * resid) ** 2))
        factor = n / (n - k)
    return slope, float(np.sqrt(factor * meat) / xx)
