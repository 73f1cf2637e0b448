"""The paper's references (persistence and naive) on a panel a reader can add up by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from autovend.calibration.panel import Panel
from autovend.validation.grid import EvalGrid
from autovend.validation.references import naive, persistence, persistence_pairs
from autovend.validation.shelves import WindowShelves

TRAIN_DAYS = 30  # days 0..29 train, 30..43 the window (two weeks)
N_DAYS = 44


def _panel(cells: list[tuple[int, int, int, int]]) -> Panel:
    """Two machines, two products; `cells` (m, k, d, units); every machine-day from 0 to the end (units summed)."""
    frame = pd.DataFrame(cells, columns=["m", "k", "d", "units"])
    md = pd.DataFrame([(m, d) for m in range(2) for d in range(N_DAYS)], columns=["m", "d"])
    md["units"] = md.merge(frame.groupby(["m", "d"], as_index=False)["units"].sum(), how="left")["units"].fillna(0)
    md["known"], md["fill"], md["active"] = False, np.nan, True
    days = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=N_DAYS)})
    return Panel(
        machines=pd.DataFrame({"machine_id": ["A", "B"], "site_type": ["office"] * 2, "capacity": [100.0, 100.0]}),
        products=pd.DataFrame({"sku_id": ["P", "Q"], "category_l1": ["drinks"] * 2, "category_l2": ["tea"] * 2}),
        days=days,
        cells=frame,
        machine_days=md,
        sales_rule_gap_days=14,
        kept_unit_share=1.0,
        units_all=int(frame["units"].sum()),
        units_kept=int(frame["units"].sum()),
        source_hash="x",
    )


def _grid() -> EvalGrid:
    keys = np.array([0, 1, 2, 3])  # (machine position * 2 + product)
    return EvalGrid(
        machines=np.array([0, 1]),
        n_days=N_DAYS - TRAIN_DAYS,
        n_products=2,
        g2=np.zeros(2, np.int64),
        n_g2=1,
        pair_key=keys,
        ranked=np.ones(4, bool),
        real_mw=np.zeros((2, 2)),
        real_pair=np.zeros(4),
    )


def test_persistence_reads_exactly_the_last_weeks_before_the_window():
    """One week of look-back is days 23..29: 70 units on day 23 count (10 a day), 1000 on day 22 and 500 on day 30
    (the window) do not. So machine A forecasts 70 a week, product P 140 over the two-week window."""
    panel = _panel([(0, 0, 22, 1000), (0, 0, 23, 70), (0, 0, 30, 500), (1, 1, 29, 14)])
    pairs = persistence_pairs(panel, TRAIN_DAYS, np.array([0, 1]), weeks=1)
    assert sorted(map(tuple, pairs.to_numpy().tolist())) == [(0, 0, 70), (1, 1, 14)]
    f = persistence(_grid(), panel, TRAIN_DAYS, pairs, weeks=1)
    np.testing.assert_allclose(f.mw, [[70.0, 70.0], [14.0, 14.0]])
    np.testing.assert_allclose(f.pair, [140.0, 0.0, 0.0, 28.0])


def test_naive_spreads_the_training_mean_over_the_shelf_of_each_day():
    """Machine A sold 60 units over its 30 training days (2 a day): each window day's 2 units go half and half to
    the two products on its shelf; machine B sold 30 (1 a day) with one product on the shelf."""
    panel = _panel([(0, 0, 5, 60), (1, 1, 7, 30)])
    n = N_DAYS - TRAIN_DAYS
    m = np.r_[np.zeros(2 * n, np.int64), np.ones(n, np.int64)]
    k = np.r_[np.tile([0, 1], n), np.ones(n, np.int64)]
    d = np.r_[np.repeat(np.arange(n), 2), np.arange(n)]
    ones = np.ones(len(m))
    shelves = WindowShelves(m, k, d, ones, ones, ones, ones, n)
    f = naive(_grid(), panel, TRAIN_DAYS, shelves)
    np.testing.assert_allclose(f.mw, [[14.0, 14.0], [7.0, 7.0]])
    np.testing.assert_allclose(f.pair, [14.0, 14.0, 0.0, 14.0])
    assert f.pair.sum() == pytest.approx(f.mw.sum())
