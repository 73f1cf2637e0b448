"""The daily panel of the synthetic operator: built machine block by block, it is the panel built at once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from autovend.calibration import cells
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.panel import build_panel


def test_the_panel_built_machine_block_by_block_equals_the_panel_built_at_once(synthetic_source, monkeypatch):
    config = CalibrationConfig()
    whole = build_panel(synthetic_source, config)
    monkeypatch.setattr(cells, "BLOCK_ROWS", 20_000)  # about 16 blocks of the 99 machines
    blocks = cells.Records(
        pd.DataFrame({"m": np.repeat(np.arange(99), 2_000)}), None, None, np.zeros(99, bool), pd.Timestamp(0)
    ).blocks()
    assert len(blocks) == 10 and blocks[0] == (0, 10) and blocks[-1] == (90, 99)
    parts = build_panel(synthetic_source, config)
    assert len(whole.cells) > 500_000
    for name in ("cells", "machine_days", "machines"):
        pd.testing.assert_frame_equal(getattr(parts, name), getattr(whole, name), check_exact=True)
    assert parts.notes == whole.notes
    # the sales rule on the machines with inventory, rebuilt from the cells block by block
    rule_parts = list(parts.rule_cells())
    assert len(rule_parts) > 3
    monkeypatch.setattr(cells, "BLOCK_ROWS", 1 << 19)
    (rule_whole,) = list(whole.rule_cells())
    assert len(rule_whole) > 200_000
    pd.testing.assert_frame_equal(pd.concat(rule_parts, ignore_index=True), rule_whole, check_exact=True)
    assert set(rule_whole["m"]) == set(np.flatnonzero(whole.machines["has_inventory"]))
    # every sale is a rule cell, and every other rule cell lies between two sales at most G days apart
    sold = whole.cells[whole.machines["has_inventory"].to_numpy()[whole.cells["m"]] & (whole.cells["units"] > 0)]
    assert len(rule_whole[rule_whole["units"] > 0]) == len(sold)
    assert rule_whole["revenue"].sum() == pytest.approx(sold["revenue"].sum(), rel=1e-12)
    step = rule_whole.groupby(["m", "k"])["d"].diff()
    idle = (rule_whole["units"] == 0).to_numpy()
    assert idle.sum() > 10_000 and (step[idle] == 1).all()  # idle days only inside a run that started with a sale
    run = (rule_whole["units"] > 0).cumsum()
    assert pd.Series(idle).groupby(run.to_numpy()).sum().max() <= config.sales_rule_gap_days - 1


def test_machine_days_are_the_groupby_sums_of_the_cells_with_days_without_cells_filled(synthetic_source):
    panel = build_panel(synthetic_source, CalibrationConfig())
    cells, md = panel.cells, panel.machine_days
    ref = cells.groupby(["m", "d"]).agg(units=("units", "sum"), q=("q", "sum"), known=("known", "all"))
    got = md.set_index(["m", "d"])
    first = cells.groupby("m")["d"].min()
    assert len(md) == int((panel.n_days - first).sum())  # every day from each machine's first cell on
    assert (got.loc[ref.index, "units"].to_numpy() == ref["units"].to_numpy()).all()
    assert (got.loc[ref.index, "known"].to_numpy() == ref["known"].to_numpy()).all()
    empty = got.index.difference(ref.index)
    assert len(empty) >= 1 and (got.loc[empty, "units"] == 0).all()  # a machine-day with nothing on the shelf
    has_inv = panel.machines["has_inventory"].to_numpy()
    assert (got.loc[empty, "known"].to_numpy() == has_inv[empty.get_level_values("m")]).all()
    cap = panel.machines["capacity"].to_numpy()[ref.index.get_level_values("m")]
    fill = np.where(ref["known"], np.minimum(ref["q"] / cap, 1.0), np.nan)
    assert np.array_equal(got.loc[ref.index, "fill"].to_numpy(), fill, equal_nan=True)
