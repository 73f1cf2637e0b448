"""Scores of forecasts on the grid, with machine-cluster bootstrap intervals and paired differences.

Every metric is a function of per-machine sums, so a bootstrap resample of machines (drawn with
replacement, each machine with all of its weeks and products: the cluster) is a vector of integer weights
over the machines, and all forecasts are scored on the same resamples: a difference between two
forecasts is taken resample by resample (paired). Intervals are percentile intervals (2.5% and 97.5%).
With fewer than MIN_MACHINES machines the resamples are of weeks instead (`autovend.validation.weeks`: a
circular block bootstrap over the test window's weeks, the machines held together), the same way paired.

Metrics (lower is better but for the Spearman):

- `wape`: machine-week WAPE of the mean forecast (eq. 5);
- `tvd`: total variation distance between the realised and forecast subcategory shares;
- `spearman`: median over machines of the within-machine Spearman correlation of product sales;
- `wape_product`: WAPE over machine x product pairs, each summed over the window: it fails a forecast whose
  totals are right but whose products are wrong;
- `crps`: the machine-week CRPS of the replay's distribution over seeds, summed and divided by the realised
  units (for a point forecast it equals the WAPE), which scores the spread as well as the level;
- `volume_error`: (forecast - realised) / realised over all cells (reported, not compared).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autovend.rng import stream
from autovend.validation.grid import EvalGrid, Forecast, crps_by_machine
from autovend.validation.metrics import within_spearman
from autovend.validation.weeks import WeekBootstrap, week_metric_values, week_stats, week_weights

METRICS = ("wape", "tvd", "spearman", "wape_product", "crps", "volume_error")
COMPARED = ("wape", "tvd", "spearman", "wape_product", "crps")
HIGHER_IS_BETTER = frozenset({"spearman"})
LEVEL = 0.95
MIN_MACHINES = 3  # fewer machines: no machine-cluster interval (one or two clusters say nothing of the spread),
# the week bootstrap's instead
EXACT_BELOW = 20  # with fewer machines every comparison also gets the exact sign-flip test (`sign_flip_p`)
ALL_FLIPS_UP_TO = 16  # machines up to which every one of the 2^M sign vectors is taken
FLIP_DRAWS = 10_000  # random sign vectors above that
TEST_LEVEL = 0.05  # a claim needs its one-sided p below this
# the metrics that are sums over machines (over the same realised total), so a difference is a sum of per-machine
# differences; the Spearman, a median of per-machine values, is tested on the mean of its per-machine differences
SIGN_TESTED = ("wape", "wape_product", "crps", "spearman")


def sign_flip_p(d: np.ndarray, lower: bool, seed: int) -> float:
    """One-sided p-value of the exact randomization test of per-machine differences `d` (M,).

    Under the null the model and the other forecast are exchangeable within each machine, so each machine's
    difference is as likely with either sign: the statistic sum(d) is compared with sum(s * d) over every sign
    vector s (all 2^M when M <= ALL_FLIPS_UP_TO, else FLIP_DRAWS random ones from the stream
    ("validation-sign-flip",), plus the observed one). `lower`: the claim is that sum(d) is low (the model's
    error lower); else that it is high. The smallest p M machines allow is 2^-M.
    """
    d = np.asarray(d, dtype=float)
    M = len(d)
    if M == 0:
        return float("nan")
    obs = float(d.sum())
    if M <= ALL_FLIPS_UP_TO:
        signs = 1.0 - 2.0 * ((np.arange(2**M)[:, None] >> np.arange(M)[None, :]) & 1)
        stats = signs @ d
        tol = 1e-12 * max(1.0, float(np.abs(d).sum()))
        hits = np.count_nonzero(stats <= obs + tol) if lower else np.count_nonzero(stats >= obs - tol)
        return hits / len(stats)
    rng = stream(seed, "validation-sign-flip")
    signs = rng.integers(0, 2, size=(FLIP_DRAWS, M)) * 2.0 - 1.0
    stats = signs @ d
    hits = np.count_nonzero(stats <= obs) if lower else np.count_nonzero(stats >= obs)
    return (1 + hits) / (1 + FLIP_DRAWS)


@dataclass(frozen=True)
class MachineStats:
    """Per-machine sums of one forecast's errors and predictions (M,), (M, G) for the subcategories."""

    abs_mw: np.ndarray
    crps: np.ndarray
    abs_pair: np.ndarray
    total: np.ndarray
    g2: np.ndarray
    rho: np.ndarray


def machine_stats(grid: EvalGrid, f: Forecast) -> MachineStats:
    """The per-machine sums every metric of `f` is made of."""
    m_of_pair = grid.pair_machine
    M = grid.n_machines
    g2 = np.zeros((M, grid.n_g2))
    np.add.at(g2, (m_of_pair, grid.pair_g2), f.pair)
    ranked = grid.ranked
    return MachineStats(
        abs_mw=np.abs(grid.real_mw - f.mw).sum(axis=1),
        crps=crps_by_machine(grid.real_mw, f),
        abs_pair=np.bincount(m_of_pair, weights=np.abs(grid.real_pair - f.pair), minlength=M),
        total=f.mw.sum(axis=1),
        g2=g2,
        rho=within_spearman(m_of_pair[ranked], M, grid.real_pair[ranked], f.pair[ranked]),
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.full(np.shape(num), np.nan), where=den > 0)


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The median of `values` (M,) repeated `weights` (B, M) integer times, per row; NaN values are left out.

    With all weights 1 it is numpy's median of the finite values.
    """
    ok = np.isfinite(values)
    v = values[ok]
    if v.size == 0:
        return np.full(weights.shape[0], np.nan)
    order = np.argsort(v, kind="stable")
    v = v[order]
    w = weights[:, ok][:, order]
    c = np.cumsum(w, axis=1)
    n = c[:, -1]
    lo = np.minimum(((c <= ((n - 1) // 2)[:, None]).sum(axis=1)), len(v) - 1)
    hi = np.minimum(((c <= (n // 2)[:, None]).sum(axis=1)), len(v) - 1)
    return np.where(n > 0, (v[lo] + v[hi]) / 2, np.nan)


def metric_values(grid: EvalGrid, s: MachineStats, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric of one forecast under machine weights (B, M): arrays of B values."""
    real = weights @ grid.real_mw.sum(axis=1)
    real_g2 = np.zeros((grid.n_machines, grid.n_g2))
    np.add.at(real_g2, (grid.pair_machine, grid.pair_g2), grid.real_pair)
    y = weights @ real_g2
    f = weights @ s.g2
    y_sh = _ratio(y, y.sum(axis=1, keepdims=True))
    f_sh = _ratio(f, f.sum(axis=1, keepdims=True))
    return {
        "wape": _ratio(weights @ s.abs_mw, real),
        "tvd": 0.5 * np.abs(y_sh - f_sh).sum(axis=1),
        "spearman": weighted_median(s.rho, weights),
        "wape_product": _ratio(weights @ s.abs_pair, real),
        "crps": _ratio(weights @ s.crps, real),
        "volume_error": _ratio(weights @ s.total - real, real),
    }


def resample_weights(n_machines: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, M) counts of each machine in each resample (integer draws only: the same on every CPU)."""
    rng = stream(seed, "validation-bootstrap")
    idx = rng.integers(0, n_machines, size=(n_boot, n_machines))
    flat = (np.arange(n_boot)[:, None] * n_machines + idx).ravel()
    return np.bincount(flat, minlength=n_boot * n_machines).reshape(n_boot, n_machines).astype(np.int64)


def interval(values: np.ndarray) -> tuple[float, float]:
    """The percentile interval of bootstrap values (NaN when none are given or fewer than half are finite)."""
    ok = values[np.isfinite(values)]
    if values.size == 0 or ok.size < max(1, values.size // 2):
        return float("nan"), float("nan")
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(ok, [tail, 100 - tail])
    return float(lo), float(hi)


@dataclass(frozen=True)
class Score:
    """A metric of one forecast: the point value and its bootstrap interval."""

    value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Comparison:
    """The model against another forecast on one metric: difference model - other and its interval.

    `better`: True when the interval excludes zero on the model's side, False on the other's, None otherwise; with
    MIN_MACHINES to EXACT_BELOW - 1 machines, a side also needs the exact sign-flip test's one-sided p (`p_value`,
    for the side the difference points to; `p_min` = 2^-M the smallest that M machines allow) below TEST_LEVEL.
    With fewer than MIN_MACHINES machines the p is reported but cannot get below 0.25, and the week bootstrap's
    interval alone decides (weaker evidence, for these machines only: `autovend.validation.weeks`).
    """

    against: str
    metric: str
    model: float
    other: float
    difference: float
    ci_low: float
    ci_high: float
    better: bool | None
    p_value: float | None = None
    p_min: float | None = None


class Scorer:
    """Scores forecasts on one grid with one set of bootstrap resamples.

    `weeks`: None when the resamples are of machines (MIN_MACHINES or more), else the week bootstrap, whose
    `weights` (n_boot, W) are over the window's weeks (none when the window has too few weeks).
    """

    def __init__(self, grid: EvalGrid, n_boot: int, seed: int) -> None:
        self.grid = grid
        self.ones = np.ones((1, grid.n_machines), dtype=np.int64)
        few = grid.n_machines < MIN_MACHINES
        self.weeks = WeekBootstrap.of(grid.n_weeks, n_boot) if few else None
        if self.weeks is not None and self.weeks.usable:
            self.weights = week_weights(grid.n_weeks, n_boot, seed)
        else:
            self.weights = resample_weights(grid.n_machines, 0 if few else n_boot, seed)
        self.seed = seed
        self._point: dict[str, dict[str, float]] = {}
        self._boot: dict[str, dict[str, np.ndarray]] = {}
        self._stats: dict[str, MachineStats] = {}

    def add(self, f: Forecast) -> dict[str, Score]:
        """Score a forecast (kept under its name for comparisons)."""
        s = machine_stats(self.grid, f)
        point = {k: float(v[0]) for k, v in metric_values(self.grid, s, self.ones).items()}
        if self.weeks is not None and self.weeks.usable:
            boot = week_metric_values(self.grid, week_stats(self.grid, f), self.weights)
        else:
            boot = metric_values(self.grid, s, self.weights)
        self._point[f.name], self._boot[f.name] = point, boot
        self._stats[f.name] = s
        return self.scores(f.name)

    def scores(self, name: str) -> dict[str, Score]:
        """The scores of a forecast added before."""
        return {k: Score(v, *interval(self._boot[name][k])) for k, v in self._point[name].items()}

    def per_machine(self, name: str, metric: str) -> np.ndarray:
        """(M,) each machine's part of a sum metric (`SIGN_TESTED`): its absolute errors, CRPS or Spearman."""
        st = self._stats[name]
        return {"wape": st.abs_mw, "wape_product": st.abs_pair, "crps": st.crps, "spearman": st.rho}[metric]

    def compare(self, model: str, other: str, metric: str) -> Comparison:
        """`model` against `other` on `metric`, paired over the resamples (and by sign flips below 20 machines)."""
        a, b = self._point[model][metric], self._point[other][metric]
        lo, hi = interval(self._boot[model][metric] - self._boot[other][metric])
        higher = metric in HIGHER_IS_BETTER
        better: bool | None = None
        if np.isfinite(lo) and np.isfinite(hi):
            if higher:
                better = True if lo > 0 else False if hi < 0 else None
            else:
                better = True if hi < 0 else False if lo > 0 else None
        p_value = p_min = None
        M = self.grid.n_machines
        if M < EXACT_BELOW and metric in SIGN_TESTED:
            d = self.per_machine(model, metric) - self.per_machine(other, metric)
            d = d[np.isfinite(d)]
            model_side = (a - b > 0) if higher else (a - b < 0)
            lower_claim = model_side != higher  # the claim: d is low when lower is better and the model is ahead
            p_value = sign_flip_p(d, lower=lower_claim, seed=self.seed)
            p_min = 2.0 ** -len(d) if len(d) else None
            if better is not None and not (p_value < TEST_LEVEL) and self.weeks is None:
                better = None  # the interval alone does not decide with few machines (but for 1-2: weeks decide)
        return Comparison(other, metric, a, b, a - b, lo, hi, better, p_value, p_min)
