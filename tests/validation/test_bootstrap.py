"""The scoring on the grid and the machine-cluster bootstrap, with numbers a reader can check by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from autovend.validation.bootstrap import (
    MIN_MACHINES,
    Scorer,
    machine_stats,
    metric_values,
    resample_weights,
    weighted_median,
)
from autovend.validation.grid import EvalGrid, Forecast, crps_by_machine


def _grid(real_mw, real_pair, pair_key, n_products=3, g2=(0, 0, 1)):
    real_mw = np.asarray(real_mw, dtype=float)
    return EvalGrid(
        machines=np.arange(real_mw.shape[0]),
        n_days=7 * real_mw.shape[1],
        n_products=n_products,
        g2=np.asarray(g2),
        n_g2=max(g2) + 1,
        pair_key=np.asarray(pair_key),
        ranked=np.ones(len(pair_key), dtype=bool),
        real_mw=real_mw,
        real_pair=np.asarray(real_pair, dtype=float),
    )


def test_metrics_by_hand_on_two_machines():
    # machine 0 sells products 0 and 2, machine 1 products 1 and 2 (keys m * 3 + k), over two weeks
    grid = _grid([[10, 10], [5, 5]], [12, 8, 6, 4], [0, 2, 4, 5])
    f = Forecast("f", np.array([[12.0, 8.0], [5.0, 7.0]]), np.array([10.0, 10.0, 4.0, 8.0]))
    vals = metric_values(grid, machine_stats(grid, f), np.ones((1, 2), dtype=np.int64))
    # machine-weeks: |10-12| + |10-8| + 0 + |5-7| = 6 over 30 realised units
    assert vals["wape"][0] == pytest.approx(6 / 30)
    # pairs: 2 + 2 + 2 + 4 = 10 over 30
    assert vals["wape_product"][0] == pytest.approx(10 / 30)
    assert vals["volume_error"][0] == pytest.approx((32 - 30) / 30)
    # subcategories: products 0, 1 in g0, product 2 in g1; realised g0 = 12 + 6 = 18, g1 = 12; forecast 14, 18
    assert vals["tvd"][0] == pytest.approx(0.5 * (abs(18 / 30 - 14 / 32) + abs(12 / 30 - 18 / 32)))
    assert vals["crps"][0] == pytest.approx(6 / 30)  # a point forecast: its CRPS is its absolute error
    assert np.isnan(vals["spearman"][0])  # two products a machine: fewer than 5


def test_ensemble_crps_by_hand():
    real = np.array([[3.0]])
    f = Forecast("f", np.array([[2.0]]), np.zeros(0), mw_seeds=np.array([[[0.0]], [[4.0]]]))
    # mean|x - 3| = (3 + 1) / 2 = 2; sum_ij |xi - xj| / (2 * 2^2) = 8 / 8 = 1
    assert crps_by_machine(real, f) == pytest.approx([1.0])
    point = Forecast("p", np.array([[2.0]]), np.zeros(0))
    assert crps_by_machine(real, point) == pytest.approx([1.0])


def test_weighted_median_is_the_median_of_the_repeated_values():
    values = np.array([5.0, np.nan, 1.0, 3.0, 2.0])
    weights = np.array([[1, 1, 1, 1, 1], [0, 4, 1, 0, 1], [3, 0, 0, 0, 1], [0, 1, 0, 0, 0]])
    got = weighted_median(values, weights)
    assert got[0] == np.median([5, 1, 3, 2])
    assert got[1] == np.median([1, 2])
    assert got[2] == np.median([5, 5, 5, 2])
    assert np.isnan(got[3])  # only the NaN drawn


def test_resamples_draw_whole_machines_with_replacement_and_repeat():
    w = resample_weights(7, 500, seed=3)
    assert w.shape == (500, 7) and (w.sum(axis=1) == 7).all() and w.min() >= 0
    assert np.array_equal(w, resample_weights(7, 500, seed=3))
    assert abs(w.mean() - 1.0) < 0.05 and (w == 0).any()


def _noisy(rng, m=40):
    real = rng.poisson(20, size=(m, 4)).astype(float)
    pair_key = np.arange(m) * 3
    return _grid(real, real.sum(axis=1), pair_key, g2=(0, 0, 0))


def test_identical_forecasts_differ_by_exactly_zero_and_are_not_distinguishable():
    grid = _noisy(np.random.default_rng(1))
    f = Forecast("a", grid.real_mw + 2.0, grid.real_pair + 8.0)
    s = Scorer(grid, 300, seed=0)
    s.add(f)
    s.add(Forecast("b", f.mw.copy(), f.pair.copy()))
    c = s.compare("a", "b", "wape")
    assert (c.difference, c.ci_low, c.ci_high, c.better) == (0.0, 0.0, 0.0, None)


def test_a_clearly_better_forecast_is_better_and_the_reverse_is_worse():
    grid = _noisy(np.random.default_rng(2))
    good = Forecast("good", grid.real_mw + 1.0, grid.real_pair + 4.0)
    bad = Forecast("bad", grid.real_mw * 1.5, grid.real_pair * 1.5)
    s = Scorer(grid, 500, seed=0)
    s.add(good)
    s.add(bad)
    assert s.compare("good", "bad", "wape").better is True
    assert s.compare("bad", "good", "wape").better is False
    score = s.scores("good")["wape"]
    assert score.ci_low <= score.value <= score.ci_high


def test_a_small_difference_on_noisy_machines_is_not_distinguishable():
    rng = np.random.default_rng(4)
    grid = _noisy(rng, m=12)
    noise_a = rng.normal(0, 6, size=grid.real_mw.shape)
    noise_b = rng.normal(0, 6, size=grid.real_mw.shape)
    s = Scorer(grid, 500, seed=0)
    s.add(Forecast("a", grid.real_mw + noise_a, grid.real_pair))
    s.add(Forecast("b", grid.real_mw + noise_b, grid.real_pair))
    c = s.compare("a", "b", "wape")
    assert c.better is None and c.ci_low < 0 < c.ci_high


def test_too_few_machines_resample_weeks_and_too_few_weeks_give_no_interval():
    """Two machines: no machine-cluster interval; over four weeks the week bootstrap's (`test_weeks.py`), over three
    none at all, and a difference alone is then no result."""
    for n_weeks, usable in ((4, True), (3, False)):
        real = np.random.default_rng(5).poisson(20, size=(MIN_MACHINES - 1, n_weeks)).astype(float)
        grid = _grid(real, real.sum(axis=1), np.arange(MIN_MACHINES - 1) * 3, g2=(0, 0, 0))
        grid = dataclasses.replace(grid, real_pw=real)
        s = Scorer(grid, 500, seed=0)
        assert s.weeks is not None and s.weeks.usable is usable
        s.add(Forecast("a", grid.real_mw + 1.0, grid.real_pair, pair_week=real))
        s.add(Forecast("b", grid.real_mw * 3.0, grid.real_pair, pair_week=real))
        score = s.scores("a")["wape"]
        assert score.value > 0
        assert np.isfinite([score.ci_low, score.ci_high]).tolist() == [usable, usable]
        assert s.compare("a", "b", "wape").better is (True if usable else None)


def test_the_interval_is_the_central_95_percent_of_the_resamples():
    """0, 1, ..., 999: the 2.5th and 97.5th percentiles (linear) are 24.975 and 974.025; a 90% interval would be
    49.95 and 949.05."""
    from autovend.validation.bootstrap import LEVEL, interval

    assert LEVEL == 0.95
    assert interval(np.arange(1000.0)) == pytest.approx((24.975, 974.025), abs=1e-9)
    # fewer than half finite: no interval
    values = np.r_[np.arange(9.0), np.full(12, np.nan)]  # 9 finite of 21
    lo, hi = interval(values)
    assert np.isnan(lo) and np.isnan(hi)
