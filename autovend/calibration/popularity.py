"""Empirical-Bayes shrinkage of product popularity toward its subcategory.

Model: units_k ~ Poisson(omega_k * exposure_k), omega_k drawn from a prior shared by the products
of subcategory g. Two prior families are fitted per subcategory by maximum marginal likelihood over
its products with exposure:
- Gamma(shape alpha, rate beta): the conjugate choice; the marginal is negative binomial and the
  posterior mean is (alpha + units) / (beta + exposure);
- log-normal, log omega ~ N(mu, tau**2): heavier tailed, as product popularity usually is; marginal
  and posterior mean by quadrature on a fine grid of log omega.
The family with the higher maximised marginal likelihood is used (both have two parameters). Products
with no exposure get the prior mean. A subcategory with fewer than `min_products` exposed products
borrows the pooled Gamma prior over all products, rescaled to its own units per exposure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

GRID = np.linspace(-7.0, 7.0, 1401)  # standardised log-popularity grid for the log-normal prior


@dataclass(frozen=True)
class Prior:
    """A fitted prior: family 'gamma' (a = shape, b = rate) or 'lognormal' (a = mu, b = tau)."""

    family: str
    a: float
    b: float
    loglik: float

    @property
    def mean(self) -> float:
        """Prior mean of omega."""
        if self.family == "gamma":
            return self.a / self.b
        return float(np.exp(self.a + 0.5 * self.b**2))


def _gamma_negloglik(p: np.ndarray, y: np.ndarray, e: np.ndarray) -> float:
    a, b = np.exp(p)
    ll = (
        special.gammaln(a + y)
        - special.gammaln(a)
        + a * np.log(b)
        - (a + y) * np.log(b + e)
        - special.gammaln(y + 1)
        + y * np.log(e)
    )
    return -float(np.sum(ll))


def _lognormal_terms(mu: float, tau: float, y: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per product: log marginal likelihood and posterior mean, by quadrature on GRID."""
    z = mu + tau * GRID  # log omega
    lam = np.exp(z)[None, :] * e[:, None]
    logp = (
        y[:, None] * np.log(np.maximum(lam, 1e-300)) - lam - special.gammaln(y + 1)[:, None] - 0.5 * GRID[None, :] ** 2
    )
    mx = logp.max(axis=1, keepdims=True)
    w = np.exp(logp - mx)
    dz = GRID[1] - GRID[0]
    norm = w.sum(axis=1)
    loglik = mx[:, 0] + np.log(norm * dz / np.sqrt(2 * np.pi))
    post = (w * np.exp(z)[None, :]).sum(axis=1) / norm
    return loglik, post


def _fit_gamma(y: np.ndarray, e: np.ndarray) -> Prior | None:
    mean = y.sum() / e.sum()
    rates = y / e
    var = max(np.var(rates) - mean * np.mean(1.0 / e), 0.05 * mean**2)
    a0 = mean**2 / var
    res = optimize.minimize(
        _gamma_negloglik,
        np.log([a0, a0 / mean]),
        args=(y, e),
        method="L-BFGS-B",
        bounds=[(-8, 12), (-25, 25)],
    )
    if not np.isfinite(res.fun):
        return None
    a, b = np.exp(res.x)
    return Prior("gamma", float(a), float(b), -float(res.fun))


def _fit_lognormal(y: np.ndarray, e: np.ndarray) -> Prior | None:
    rates = (y + 0.5) / e
    x0 = np.array([np.log(np.mean(rates)) - 0.5, np.log(max(np.std(np.log(rates)), 0.1))])

    def nll(p: np.ndarray) -> float:
        return -float(np.sum(_lognormal_terms(p[0], float(np.exp(p[1])), y, e)[0]))

    res = optimize.minimize(nll, x0, method="L-BFGS-B", bounds=[(-30, 30), (np.log(0.01), np.log(5.0))])
    if not np.isfinite(res.fun):
        return None
    return Prior("lognormal", float(res.x[0]), float(np.exp(res.x[1])), -float(res.fun))


def fit_prior(
    units: np.ndarray, exposure: np.ndarray, families: tuple[str, ...] = ("gamma", "lognormal")
) -> Prior | None:
    """The best prior (highest marginal likelihood) over the given families; None if none fits."""
    mask = exposure > 0
    y, e = units[mask].astype(float), exposure[mask].astype(float)
    if len(y) < 2 or y.sum() <= 0:
        return None
    fits = []
    if "gamma" in families:
        fits.append(_fit_gamma(y, e))
    if "lognormal" in families:
        fits.append(_fit_lognormal(y, e))
    fits = [f for f in fits if f is not None]
    return max(fits, key=lambda f: f.loglik) if fits else None


def posterior_mean(prior: Prior, units: np.ndarray, exposure: np.ndarray) -> np.ndarray:
    """Posterior mean of omega for each product under `prior` (the prior mean where exposure is 0)."""
    units = units.astype(float)
    exposure = exposure.astype(float)
    if prior.family == "gamma":
        return (prior.a + units) / (prior.b + exposure)
    out = np.full(len(units), prior.mean)
    pos = exposure > 0
    if np.any(pos):
        out[pos] = _lognormal_terms(prior.a, prior.b, units[pos], exposure[pos])[1]
    return out


def shrink(
    units: np.ndarray,
    exposure: np.ndarray,
    groups: np.ndarray,
    min_products: int = 5,
    families: tuple[str, ...] = ("gamma", "lognormal"),
) -> tuple[np.ndarray, dict[int, Prior]]:
    """Posterior-mean popularity per product and the prior used for each group (subcategory code)."""
    omega = np.zeros(len(units))
    priors: dict[int, Prior] = {}
    pooled = fit_prior(units, exposure, ("gamma",))
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        u, e = units[idx], exposure[idx]
        prior = fit_prior(u, e, families) if int(np.sum(e > 0)) >= min_products else None
        if prior is None:
            level = u.sum() / e.sum() if e.sum() > 0 and u.sum() > 0 else (pooled.mean if pooled else 1.0)
            shape = pooled.a if pooled is not None else 1.0
            prior = Prior("gamma", shape, shape / level, float("nan"))
        priors[int(g)] = prior
        omega[idx] = posterior_mean(prior, u, e)
    return omega, priors
