"""The block bootstrap over weeks: the intervals of a source of one or two machines.

The machine-cluster bootstrap (`autovend.validation.bootstrap`) resamples machines, and one or two machines are no
sample of machines. What such a source does have is weeks. The **circular block bootstrap** (Politis and Romano,
1992) resamples the W weeks of the test window in blocks of B consecutive weeks: ceil(W / B) block starts are drawn
uniformly from the W weeks with replacement, each block runs B weeks from its start (wrapping from the window's last
week to its first), and the blocks laid end to end are cut at W weeks. A resample is a vector of integer weights
over the weeks (how often each week was drawn) adding up to W, and every week has expected weight 1 (a moving-block
bootstrap, without the wrap, would draw the first and last weeks about half as often as the others). Every machine
and product of a drawn week comes with it (the machines are held together), and the weights apply to the grid's
week axis before any sum over weeks: in a resample a pair's window total is sum_w c_w units[p, w]. So every metric
of every forecast is scored on the same resamples, and a difference between two forecasts is paired, as with
machines.

Block length: B = max(1, round(W^(1/3))), the n^(1/3) rate at which the block bootstrap's variance estimate is best
(Hall, Horowitz and Jing, 1995) with constant 1; an 8-week window has blocks of 2 weeks, 27 weeks blocks of 3.
A block keeps neighbouring weeks, which share a machine's level and its persistent demand shock, together. With
fewer than MIN_WEEKS weeks there is no interval.

What it can tell: how far the scores would move over other weeks of these same machines, weeks like the window's.
Not how another machine would score, which is what the machine bootstrap estimates and no resampling of one
machine's weeks can. It is weaker evidence than a machine bootstrap's: an 8-week window makes 4 blocks a resample,
a percentile interval over so few units is too narrow, and weeks further apart than a block count as independent
when a level shift over the window makes them not.

Seeded from the stream ("validation-week-bootstrap",) of the validation's seed, integer draws only: the same weights
on every machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from autovend.rng import stream
from autovend.validation.grid import EvalGrid, Forecast, crps_cells
from autovend.validation.metrics import SPEARMAN_MIN_ITEMS

MIN_WEEKS = 4  # fewer test weeks give no interval: two blocks of two weeks say nothing of the spread
METHOD = "circular block bootstrap"


def block_length(n_weeks: int) -> int:
    """B = max(1, round(n_weeks^(1/3))): 1 for 1-3 weeks, 2 for 4-15, 3 for 16-42 (no cube root is ever x.5)."""
    return max(1, math.floor(n_weeks ** (1 / 3) + 0.5))


def block_starts(n_weeks: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, ceil(W / B)) the first week of each block of each resample, uniform over the W weeks."""
    n_blocks = -(-n_weeks // block_length(n_weeks))
    return stream(seed, "validation-week-bootstrap").integers(0, n_weeks, size=(n_boot, n_blocks))


def resampled_weeks(n_weeks: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, W) the weeks of each resample, in the order drawn.

    Block i covers positions i*B .. i*B + B - 1 (the last block cut at W); position i*B + j holds week
    (start_i + j) mod W.
    """
    B = block_length(n_weeks)
    pos = np.arange(n_weeks)
    return (block_starts(n_weeks, n_boot, seed)[:, pos // B] + pos % B) % n_weeks


def week_weights(n_weeks: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, W) how often each week is drawn in each resample (each row adds up to W)."""
    weeks = resampled_weeks(n_weeks, n_boot, seed)
    flat = (np.arange(n_boot)[:, None] * n_weeks + weeks).ravel()
    return np.bincount(flat, minlength=n_boot * n_weeks).reshape(n_boot, n_weeks).astype(np.int64)


@dataclass(frozen=True)
class WeekBootstrap:
    """The week bootstrap of a scorer: the window's weeks, the block length, the resamples (0: too few weeks)."""

    n_weeks: int
    block: int
    resamples: int

    @classmethod
    def of(cls, n_weeks: int, n_boot: int) -> WeekBootstrap:
        """The bootstrap of a window of `n_weeks` weeks: `n_boot` resamples, none below MIN_WEEKS weeks."""
        return cls(n_weeks, block_length(n_weeks), n_boot if n_weeks >= MIN_WEEKS else 0)

    @property
    def usable(self) -> bool:
        """Whether it gives intervals (the window has at least MIN_WEEKS weeks)."""
        return self.resamples > 0

    def payload(self) -> dict[str, Any]:
        """verdict.json's `resampling`: what was resampled and how."""
        return {
            "unit": "weeks",
            "method": "circular_block",
            "n_weeks": self.n_weeks,
            "block_weeks": self.block,
            "resamples": self.resamples,
            "min_weeks": MIN_WEEKS,
        }


@dataclass(frozen=True)
class WeekStats:
    """One forecast's errors and predictions by window week, summed over the machines: (W,), (G, W), (P, W)."""

    abs_w: np.ndarray  # |realised - forecast| over the machine-weeks of each week
    crps_w: np.ndarray  # the machine-weeks' CRPS
    total_w: np.ndarray  # forecast units
    g2_w: np.ndarray  # forecast units by subcategory
    pair_w: np.ndarray  # forecast units by pair


def week_stats(grid: EvalGrid, f: Forecast) -> WeekStats:
    """The weekly sums every metric of `f` is made of under week weights."""
    if grid.real_pw is None or f.pair_week is None:
        raise ValueError(
            f"the week bootstrap needs the pairs week by week: the grid's real_pw and forecast {f.name!r}'s pair_week"
        )
    g2 = np.zeros((grid.n_g2, grid.n_weeks))
    np.add.at(g2, grid.pair_g2, f.pair_week)
    return WeekStats(
        abs_w=np.abs(grid.real_mw - f.mw).sum(axis=0),
        crps_w=crps_cells(grid.real_mw, f).sum(axis=0),
        total_w=f.mw.sum(axis=0),
        g2_w=g2,
        pair_w=f.pair_week,
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.full(np.shape(num), np.nan), where=den > 0)


def row_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Spearman correlation of each row of `a` with the same row of `b` (B, n): Pearson's on average ranks.

    NaN for a row with fewer than SPEARMAN_MIN_ITEMS items or with constant values (as `within_spearman`).
    """
    out = np.full(a.shape[0], np.nan)
    if a.shape[1] < SPEARMAN_MIN_ITEMS:
        return out
    ra, rb = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    ok = (np.ptp(a, axis=1) > 0) & (np.ptp(b, axis=1) > 0)
    den = np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))
    out[ok] = (ra * rb).sum(axis=1)[ok] / den[ok]
    return out


def finite_median(values: np.ndarray) -> np.ndarray:
    """The median of each row's finite values (B, M) -> (B,), NaN for a row with none (and no numpy warning)."""
    B, M = values.shape
    n = np.isfinite(values).sum(axis=1)
    if M == 0:
        return np.full(B, np.nan)
    ordered = np.sort(np.where(np.isfinite(values), values, np.inf), axis=1)  # the finite values first
    rows = np.arange(B)
    lo, hi = np.maximum((n - 1) // 2, 0), np.minimum(n // 2, M - 1)
    return np.where(n > 0, (ordered[rows, lo] + ordered[rows, hi]) / 2, np.nan)


def week_metric_values(grid: EvalGrid, s: WeekStats, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric of one forecast under week weights (B, W): arrays of B values (`bootstrap.metric_values`)."""
    assert grid.real_pw is not None
    real = weights @ grid.real_mw.sum(axis=0)
    real_g2 = np.zeros((grid.n_g2, grid.n_weeks))
    np.add.at(real_g2, grid.pair_g2, grid.real_pw)
    y, f = weights @ real_g2.T, weights @ s.g2_w.T
    y_sh = _ratio(y, y.sum(axis=1, keepdims=True))
    f_sh = _ratio(f, f.sum(axis=1, keepdims=True))
    pair_error = np.abs(weights @ (grid.real_pw - s.pair_w).T).sum(axis=1)
    m_of_pair = grid.pair_machine
    rho = np.full((weights.shape[0], grid.n_machines), np.nan)
    for m in range(grid.n_machines):
        idx = np.flatnonzero((m_of_pair == m) & grid.ranked)
        rho[:, m] = row_spearman(weights @ grid.real_pw[idx].T, weights @ s.pair_w[idx].T)
    return {
        "wape": _ratio(weights @ s.abs_w, real),
        "tvd": 0.5 * np.abs(y_sh - f_sh).sum(axis=1),
        "spearman": finite_median(rho),
        "wape_product": _ratio(pair_error, real),
        "crps": _ratio(weights @ s.crps_w, real),
        "volume_error": _ratio(weights @ s.total_w - real, real),
    }
