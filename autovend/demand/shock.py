"""The persistent lognormal demand shock xi_{m,t} of §3.3: a normalised MA(5) of normals, exponentiated."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

SHOCK_LAGS = 5  # u_{m,t} sums z_{m,t-j} for j = 0..5


def ma_weights(rho: float) -> FloatArray:
    """Weights rho**j / sqrt(sum rho**2j), j = 0..5, so u has unit variance."""
    w = float(rho) ** np.arange(SHOCK_LAGS + 1)
    return w / np.sqrt(np.sum(w**2))


def latent_lag1_corr(rho: float) -> float:
    """Lag-one autocorrelation of the latent u for a given rho (slightly below rho: the MA is truncated)."""
    w = ma_weights(rho)
    return float(np.sum(w[:-1] * w[1:]))


def rho_from_latent_corr(corr: float) -> float:
    """Invert `latent_lag1_corr` on [0, 0.99]; correlations outside the reachable range are clipped."""
    lo, hi = 0.0, 0.99
    if corr <= 0.0:
        return 0.0
    if corr >= latent_lag1_corr(hi):
        return hi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if latent_lag1_corr(mid) < corr:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def sigma_from_r(r: float) -> float:
    """sigma with sigma**2 = ln(1 + 1/r): the lognormal shock whose variance is 1/r."""
    if r <= 0:
        raise ValueError(f"overdispersion r must be > 0, got {r}")
    return float(np.sqrt(np.log1p(1.0 / r)))


def shock_multiplier(z: npt.ArrayLike, sigma: float, rho: float) -> FloatArray:
    """xi = exp(sigma*u - sigma**2/2) from standard normals z of shape (..., T + 5).

    The last axis is time; the first five entries are the burn-in lags, so the result has shape
    (..., T). E[xi] = 1 and Var[xi] = exp(sigma**2) - 1.
    """
    z = np.asarray(z, dtype=float)
    n = z.shape[-1] - SHOCK_LAGS
    if n < 1:
        raise ValueError(f"need at least {SHOCK_LAGS + 1} normals on the last axis, got {z.shape[-1]}")
    w = ma_weights(rho)
    u = np.zeros(z.shape[:-1] + (n,))
    for j in range(SHOCK_LAGS + 1):
        u += w[j] * z[..., SHOCK_LAGS - j : SHOCK_LAGS - j + n]
    return np.exp(sigma * u - 0.5 * sigma**2)
