"""The level rule follows recent weeks only when backtests inside the training period show it pays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from autovend.validation.level import choose_level


def _md(levels: np.ndarray, seed: int = 0) -> pd.DataFrame:
    """Daily Poisson units of machines (rows) at the given daily levels (columns: days)."""
    rng = np.random.default_rng(seed)
    m, d = np.meshgrid(np.arange(levels.shape[0]), np.arange(levels.shape[1]), indexing="ij")
    return pd.DataFrame({"m": m.ravel(), "d": d.ravel(), "units": rng.poisson(levels).ravel()})


def test_a_stationary_operator_keeps_the_calibrated_level():
    levels = np.full((30, 200), 20.0)
    choice = choose_level(_md(levels), np.arange(30), train_days=200, horizon_days=56)
    assert choice.alpha == 0.0 and not choice.follows
    assert np.all(choice.multiplier == 1.0)
    assert choice.backtest["chosen"].sum() == 3  # alpha 0, whatever the look-back


def test_levels_that_move_for_months_are_followed():
    """Each machine's level random-walks from month to month: the recent level predicts the next weeks."""
    rng = np.random.default_rng(1)
    steps = np.exp(np.cumsum(rng.normal(0, 0.35, size=(30, 8)), axis=1))
    levels = 20.0 * np.repeat(steps, 25, axis=1)  # 200 days, a new level every 25 days
    choice = choose_level(_md(levels), np.arange(30), train_days=200, horizon_days=56)
    assert choice.alpha >= 0.5
    bt = choice.backtest.set_index(["weeks", "alpha"])["wape"]
    assert bt[(choice.weeks, choice.alpha)] < bt[(choice.weeks, 0.0)] - 0.05
    # the multiplier is each machine's recent level over its long-run level, raised to alpha
    recent = levels[:, 200 - 7 * choice.weeks :].mean(axis=1) / levels.mean(axis=1)
    assert np.corrcoef(np.log(choice.ratio), np.log(recent))[0, 1] > 0.9


def test_the_window_is_never_read():
    levels = np.full((20, 256), 10.0)
    md = _md(levels)
    window = md["d"] >= 200
    changed = md.copy()
    changed.loc[window, "units"] = changed.loc[window, "units"] * 50 + 7
    a = choose_level(md, np.arange(20), 200, 56)
    b = choose_level(changed, np.arange(20), 200, 56)
    assert (a.weeks, a.alpha) == (b.weeks, b.alpha)
    np.testing.assert_array_equal(a.ratio, b.ratio)
    pd.testing.assert_frame_equal(a.backtest, b.backtest)


def test_too_short_a_history_keeps_the_level():
    choice = choose_level(_md(np.full((5, 60), 10.0)), np.arange(5), train_days=60, horizon_days=56)
    assert choice.alpha == 0.0 and choice.backtest["wape"].isna().all()
    assert choice.network_ratio == pytest.approx(1.0, abs=0.1)
