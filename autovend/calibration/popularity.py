"""Empirical-Bayes shrinkage of product popularity toward its subcategory.

Model: units_k ~ Poisson(omega_k * exposure_k), omega_k drawn from a prior shared by the products
of subcategory g. Two prior families are fitted per subcategory by maximum marginal likelihood over
its products with exposure:
- Gamma(shape alpha, rate beta): the conjugate choice; the marginal is negative binomial and the
  posterior mean is (alpha + units) / (beta + exposure);
- log-normal, log omega ~ N(mu, tau**2): heavier tailed, as product popularity usually is; marginal
  and posterior mean by adaptive Gauss-Hermite quadrature around each product's posterior mode.
The family with the higher maximised marginal likelihood is used (both have two parameters). Each fit
runs L-BFGS-B on the analytic gradient (the score) and ends with Newton steps on that score
(`solve.polish`), so the prior is the score's root to about 1e-13 and does not depend on where
L-BFGS-B stopped. Products with no exposure get the prior mean. A subcategory with fewer than
`min_products` exposed products borrows the pooled Gamma prior over all products, rescaled to its own
units per exposure.

Exposure-aware prior (`exposure_aware_shrink`): an operator that drops weak sellers fast leaves its
weak products with little exposure, so exposure itself says something about popularity, and a prior
centred on the subcategory mean overstates the sparsely exposed products. The prior is then put on
theta_k = omega_k / s_k with s_k = (exposure_k / typical exposure of its subcategory)^beta, one beta
shared by all subcategories: units_k ~ Poisson(theta_k * s_k * exposure_k), so every fit above applies
unchanged with the exposure s_k * exposure_k, and omega_k = s_k * theta_k. beta (0 gives `shrink`) is
the maximiser over `EXPOSURE_BETA_GRID` of the summed marginal likelihood under Gamma priors (fast); the
final priors are then fitted with every family at that beta. It is not the calibration's default
(`CalibrationConfig.popularity_prior = "exposure"` chooses it): on the synthetic operator it ranks the
products as a whole better but not the sparsely exposed ones (see tests/calibration/test_recovery.py).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from autovend.calibration.solve import polish
from autovend.errors import CalibrationError

GH_X, GH_W = np.polynomial.hermite.hermgauss(24)  # Gauss-Hermite rule of the log-normal prior's quadrature
MODE_STEPS = 60  # at most this many Newton steps to each product's posterior mode (monotone)
MODE_TOL = 1e-13  # ... stopping once no product's step exceeds this, relative to max(1, |log omega|)
GAMMA_BOUNDS = [(-8.0, 12.0), (-25.0, 25.0)]  # log shape, log rate
LOGNORMAL_BOUNDS = [(-30.0, 30.0), (float(np.log(0.01)), float(np.log(5.0)))]  # mu, log tau
BOUND_MARGIN = 1e-6  # an optimiser's estimate this close to a bound stays there (no polishing)


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


def nb_loglik(a: np.ndarray | float, b: np.ndarray | float, y: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Each product's negative-binomial marginal log-likelihood: units y, exposure e, a Gamma(a, b) prior on omega."""
    return (
        special.gammaln(a + y)
        - special.gammaln(a)
        + a * np.log(b)
        - (a + y) * np.log(b + e)
        - special.gammaln(y + 1)
        + y * np.log(e)
    )


def _gamma_negloglik(p: np.ndarray, y: np.ndarray, e: np.ndarray) -> float:
    a, b = np.exp(p)
    return -float(np.sum(nb_loglik(a, b, y, e)))


def _gamma_objective(p: np.ndarray, y: np.ndarray, e: np.ndarray) -> tuple[float, np.ndarray]:
    """`_gamma_negloglik` and its analytic gradient (minus `_gamma_score`), for L-BFGS-B."""
    return _gamma_negloglik(p, y, e), -_gamma_score(p, y, e)


def _posterior_nodes(mu: float, tau: float, y: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive Gauss-Hermite nodes z (log omega) and log weights per product, centred on its posterior mode.

    The log posterior y z - e exp(z) - (z - mu)^2 / (2 tau^2) is concave; its mode solves
    g(z) = y - e exp(z) - (z - mu) / tau^2 = 0 with g decreasing and concave, so Newton's method started
    right of the root (z0 = max(log((y + 1) / e), mu), where g < 0) descends to it monotonically. Nodes
    are placed by the curvature at the mode; the log weights include the integrand, so a row's
    logsumexp is the product's log marginal likelihood. The rule moves smoothly with (mu, tau): a fixed
    grid does not, and a well-measured product's posterior, narrower than the grid's spacing, made the
    marginal likelihood bumpy and its maximiser depend on 1-ulp differences.
    """
    t2 = tau * tau
    z = np.maximum(np.log((y + 1.0) / e), mu)
    for _ in range(MODE_STEPS):
        ez = np.exp(z)
        step = (y - e * ez - (z - mu) / t2) / (-e * ez - 1.0 / t2)
        z = z - step
        if np.all(np.abs(step) <= MODE_TOL * np.maximum(1.0, np.abs(z))):
            break  # Newton converges quadratically: z is the root to rounding
    sd = 1.0 / np.sqrt(e * np.exp(z) + 1.0 / t2)
    nodes = z[:, None] + np.sqrt(2.0) * sd[:, None] * GH_X[None, :]
    lam = e[:, None] * np.exp(nodes)
    log_w = (
        np.log(GH_W)[None, :]
        + GH_X[None, :] ** 2
        + np.log(np.sqrt(2.0) * sd)[:, None]
        + y[:, None] * (nodes + np.log(e)[:, None])
        - lam
        - special.gammaln(y + 1.0)[:, None]
        - 0.5 * ((nodes - mu) / tau) ** 2
        - np.log(tau * np.sqrt(2.0 * np.pi))
    )
    return nodes, log_w


def _lognormal_terms(mu: float, tau: float, y: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per product: log marginal likelihood and posterior mean of omega (adaptive Gauss-Hermite)."""
    nodes, log_w = _posterior_nodes(mu, tau, y, e)
    loglik = special.logsumexp(log_w, axis=1)
    w = np.exp(log_w - loglik[:, None])
    return loglik, np.sum(w * np.exp(nodes), axis=1)


def _fit_gamma(y: np.ndarray, e: np.ndarray) -> Prior | None:
    mean = y.sum() / e.sum()
    rates = y / e
    var = max(np.var(rates) - mean * np.mean(1.0 / e), 0.05 * mean**2)
    a0 = mean**2 / var
    res = optimize.minimize(
        _gamma_objective,
        np.log([a0, a0 / mean]),
        args=(y, e),
        method="L-BFGS-B",
        jac=True,
        bounds=GAMMA_BOUNDS,
    )
    if not np.isfinite(res.fun):
        return None
    p = _polished(
        res.x,
        lambda q: _gamma_score(q, y, e),
        GAMMA_BOUNDS,
        "the Gamma popularity prior",
        lambda q: _tight(_gamma_negloglik, q, GAMMA_BOUNDS, (y, e)),
    )
    a, b = np.exp(p)
    return Prior("gamma", float(a), float(b), -_gamma_negloglik(p, y, e))


def _fit_lognormal(y: np.ndarray, e: np.ndarray) -> Prior | None:
    rates = (y + 0.5) / e
    x0 = np.array([np.log(np.mean(rates)) - 0.5, np.log(max(np.std(np.log(rates)), 0.1))])

    def nll(p: np.ndarray) -> float:
        return -float(np.sum(_lognormal_terms(p[0], float(np.exp(p[1])), y, e)[0]))

    res = optimize.minimize(_lognormal_objective, x0, args=(y, e), method="L-BFGS-B", jac=True, bounds=LOGNORMAL_BOUNDS)
    if not np.isfinite(res.fun):
        return None
    p = _polished(
        res.x,
        lambda q: _lognormal_score(q, y, e),
        LOGNORMAL_BOUNDS,
        "the log-normal popularity prior",
        lambda q: _tight(lambda r: nll(r), q, LOGNORMAL_BOUNDS, ()),
    )
    return Prior("lognormal", float(p[0]), float(np.exp(p[1])), -nll(p))


def _gamma_score(p: np.ndarray, y: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Gradient of the negative-binomial marginal log-likelihood in (log shape, log rate)."""
    a, b = np.exp(p)
    d_a = np.sum(special.digamma(a + y) - special.digamma(a) + np.log(b) - np.log(b + e))
    d_b = np.sum(a / b - (a + y) / (b + e))
    return np.array([a * d_a, b * d_b])


def _lognormal_objective(p: np.ndarray, y: np.ndarray, e: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log-normal marginal log-likelihood in (mu, log tau) and its gradient, from one set of nodes.

    The gradient is minus `_lognormal_score` (posterior means of the prior's scores), the exact gradient
    of the marginal likelihood; it differs from the derivative of its Gauss-Hermite value by the rule's
    error only, which is far below L-BFGS-B's tolerances (the fit is then polished on the score anyway).
    """
    mu, tau = float(p[0]), float(np.exp(p[1]))
    nodes, log_w = _posterior_nodes(mu, tau, y, e)
    loglik = special.logsumexp(log_w, axis=1)
    w = np.exp(log_w - loglik[:, None])
    dev = (nodes - mu) / tau
    grad = np.array([float(np.sum(w * dev)) / tau, float(np.sum(w * (dev * dev - 1.0)))])
    return -float(np.sum(loglik)), -grad


def _lognormal_score(p: np.ndarray, y: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Gradient of the marginal log-likelihood in (mu, log tau): posterior means of the prior's scores."""
    mu, tau = float(p[0]), float(np.exp(p[1]))
    nodes, log_w = _posterior_nodes(mu, tau, y, e)
    w = np.exp(log_w - special.logsumexp(log_w, axis=1)[:, None])
    dev = (nodes - mu) / tau  # standardised log omega
    return np.array([float(np.sum(w * dev)) / tau, float(np.sum(w * (dev * dev - 1.0)))])


def _tight(fun: Callable[..., float], x0: np.ndarray, bounds: list[tuple[float, float]], args: tuple) -> np.ndarray:
    """L-BFGS-B from x0 with zero tolerances: it stops only where it cannot improve (or at a bound)."""
    res = optimize.minimize(fun, x0, args=args, method="L-BFGS-B", bounds=bounds, options={"ftol": 0.0, "gtol": 0.0})
    return np.asarray(res.x, dtype=float)


def _polished(
    x: np.ndarray,
    score: Callable[[np.ndarray], np.ndarray],
    bounds: list[tuple[float, float]],
    what: str,
    refit: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """x polished to the score's root (`solve.polish`), unless the optimiser stopped at a bound.

    A likelihood that is flat in some direction (a subcategory whose counts show no overdispersion
    pushes the Gamma shape towards infinity) has no interior root: the fit is then run again with
    tolerances of zero, which carries it to the bound it tends to, and kept there.
    """
    if any(min(v - lo, hi - v) < BOUND_MARGIN for v, (lo, hi) in zip(x, bounds, strict=True)):
        return np.asarray(x, dtype=float)
    try:
        return polish(score, x, what=what)
    except CalibrationError:
        return refit(x)


@functools.cache
def _blas_controller() -> object | None:
    """threadpoolctl's controller of the loaded BLAS libraries (made once), None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (threadpoolctl, in the pipeline extra; a no-op without it).

    L-BFGS-B's two-parameter steps call BLAS on vectors of two: a multi-threaded OpenBLAS wakes its
    threads for each and, on a busy 2-core machine, spends 10-30 ms a fit waiting on them, against
    about 1.5 ms on one thread. One thread gives the same values (the pipeline's determinism tests
    run with one BLAS thread).
    """
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):  # type: ignore[attr-defined]
        yield


def fit_prior(
    units: np.ndarray, exposure: np.ndarray, families: tuple[str, ...] = ("gamma", "lognormal")
) -> Prior | None:
    """The best prior (highest marginal likelihood) over the given families; None if none fits."""
    mask = exposure > 0
    y, e = units[mask].astype(float), exposure[mask].astype(float)
    if len(y) < 2 or y.sum() <= 0:
        return None
    fits = []
    with one_blas_thread():
        if "gamma" in families:
            fits.append(_fit_gamma(y, e))
        if "lognormal" in families:
            fits.append(_fit_lognormal(y, e))
    fitted = [f for f in fits if f is not None]
    return max(fitted, key=lambda f: f.loglik) if fitted else None


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


EXPOSURE_BETA_GRID = tuple(round(0.25 * i, 2) for i in range(9))  # 0, 0.25, ..., 2


def exposure_scale(exposure: np.ndarray, groups: np.ndarray, beta: float) -> np.ndarray:
    """s_k = (exposure_k / geometric-mean exposure of its group's exposed products)^beta; 1 without exposure."""
    exposure = np.asarray(exposure, dtype=float)
    s = np.ones(len(exposure))
    if beta == 0.0:
        return s
    for g in np.unique(groups):
        idx = np.flatnonzero((groups == g) & (exposure > 0))
        if len(idx):
            typical = np.exp(np.mean(np.log(exposure[idx])))
            s[idx] = (exposure[idx] / typical) ** beta
    return s


def _loglik(priors: dict[int, Prior], units: np.ndarray, exposure: np.ndarray, groups: np.ndarray) -> float:
    """Summed marginal log-likelihood of the units under each group's fitted prior (borrowed priors included)."""
    total = 0.0
    for g, prior in priors.items():
        idx = np.flatnonzero((groups == g) & (exposure > 0))
        if not len(idx):
            continue
        y, e = units[idx].astype(float), exposure[idx].astype(float)
        if prior.family == "gamma":
            total -= _gamma_negloglik(np.log([prior.a, prior.b]), y, e)
        else:
            total += float(np.sum(_lognormal_terms(prior.a, prior.b, y, e)[0]))
    return total


@dataclass(frozen=True)
class ExposurePrior:
    """The exposure-aware shrinkage: beta, each product's scale s_k and each group's prior on omega / s."""

    beta: float
    scale: np.ndarray
    priors: dict[int, Prior]
    loglik: float


def exposure_aware_shrink(
    units: np.ndarray,
    exposure: np.ndarray,
    groups: np.ndarray,
    min_products: int = 5,
    families: tuple[str, ...] = ("gamma", "lognormal"),
    betas: tuple[float, ...] = EXPOSURE_BETA_GRID,
) -> tuple[np.ndarray, ExposurePrior]:
    """Posterior-mean popularity under the exposure-aware prior (module docstring) and the fitted prior.

    Given s_k, units_k has `shrink`'s likelihood with exposure s_k * exposure_k: the marginal likelihood of
    the same units under each beta, so the betas compare by it (Gamma priors); the grid's first maximiser
    is taken, and the priors of `families` are fitted at it.
    """
    units = np.asarray(units, dtype=float)
    exposure = np.asarray(exposure, dtype=float)
    if not betas:
        raise ValueError("exposure_aware_shrink needs at least one beta")
    best_beta, best_ll = float(betas[0]), -np.inf
    for beta in betas:
        s = exposure_scale(exposure, groups, beta)
        _, priors = shrink(units, s * exposure, groups, min_products, ("gamma",))
        ll = _loglik(priors, units, s * exposure, groups)
        if ll > best_ll:
            best_beta, best_ll = float(beta), ll
    s = exposure_scale(exposure, groups, best_beta)
    theta, priors = shrink(units, s * exposure, groups, min_products, families)
    return s * theta, ExposurePrior(best_beta, s, priors, _loglik(priors, units, s * exposure, groups))
