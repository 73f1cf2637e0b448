"""Drop-aware popularity prior, and the choice among the calibration's popularity priors.

The operator reviews its shelves and drops the products that sold least in the review window; a
product whose exposure ended that way is selected on its outcome. Given its units that selection is
ignorable in the likelihood (the operator's rule looks only at sales the records hold, apart from its
tie-break among equal sellers), so what it can change is the prior: the products the operator gave up on
are a different population from the ones it kept. `drop_aware_shrink` gives them their own prior
variance: per subcategory g, omega_k ~ Gamma(a_g, b_g) for kept products and Gamma(lam a_g, lam b_g)
for dropped ones (the same mean; variance divided by lam), with one lam shared by all subcategories.
For each lam on `DROP_LAMBDA_GRID` every subcategory's (a_g, b_g) is fitted by maximum marginal
likelihood (negative binomial, polished to the score's root like `popularity.shrink`'s Gamma fits);
the lam of the highest summed marginal likelihood is kept (lam = 1 is `shrink` with Gamma priors).
Subcategories with too few exposed products borrow `shrink`'s pooled prior as it does.

`popularity_by_prior` is the calibration's single entry point: it applies the prior that
`CalibrationConfig.popularity_prior` names ("subcategory": `shrink`, the default; "exposure":
`popularity.exposure_aware_shrink`; "dropped": `drop_aware_shrink`). The recovery test
(tests/calibration/test_recovery.py) states what each does on the synthetic operator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from autovend.calibration.popularity import (
    GAMMA_BOUNDS,
    Prior,
    _polished,
    _tight,
    exposure_aware_shrink,
    nb_loglik,
    shrink,
)
from autovend.distinct import distinct

DROP_LAMBDA_GRID = tuple(float(2.0 ** (i / 2)) for i in range(-6, 5))  # 0.125 ... 4 (1 included)


def dropped_products(k: np.ndarray, machine: np.ndarray, day: np.ndarray, n_products: int) -> np.ndarray:
    """True for each product the operator stopped offering (never on a shelf: False).

    Dropped: on every machine that carried it, its last day on the shelf comes before that machine's last
    day in the data. `k`, `machine` and `day` are integer codes of the cells (a product on a machine's shelf on a day).
    """
    offered, still_on = pair_flags(k, machine, day, n_products)
    return offered & ~still_on


def pair_flags(k: np.ndarray, machine: np.ndarray, day: np.ndarray, n_products: int) -> tuple[np.ndarray, np.ndarray]:
    """(offered, still on) per product: on some machine's shelf, and on one of them on that machine's last day.

    Machines are independent here, so the flags of blocks of machines combine by `or` (`dropped_products`).
    """
    k, machine, day = (np.asarray(v, dtype=np.int64) for v in (k, machine, day))
    offered = np.zeros(n_products, dtype=bool)
    still_on = np.zeros(n_products, dtype=bool)
    if len(k) == 0:
        return offered, still_on
    machine_last = np.full(int(machine.max()) + 1, -1, dtype=np.int64)
    np.maximum.at(machine_last, machine, day)
    pair = k * (int(machine.max()) + 1) + machine
    pairs, inverse = np.unique(pair, return_inverse=True)
    pair_last = np.full(len(pairs), -1, dtype=np.int64)
    np.maximum.at(pair_last, inverse, day)
    pair_k, pair_m = pairs // (int(machine.max()) + 1), pairs % (int(machine.max()) + 1)
    still_on[pair_k[pair_last >= machine_last[pair_m]]] = True
    offered[distinct(pair_k)] = True
    return offered, still_on


def _negloglik(p: np.ndarray, y: np.ndarray, e: np.ndarray, mult: np.ndarray) -> float:
    """Negative-binomial marginal log-likelihood with product k's Gamma prior (mult_k a, mult_k b)."""
    a, b = np.exp(p)[:, None] * mult[None, :]
    return -float(np.sum(nb_loglik(a, b, y, e)))


def _score(p: np.ndarray, y: np.ndarray, e: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Gradient of the marginal log-likelihood in (log a, log b)."""
    a, b = np.exp(p)[:, None] * mult[None, :]
    d_a = np.sum(a * (special.digamma(a + y) - special.digamma(a) + np.log(b) - np.log(b + e)))
    d_b = np.sum(a - b * (a + y) / (b + e))
    return np.array([d_a, d_b])


def _fit(y: np.ndarray, e: np.ndarray, mult: np.ndarray, start: Prior) -> Prior:
    """The subcategory's (a, b) at the given per-product multipliers, started from its `shrink` Gamma prior."""

    def nll(p: np.ndarray) -> float:
        return _negloglik(p, y, e, mult)

    x0 = np.clip(np.log([start.a, start.b]), [lo for lo, _ in GAMMA_BOUNDS], [hi for _, hi in GAMMA_BOUNDS])
    res = optimize.minimize(nll, x0, method="L-BFGS-B", bounds=GAMMA_BOUNDS)
    p = _polished(
        res.x,
        lambda q: _score(q, y, e, mult),
        GAMMA_BOUNDS,
        "the drop-aware popularity prior",
        lambda q: _tight(nll, q, GAMMA_BOUNDS, ()),
    )
    a, b = np.exp(p)
    return Prior("gamma", float(a), float(b), -nll(p))


@dataclass(frozen=True)
class DropPrior:
    """The drop-aware shrinkage: lam, each subcategory's prior for kept products, and the summed loglik."""

    lam: float
    priors: dict[int, Prior]  # dropped products of group g use Gamma(lam a, lam b)
    loglik: float


def _at(
    lam: float, y: np.ndarray, e: np.ndarray, groups: np.ndarray, dropped: np.ndarray, base: dict[int, Prior]
) -> tuple[dict[int, Prior], float]:
    """Every subcategory's prior refitted at lam (borrowed priors kept) and the summed marginal log-likelihood."""
    priors: dict[int, Prior] = {}
    total = 0.0
    for g, start in base.items():
        idx = np.flatnonzero((groups == g) & (e > 0))
        mult = np.where(dropped[idx], lam, 1.0)
        if math.isnan(start.loglik):
            priors[g] = start
            if len(idx):
                total -= _negloglik(np.log([start.a, start.b]), y[idx], e[idx], mult)
            continue
        priors[g] = _fit(y[idx], e[idx], mult, start)
        total += priors[g].loglik
    return priors, total


def drop_aware_shrink(
    units: np.ndarray,
    exposure: np.ndarray,
    groups: np.ndarray,
    dropped: np.ndarray,
    min_products: int = 5,
    lams: tuple[float, ...] = DROP_LAMBDA_GRID,
) -> tuple[np.ndarray, DropPrior]:
    """Posterior-mean popularity under the drop-aware prior (module docstring) and the fitted prior."""
    if not lams:
        raise ValueError("drop_aware_shrink needs at least one lam")
    y, e = np.asarray(units, dtype=float), np.asarray(exposure, dtype=float)
    dropped = np.asarray(dropped, dtype=bool)
    _, base = shrink(y, e, groups, min_products, ("gamma",))
    best: tuple[float, dict[int, Prior], float] | None = None
    for lam in lams:
        priors, ll = _at(float(lam), y, e, groups, dropped, base)
        if best is None or ll > best[2]:
            best = (float(lam), priors, ll)
    assert best is not None
    lam, priors, ll = best
    omega = np.zeros(len(y))
    for g, prior in priors.items():
        idx = np.flatnonzero(groups == g)
        mult = np.where(dropped[idx], lam, 1.0)
        omega[idx] = (mult * prior.a + y[idx]) / (mult * prior.b + e[idx])
    return omega, DropPrior(lam, priors, ll)


def popularity_by_prior(
    prior: str, units: np.ndarray, exposure: np.ndarray, groups: np.ndarray, dropped: np.ndarray | None = None
) -> tuple[np.ndarray, dict[int, Prior]]:
    """Shrunk popularity under the named prior (module docstring) and each subcategory's prior.

    `dropped` (`dropped_products`) is needed by the "dropped" prior only.
    """
    if prior == "subcategory":
        return shrink(units, exposure, groups)
    if prior == "exposure":
        omega, fitted = exposure_aware_shrink(units, exposure, groups)
        return omega, fitted.priors
    if prior == "dropped":
        if dropped is None:
            raise ValueError("the 'dropped' popularity prior needs each product's dropped flag")
        omega, dropped_fit = drop_aware_shrink(units, exposure, groups, dropped)
        return omega, dropped_fit.priors
    raise ValueError(f"unknown popularity prior {prior!r}: use 'subcategory', 'exposure' or 'dropped'")
