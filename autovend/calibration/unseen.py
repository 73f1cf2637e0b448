"""Pairs that never sold: the exposure they would add to a product's popularity, on shelves estimated from sales.

Without inventory records a machine-product pair is seen only if it sold at least once (`availability` builds
chains for those pairs only): a product put on a machine and never bought there leaves no trace, so the slow
products' exposure is undercounted and their popularity inflated. Each observed pair p of product k, with
expected units mu_p = omega_k E_p over its chain (E_p: its exposure), stands for the pairs like it that sold
nothing: as many as exp(-mu_p) / (1 - exp(-mu_p)) of them in expectation (a zero-truncated Poisson count, the
EM of missing zero counts). The product's exposure becomes sum_p E_p / (1 - exp(-mu_p)), and omega_k the root of

    omega_k = (units_k + a) / (sum_p E_p / (1 - exp(-omega_k E_p)) + a),

a the split's pseudo-units (`CalibrationConfig.mm_pseudo_units`), found by fixed-point steps from the plain
estimate (each step lowers omega, and the map is monotone, so they converge from above). Fast sellers' pairs are
not corrected (exp(-mu) is nil); a product whose every pair sold once is pulled far down, and the
empirical-Bayes shrinkage that follows brings it back toward its subcategory. The assumption, stated: the pairs
never seen were offered like the pairs seen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autovend.calibration.censored import bincount
from autovend.calibration.choice import ChoiceData, choice_of
from autovend.calibration.split import attraction, positive_or_one

STEPS = 200  # fixed-point steps at most
TOL = 1e-12  # relative change of every omega below which the steps stop


def block_pair_exposure(block: Any, table: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(product of each pair, exposure of each pair) of a block's split cells (`split.attraction`'s table)."""
    return pair_exposure(choice_of(block), table, omega)


def pair_exposure(data: ChoiceData, table: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(product of each pair, exposure of each pair): expected units per unit of omega over the pair's cells."""
    n_md = len(data.md_m)
    v = attraction(data, table)
    V = bincount(data.cell_md, v, n_md)
    total = bincount(data.cell_md, data.y, n_md)
    ex = total[data.cell_md] * v / positive_or_one(V[data.cell_md]) / positive_or_one(omega[data.k].copy())
    pair_key = data.md_m[data.cell_md].astype(np.int64) * data.n_products + data.k
    keys, pair = np.unique(pair_key, return_inverse=True)
    return (keys % data.n_products).astype(np.int64), bincount(pair, ex, len(keys))


def unseen_corrected(
    units: np.ndarray, pair_k: np.ndarray, exposure: np.ndarray, pseudo_units: float
) -> tuple[np.ndarray, np.ndarray]:
    """(omega, exposure) per product (K,) with the pairs never seen added (module docstring)."""
    K = len(units)
    plain = bincount(pair_k, exposure, K)
    omega = (units + pseudo_units) / (plain + pseudo_units)
    omega = np.where(plain > 0, omega, 0.0)
    for _ in range(STEPS):
        mu = omega[pair_k] * exposure
        grossed = exposure / np.maximum(-np.expm1(-mu), 1e-300)  # E / (1 - exp(-mu))
        grossed = np.where(mu > 1e-300, grossed, exposure)
        den = bincount(pair_k, grossed, K)
        new = np.where(plain > 0, (units + pseudo_units) / (den + pseudo_units), 0.0)
        done = np.all(np.abs(new - omega) <= TOL * np.maximum(omega, 1e-300))
        omega = new
        if done:
            break
    mu = omega[pair_k] * exposure
    grossed = np.where(mu > 1e-300, exposure / np.maximum(-np.expm1(-mu), 1e-300), exposure)
    return omega, bincount(pair_k, grossed, K)
