"""Level shifts: follow a machine's recent level when backtests inside the training period say it pays.

The calibrated model sets each machine's level from the whole training period. When sales moved in the
last weeks before the window (a ramp-up, a lost customer base), that level is stale and a persistence
forecast wins. The rule: a machine's level is multiplied by lambda_m ** alpha, where lambda_m is its
mean daily units over the last L training weeks over its mean over all its training days. L (weeks) and
alpha are chosen by rolling-origin backtests inside the training period: at origins every four weeks
back from the window's start minus its length, the long-run level of the days before the origin,
multiplied by lambda ** alpha measured at the origin, forecasts the next window's machine-weeks, and the
rules are compared by their machine-week WAPE over all origins (with the one-standard-error rule, see
`choose_level`). alpha = 0 leaves the model as calibrated. The test window is never read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.rng import stream

WEEKS = (2, 4, 8)
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
ORIGIN_STEP_DAYS = 28
MIN_HISTORY_DAYS = 56  # days of a machine's records before an origin for it to enter that origin's backtest
RATIO_LIMITS = (0.25, 4.0)  # lambda is clipped to this range
BOOT = 500  # machine resamples for the one-standard-error rule


@dataclass(frozen=True)
class LevelChoice:
    """The chosen level rule, its backtest and each machine's multiplier (machine code order of `machines`)."""

    weeks: int
    alpha: float
    machines: np.ndarray  # machine codes
    ratio: np.ndarray  # lambda_m at the window's start with the chosen L (1 where unknown)
    backtest: pd.DataFrame  # weeks, alpha, wape, origins, machine_weeks
    network_ratio: float  # recent over long-run units of all machines together, chosen L

    @property
    def multiplier(self) -> np.ndarray:
        """lambda_m ** alpha of each machine."""
        return self.ratio**self.alpha

    @property
    def follows(self) -> bool:
        """Whether the level rule changes the model (alpha > 0)."""
        return self.alpha > 0


def _daily(md: pd.DataFrame, machines: np.ndarray, n_days: int) -> tuple[np.ndarray, np.ndarray]:
    """Units (M, n_days) and whether each machine-day is active (in the machine's records), by position."""
    pos = pd.Series(np.arange(len(machines)), index=machines)
    sel = md[md["m"].isin(machines) & (md["d"] < n_days)]
    rows = pos.reindex(sel["m"]).to_numpy()
    units = np.zeros((len(machines), n_days))
    active = np.zeros((len(machines), n_days), dtype=bool)
    units[rows, sel["d"].to_numpy()] = sel["units"].to_numpy(dtype=float)
    active[rows, sel["d"].to_numpy()] = True
    return units, active


def _ratios(units: np.ndarray, active: np.ndarray, origin: int, weeks: int) -> tuple[np.ndarray, np.ndarray]:
    """Long-run mean daily units before `origin` and lambda (recent over long-run), per machine."""
    n_all = active[:, :origin].sum(axis=1)
    base = np.divide(units[:, :origin].sum(axis=1), n_all, out=np.zeros(len(units)), where=n_all > 0)
    lo = max(origin - 7 * weeks, 0)
    n_recent = active[:, lo:origin].sum(axis=1)
    recent = np.divide(units[:, lo:origin].sum(axis=1), n_recent, out=np.zeros(len(units)), where=n_recent > 0)
    ok = (base > 0) & (n_recent > 0)
    ratio = np.where(ok, np.clip(np.divide(recent, base, out=np.ones(len(units)), where=ok), *RATIO_LIMITS), 1.0)
    return base, ratio


def _backtest_errors(
    units: np.ndarray, active: np.ndarray, train_days: int, horizon_days: int, weeks: int
) -> tuple[dict[float, np.ndarray], np.ndarray, int, int]:
    """Per machine: absolute machine-week errors of each alpha summed over the origins, and realised units."""
    M = len(units)
    errors = {a: np.zeros(M) for a in ALPHAS}
    realised = np.zeros(M)
    origins = list(range(train_days - horizon_days, MIN_HISTORY_DAYS - 1, -ORIGIN_STEP_DAYS))
    n_mw = 0
    for o in origins:
        eligible = active[:, :o].sum(axis=1) >= MIN_HISTORY_DAYS
        if not eligible.any():
            continue
        base, ratio = _ratios(units, active, o, weeks)
        for w in range(int(np.ceil(horizon_days / 7))):
            lo, hi = o + 7 * w, min(o + 7 * w + 7, o + horizon_days)
            y = np.where(eligible, units[:, lo:hi].sum(axis=1), 0.0)
            days = active[:, lo:hi].sum(axis=1)
            realised += y
            n_mw += int(eligible.sum())
            for a in ALPHAS:
                errors[a] += np.where(eligible, np.abs(y - base * ratio**a * days), 0.0)
    return errors, realised, len(origins), n_mw


def choose_level(
    md: pd.DataFrame, machines: np.ndarray, train_days: int, horizon_days: int, seed: int = 0
) -> LevelChoice:
    """Backtest the level rule on the training machine-days `md` (m, d, units) and choose L and alpha.

    The choice follows the one-standard-error rule: among the rules whose backtest WAPE is within one
    bootstrap standard error (machines resampled, `BOOT` times) of the best rule's difference from
    alpha = 0, the one with the smallest alpha (then the shortest L). A level rule is only adopted when
    it beats the calibrated level by more than the backtest's own noise.
    """
    machines = np.asarray(machines, dtype=np.int64)
    units, active = _daily(md, machines, train_days)
    rows, boot_wape = [], {}
    rng = stream(seed, "validation-level-backtest")
    idx = rng.integers(0, max(len(machines), 1), size=(BOOT, len(machines)))
    weights = np.stack([np.bincount(r, minlength=len(machines)) for r in idx]) if len(machines) else np.zeros((BOOT, 0))
    for weeks in WEEKS:
        errors, realised, n_origins, n_mw = _backtest_errors(units, active, train_days, horizon_days, weeks)
        total = realised.sum()
        den = weights @ realised
        for a in ALPHAS:
            wape = errors[a].sum() / total if total > 0 else np.nan
            boot_wape[(weeks, a)] = np.divide(weights @ errors[a], den, out=np.full(BOOT, np.nan), where=den > 0)
            rows.append({"weeks": weeks, "alpha": a, "wape": wape, "origins": n_origins, "machine_weeks": n_mw})
    backtest = pd.DataFrame(rows)
    scored = backtest[np.isfinite(backtest["wape"])]
    if scored.empty:
        weeks, alpha = WEEKS[1], 0.0
    else:
        best = scored.loc[scored["wape"].idxmin()]
        key = (int(best["weeks"]), float(best["alpha"]))
        diff = boot_wape[key] - boot_wape[(key[0], 0.0)]
        se = float(np.nanstd(diff)) if np.isfinite(diff).any() else 0.0
        near = scored[scored["wape"] <= float(best["wape"]) + se + 1e-12]
        pick = near.sort_values(["alpha", "weeks"], kind="stable").iloc[0]
        alpha = float(pick["alpha"])
        weeks = int(pick["weeks"]) if alpha > 0 else WEEKS[1]  # alpha 0: L plays no part; ratios over 4 weeks
    backtest["chosen"] = (backtest["alpha"] == alpha) & ((backtest["weeks"] == weeks) | (alpha == 0))
    base, ratio = _ratios(units, active, train_days, weeks)
    lo = max(train_days - 7 * weeks, 0)
    n_recent = active[:, lo:].sum(axis=1)
    expected_recent = float((base * n_recent).sum())
    network = units[:, lo:].sum() / expected_recent if expected_recent > 0 else float("nan")
    return LevelChoice(weeks, alpha, machines, ratio, backtest, float(network))
