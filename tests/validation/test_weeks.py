"""The block bootstrap over weeks (one or two machines), with numbers a reader can check by hand.

A resample draws ceil(W / B) block starts uniformly from the W weeks (stream "validation-week-bootstrap"), each
block runs B = round(W^(1/3)) weeks from its start, wrapping from the last week to the first, and the blocks are
cut at W weeks; its weights count each week and apply before any sum over weeks.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from scipy import stats

from autovend.rng import stream
from autovend.validation.bootstrap import Scorer, machine_stats, metric_values
from autovend.validation.grid import EvalGrid, Forecast
from autovend.validation.weeks import (
    MIN_WEEKS,
    block_length,
    block_starts,
    resampled_weeks,
    row_spearman,
    week_metric_values,
    week_stats,
    week_weights,
)
from tests.validation.grids import grid_and_forecasts, scored


def test_the_block_length_is_the_cube_root_of_the_weeks_rounded():
    assert [block_length(w) for w in (1, 2, 3)] == [1, 1, 1]  # 3^(1/3) = 1.44
    assert [block_length(w) for w in (4, 8, 12, 15)] == [2, 2, 2, 2]  # 4^(1/3) = 1.59, 15^(1/3) = 2.47
    assert [block_length(w) for w in (16, 27, 42)] == [3, 3, 3]  # 16^(1/3) = 2.52, 42^(1/3) = 3.48
    assert block_length(43) == 4 and block_length(64) == 4  # 43^(1/3) = 3.50
    assert MIN_WEEKS == 4


def test_eight_weeks_are_four_blocks_of_two_drawn_from_the_named_stream():
    """8 weeks, seed 0: the starts of the first resample are 2, 4, 7, 1, so its weeks are 2 3 | 4 5 | 7 0 | 1 2
    (the block from week 7 wraps to week 0) and week 2 is drawn twice, week 6 never."""
    starts = block_starts(8, 3, seed=0)
    assert starts.shape == (3, 4)
    assert np.array_equal(starts, stream(0, "validation-week-bootstrap").integers(0, 8, size=(3, 4)))
    assert starts[0].tolist() == [2, 4, 7, 1]
    assert resampled_weeks(8, 3, seed=0)[0].tolist() == [2, 3, 4, 5, 7, 0, 1, 2]
    assert week_weights(8, 3, seed=0)[0].tolist() == [1, 1, 2, 1, 1, 1, 0, 1]


@pytest.mark.parametrize("n_weeks", [4, 7, 8, 13, 27])
def test_every_resample_is_whole_blocks_of_consecutive_weeks_adding_up_to_the_window(n_weeks):
    B = block_length(n_weeks)
    n_blocks = -(-n_weeks // B)
    weeks = resampled_weeks(n_weeks, 500, seed=4)
    starts = block_starts(n_weeks, 500, seed=4)
    for i in range(n_blocks):
        block = weeks[:, i * B : (i + 1) * B]  # the last block is cut at the window's end (7 weeks: 2 + 2 + 2 + 1)
        assert block.shape[1] == min(B, n_weeks - i * B)
        assert np.array_equal(block[:, 0], starts[:, i])
        assert (np.diff(block, axis=1) % n_weeks == 1).all()  # consecutive, wrapping from the last week to the first
    w = week_weights(n_weeks, 500, seed=4)
    assert w.dtype == np.int64 and (w >= 0).all() and (w.sum(axis=1) == n_weeks).all()


def test_the_weights_repeat_for_a_seed_and_draw_every_week_once_on_average():
    a, b = week_weights(8, 4000, seed=11), week_weights(8, 4000, seed=11)
    assert np.array_equal(a, b) and not np.array_equal(a, week_weights(8, 4000, seed=12))
    assert np.abs(a.mean(axis=0) - 1.0).max() < 0.05  # circular blocks: no week is drawn less than the others
    assert hashlib.sha256(week_weights(8, 2000, seed=0).astype("<i8").tobytes()).hexdigest()[:16] == "70af40b16dd95ba0"


def _tiny(real_pw, f_pw):
    real_pw, f_pw = np.asarray(real_pw, float), np.asarray(f_pw, float)
    W = real_pw.shape[1]
    grid = EvalGrid(
        machines=np.arange(1),
        n_days=7 * W,
        n_products=len(real_pw),
        g2=np.zeros(len(real_pw), np.int64),
        n_g2=1,
        pair_key=np.arange(len(real_pw)),
        ranked=np.ones(len(real_pw), bool),
        real_mw=real_pw.sum(axis=0)[None],
        real_pair=real_pw.sum(axis=1),
        real_pw=real_pw,
    )
    return grid, Forecast("f", f_pw.sum(axis=0)[None], f_pw.sum(axis=1), pair_week=f_pw)


def test_week_weights_apply_before_a_pair_is_summed_over_the_window():
    """One machine, two products, four weeks, the resample (2, 0, 1, 1): week 0 twice, week 1 left out.

    realised by pair and week (4 0 2 6; 1 3 1 1), forecast (3 1 3 3; 2 2 2 2). Machine-weeks: realised 5 3 3 7,
    forecast 5 3 5 5, so the weighted absolute error is 2*0 + 0*0 + 2 + 2 = 4 over 2*5 + 3 + 7 = 20 units:
    WAPE 0.2. Pairs: product 0 misses by (1, -1, -1, 3), weighted 2 - 1 + 3 = 4; product 1 by (-1, 1, -1, -1),
    weighted -4; product WAPE (4 + 4) / 20 = 0.4 (unweighted: (2 + 2) / 18). Volume 2*5 + 5 + 5 = 20 units against
    20 (18 against 18 unweighted): error 0.
    """
    grid, f = _tiny([[4, 0, 2, 6], [1, 3, 1, 1]], [[3, 1, 3, 3], [2, 2, 2, 2]])
    vals = week_metric_values(grid, week_stats(grid, f), np.array([[2, 0, 1, 1], [1, 1, 1, 1]]))
    assert vals["wape"].tolist() == pytest.approx([4 / 20, 4 / 18])
    assert vals["wape_product"].tolist() == pytest.approx([8 / 20, 4 / 18])
    assert vals["crps"].tolist() == pytest.approx([4 / 20, 4 / 18])  # a point forecast: its CRPS is its error
    assert vals["volume_error"].tolist() == [0.0, 0.0]
    assert vals["tvd"].tolist() == [0.0, 0.0]  # one subcategory
    assert np.isnan(vals["spearman"]).all()  # two products: fewer than 5


@pytest.mark.parametrize("M", [1, 2])
def test_all_weeks_once_give_the_point_values(M):
    """Weights of 1 on every week are the window itself: the week path gives each metric's point value."""
    grid, forecasts = grid_and_forecasts(M, 8, seed=3, by_week=True)
    ones_m, ones_w = np.ones((1, M), np.int64), np.ones((1, 8), np.int64)
    for f in forecasts:
        point = metric_values(grid, machine_stats(grid, f), ones_m)
        weekly = week_metric_values(grid, week_stats(grid, f), ones_w)
        for k, v in point.items():
            np.testing.assert_allclose(weekly[k], v, rtol=1e-12, atol=1e-12, err_msg=f"{f.name} {k}")


def test_the_row_spearman_is_scipys():
    rng = np.random.Generator(np.random.PCG64(5))
    a = rng.integers(0, 6, size=(50, 9)).astype(float)  # ties on purpose
    b = rng.integers(0, 6, size=(50, 9)).astype(float)
    a[3] = 2.0  # a constant row: no correlation
    got = row_spearman(a, b)
    assert np.isnan(got[3])
    for i in (0, 1, 2, 4, 49):
        assert got[i] == pytest.approx(stats.spearmanr(a[i], b[i])[0], abs=1e-12)
    assert np.isnan(row_spearman(a[:, :4], b[:, :4])).all()  # four products: fewer than 5


def _one_machine(n_weeks: int):
    """One machine, ten products over `n_weeks` weeks: product k expected 19 - 2k a week (19, 17, ..., 1), realised
    that plus an integer in [-2, 2]; the model forecasts the expectation, reversed popularity the same list upside
    down (the same machine-week totals, so only the product split differs)."""
    K = 10
    lam = 2.0 * (K - np.arange(K)) - 1
    rng = np.random.Generator(np.random.PCG64(7))
    real = np.maximum(lam[:, None] + rng.integers(-2, 3, size=(K, n_weeks)), 0).astype(float)
    grid, _ = _tiny(real, real)
    model = np.repeat(lam[:, None], n_weeks, axis=1)
    scorer = Scorer(grid, 2000, 0)
    for name, pw in (("model", model), ("reversed", model[::-1].copy()), ("copy", model.copy())):
        scorer.add(Forecast(name, pw.sum(axis=0)[None], pw.sum(axis=1), pair_week=pw))
    return scorer


def test_a_planted_bad_forecast_on_one_machine_is_called_worse_and_a_copy_is_not_distinguishable():
    """Twelve weeks: reversed popularity's product WAPE is 1.002 against the model's 0.025 (1,216 units), worse by
    +0.977 [+0.926, +0.991] over the week resamples, though the sign-flip test over one machine says p = 0.5; on
    machine-week WAPE the two are the same forecast (difference exactly 0, not distinguishable), and a copy of the
    model is not distinguishable on anything."""
    scorer = _one_machine(12)
    assert scorer.weeks is not None and (scorer.weeks.n_weeks, scorer.weeks.block) == (12, 2)
    c = scorer.compare("reversed", "model", "wape_product")
    assert (round(c.model, 3), round(c.other, 3)) == (1.002, 0.025)
    assert (round(c.difference, 3), round(c.ci_low, 3), round(c.ci_high, 3)) == (0.977, 0.926, 0.991)
    assert c.better is False and c.p_value == 0.5 and c.p_min == 0.5
    assert scorer.compare("model", "reversed", "wape_product").better is True
    assert scorer.compare("model", "reversed", "spearman").better is True  # +2: rho 1 against -1 in every resample
    same = scorer.compare("model", "reversed", "wape")
    assert (same.difference, same.ci_low, same.ci_high, same.better) == (0.0, 0.0, 0.0, None)
    for metric in ("wape", "tvd", "spearman", "wape_product", "crps"):
        copy = scorer.compare("model", "copy", metric)
        assert (copy.difference, copy.ci_low, copy.ci_high, copy.better) == (0.0, 0.0, 0.0, None), metric


def test_three_weeks_are_too_few_to_resample_and_decide_nothing():
    scorer = _one_machine(3)
    assert scorer.weeks is not None and not scorer.weeks.usable and scorer.weights.shape == (0, 1)
    c = scorer.compare("reversed", "model", "wape_product")
    assert c.difference > 0.9 and np.isnan(c.ci_low) and np.isnan(c.ci_high) and c.better is None
    assert np.isnan(scorer.scores("model")["wape"].ci_low)


def test_the_week_bootstrap_needs_the_pairs_week_by_week():
    grid, f = _tiny([[4, 0, 2, 6]], [[3, 1, 3, 3]])
    with pytest.raises(ValueError, match="needs the pairs week by week"):
        Scorer(grid, 100, 0).add(Forecast("f", f.mw, f.pair))


# verdict.json of `grids.scored(M, W)` as the machine-cluster code wrote it before the week bootstrap (commit
# 7bf8414, `git archive 7bf8414 autovend` with this file's `grids.py` beside it): 3, 5 and 25 machines
MACHINE_CLUSTER_BYTES = {
    (3, 6): "500c41752e56b25af07478a3dae31e47ef26948200860c2ad8d140f4edfee164",
    (5, 8): "0fa2bab15e1cf03e67d0ec10089976ee71f7174f2a83a550335caf3c56126259",
    (25, 6): "23a763dde264f2d892e31ff040baf6a17ddcfea4fd6d3db324a8b4b10369447e",
}


@pytest.mark.parametrize(("M", "W"), list(MACHINE_CLUSTER_BYTES))
def test_three_or_more_machines_write_the_same_verdict_json_as_before(M, W):
    verdict, data = scored(M, W)
    assert hashlib.sha256(data).hexdigest() == MACHINE_CLUSTER_BYTES[(M, W)]
    assert "resampling" not in verdict and verdict["interval"].startswith(
        f"95% percentile interval over 400 machine-cluster bootstrap resamples of {M} machines"
    )


def test_five_machines_keep_their_interval_and_exact_test():
    """The 5-machine grid: the model beats persistence on WAPE on every machine, -0.155 [-0.165, -0.140] with
    sign-flip p = 1/32 (the smallest five machines allow), as before."""
    verdict, _ = scored(5, 8)
    c = next(c for c in verdict["comparisons"] if (c["against"], c["metric"]) == ("persistence", "wape"))
    assert (c["difference"], c["ci_low"], c["ci_high"]) == (-0.154775, -0.165446, -0.140184)
    assert c["better"] is True and c["p_value"] == c["p_min"] == 1 / 32
    assert verdict["too_few_machines"] is False and verdict["verdict"] == "worse_than_reference"
