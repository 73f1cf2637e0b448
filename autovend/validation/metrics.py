"""Validation metrics (§3.3): volume error, machine-week WAPE, subcategory TVD, within-machine Spearman.

A metric that cannot be computed (no sales to divide by, no machine with enough products) is NaN, never
a numpy warning; `spread` summarises per-seed values over the finite ones and is None when there are
none; `beats` compares an error with a reference's and is None when either is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

SPEARMAN_MIN_ITEMS = 5  # products a machine needs in the window for its within-machine Spearman


def wape(actual: np.ndarray, predicted: np.ndarray) -> float:
    """Weighted absolute percentage error: sum |v - v_hat| / sum v (eq. 5)."""
    actual = np.asarray(actual, dtype=float)
    denom = actual.sum()
    return float(np.abs(actual - np.asarray(predicted, dtype=float)).sum() / denom) if denom > 0 else float("nan")


def tvd(p: np.ndarray, q: np.ndarray) -> float:
    """Total variation distance between two distributions given as non-negative weights."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.sum() <= 0 or q.sum() <= 0:
        return float("nan")
    return float(0.5 * np.abs(p / p.sum() - q / q.sum()).sum())


def volume_error(actual_total: float, predicted_total: float) -> float:
    """Relative error of total volume: (predicted - actual) / actual."""
    return float((predicted_total - actual_total) / actual_total) if actual_total > 0 else float("nan")


def within_spearman(
    group: np.ndarray, n_groups: int, actual: np.ndarray, predicted: np.ndarray, min_items: int = SPEARMAN_MIN_ITEMS
) -> np.ndarray:
    """The Spearman correlation of items (products) within each group (machine), (n_groups,).

    NaN for a group with fewer than `min_items` items or with constant actual or predicted values.
    """
    out = np.full(n_groups, np.nan)
    order = np.argsort(group, kind="stable")
    g, a, p = group[order], actual[order], predicted[order]
    bounds = np.flatnonzero(np.diff(g)) + 1
    for idx_g, idx_a, idx_p in zip(np.split(g, bounds), np.split(a, bounds), np.split(p, bounds), strict=True):
        if len(idx_a) < min_items or np.ptp(idx_a) == 0 or np.ptp(idx_p) == 0:
            continue
        out[int(idx_g[0])] = stats.spearmanr(idx_a, idx_p)[0]
    return out


def median_within_spearman(
    group: np.ndarray, actual: np.ndarray, predicted: np.ndarray, min_items: int = SPEARMAN_MIN_ITEMS
) -> tuple[float, np.ndarray]:
    """Median over groups (machines) of the Spearman correlation of items (products) within each group.

    Groups with fewer than `min_items` items, or with constant actual or predicted values, are skipped.
    Returns (median, the per-group correlations of the groups kept, in group order).
    """
    if len(group) == 0:
        return float("nan"), np.zeros(0)
    codes, inverse = np.unique(group, return_inverse=True)
    rhos = within_spearman(inverse, len(codes), actual, predicted, min_items)
    rhos = rhos[np.isfinite(rhos)]
    return (float(np.median(rhos)) if len(rhos) else float("nan")), rhos


@dataclass(frozen=True)
class Spread:
    """Mean, standard deviation and 5% / 95% percentiles of per-seed values."""

    mean: float
    sd: float
    p05: float
    p95: float


def spread(values: np.ndarray | list[float]) -> Spread | None:
    """The spread of the finite values (NaN ones are seeds where the metric was not computed); None if none is."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return None
    return Spread(
        mean=float(np.mean(arr)),
        sd=float(np.std(arr)),
        p05=float(np.percentile(arr, 5)),
        p95=float(np.percentile(arr, 95)),
    )


def beats(error: float, reference: float) -> bool | None:
    """Whether an error (lower is better) is strictly below the reference's; None when either is not finite."""
    if not (math.isfinite(error) and math.isfinite(reference)):
        return None
    return bool(error < reference)
