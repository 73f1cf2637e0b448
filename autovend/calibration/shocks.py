"""The persistent demand shock: overdispersion r (sigma**2 = ln(1 + 1/r)) and latent autocorrelation rho.

Residuals are taken against each machine-day's fitted expected demand mu (the structural fit of
`no_purchase`, which already carries shelf, price and calendar effects), rescaled per machine and
weekday so weekday patterns the model misses are removed. For a machine, with D the day's demand:
    Var(D) = mu + mu**2 / r   (Poisson noise plus the lognormal shock, Var(xi) = 1/r)
so 1/r_m = sum[(D - mu)**2 - P] / sum mu**2, with P the part of the variance of the day's demand total
that is not the shock's (Poisson noise; where censored demand was imputed, see `choice`, P also
carries the imputation's corrections). The paper takes the median of r_m over machines; we report
it (`r_median`) but estimate r pooled over machines, 1/r = sum_m sum_d [...] / sum_m sum_d mu**2:
per-machine variance estimates of a lognormal shock are right-skewed, so their median sits below
the mean and the median r is biased upward (by about 13% on the synthetic truth even with the true
demand and the true mu); the pooled ratio is not. Poisson noise
is independent across days, so lag-one cross-products of the residuals carry no Poisson part
(imputed days carry only the share beta of their shock, see the code, and are weighted accordingly):
    sum (D_t - mu_t)(D_{t+1} - mu_{t+1}) / sum mu_t mu_{t+1} = Cov(xi_t, xi_{t+1}) = exp(sigma**2 c) - 1
with c the lag-one correlation of the latent normal u. This removes the attenuation that Poisson noise
puts on the autocorrelation of counts; c is then mapped to rho through the MA(5) of §3.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.demand.shock import latent_lag1_corr, rho_from_latent_corr
from autovend.errors import InsufficientDataError


@dataclass(frozen=True)
class ShockFit:
    """Overdispersion and autocorrelation estimates with their per-machine detail."""

    r: float  # pooled over machines (ratio of sums): the generator's r, see module docstring
    r_median: float  # the paper's statistic: median of the per-machine r_m
    sigma: float
    rho: float
    latent_lag1: float  # c, the lag-one correlation of the latent normal
    xi_lag1_cov: float  # pooled Cov(xi_t, xi_{t+1})
    r_by_machine: pd.Series  # r_m (inf where the machine shows no overdispersion)
    naive_rho: float  # lag-one autocorrelation of the residual ratios D/mu (attenuated; for comparison)


def weekday_adjust(D: np.ndarray, mu: np.ndarray, machine: np.ndarray, weekday: np.ndarray) -> tuple[np.ndarray, int]:
    """mu rescaled so each machine x weekday has sum(mu) = sum(D); returns (mu', parameters per machine)."""
    key = machine.astype(np.int64) * 7 + weekday
    sd = pd.Series(D).groupby(key).transform("sum").to_numpy()
    sm = pd.Series(mu).groupby(key).transform("sum").to_numpy()
    return mu * np.where(sm > 0, sd / np.where(sm > 0, sm, 1.0), 1.0), 7


def fit_shocks(
    D: np.ndarray,
    mu: np.ndarray,
    poisson_var: np.ndarray,
    machine: np.ndarray,
    day: np.ndarray,
    weekday: np.ndarray,
    *,
    min_days: int,
) -> ShockFit:
    """Estimate r and rho from machine-day demand totals D, fitted means mu and Poisson variances."""
    counts = pd.Series(machine).value_counts()
    ok = counts.index[counts >= min_days]
    if len(ok) == 0:
        raise InsufficientDataError(
            f"the shock parameters r and rho need a machine with at least {min_days} days of records; "
            f"the longest has {int(counts.max()) if len(counts) else 0}"
        )
    sel = np.isin(machine, ok)
    D, mu, pv, machine, day, weekday = D[sel], mu[sel], poisson_var[sel], machine[sel], day[sel], weekday[sel]
    order = np.lexsort((day, machine))
    D, mu, pv, machine, day, weekday = (
        D[order],
        mu[order],
        pv[order],
        machine[order],
        day[order],
        weekday[order],
    )
    mu_adj, n_par = weekday_adjust(D, mu, machine, weekday)
    pv = pv * np.where(mu > 0, mu_adj / np.where(mu > 0, mu, 1.0), 1.0)
    resid = D - mu_adj
    df = pd.DataFrame({"m": machine, "ss": resid**2 - pv, "mu2": mu_adj**2, "n": 1})
    g = df.groupby("m").sum()
    # degrees of freedom: the weekday rescaling absorbs part of the residual variance
    dof = g["n"] / np.maximum(g["n"] - n_par, 1)
    inv_r = (g["ss"] * dof) / g["mu2"]
    r_m = pd.Series(np.where(inv_r > 0, 1.0 / np.where(inv_r > 0, inv_r, 1.0), np.inf), index=g.index)
    r_median = float(np.median(r_m))
    inv_pooled = float((g["ss"] * dof).sum() / g["mu2"].sum())
    r = 1.0 / inv_pooled if inv_pooled > 0 else float("inf")
    sigma2 = float(np.log1p(1.0 / r)) if np.isfinite(r) else 0.0
    # lag-one cross-products on consecutive days of the same machine
    nxt = (machine[1:] == machine[:-1]) & (day[1:] == day[:-1] + 1)
    # imputed demand carries only part of a heavily censored day's shock: the share of the day's demand
    # variance it keeps, beta = 1 - Var(D | data) / Var(D), scales its covariance with the next day
    cond_var = np.maximum(mu_adj - pv, 0.0)
    total_var = mu_adj + mu_adj**2 / r if np.isfinite(r) else mu_adj
    beta = np.clip(1.0 - cond_var / np.where(total_var > 0, total_var, 1.0), 0.05, 1.0)
    cross = resid[:-1][nxt] * resid[1:][nxt]
    norm = (beta * mu_adj)[:-1][nxt] * (beta * mu_adj)[1:][nxt]
    cov = float(cross.sum() / norm.sum()) if norm.sum() > 0 else 0.0
    c = float(np.log1p(cov) / sigma2) if sigma2 > 0 and cov > -1 else 0.0
    c = float(np.clip(c, 0.0, latent_lag1_corr(0.99)))
    rho = rho_from_latent_corr(c)
    ratio = D / np.where(mu_adj > 0, mu_adj, np.nan)
    a, b = ratio[:-1][nxt], ratio[1:][nxt]
    okr = np.isfinite(a) & np.isfinite(b)
    naive = float(np.corrcoef(a[okr], b[okr])[0, 1]) if okr.sum() > 2 else float("nan")
    return ShockFit(
        r=r,
        r_median=r_median,
        sigma=float(np.sqrt(sigma2)),
        rho=rho,
        latent_lag1=c,
        xi_lag1_cov=cov,
        r_by_machine=r_m,
        naive_rho=naive,
    )
