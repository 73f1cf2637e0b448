"""The product split's cells: ChoiceData from the panel."""

from __future__ import annotations

import numpy as np

from autovend.calibration import choice


def test_choice_data_is_the_same_whatever_the_block_of_cells_its_factors_are_computed_in(synthetic_source, monkeypatch):
    import dataclasses

    from autovend.calibration.config import CalibrationConfig
    from autovend.calibration.panel import build_panel
    from autovend.demand.settings import DemandSettings

    panel = build_panel(synthetic_source, CalibrationConfig())
    whole = choice.choice_data(panel, DemandSettings())
    monkeypatch.setattr(choice, "FACTOR_BLOCK", 7_919)  # a prime: blocks end mid machine-day
    parts = choice.choice_data(panel, DemandSettings())
    assert len(whole.k) > 400_000 and whole.site.dtype == whole.g1.dtype == whole.g2.dtype == np.int64
    for field in dataclasses.fields(whole):
        a, b = getattr(whole, field.name), getattr(parts, field.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), field.name
        else:
            assert a == b, field.name
    # against the panel: every cell's factor as `cell_factors` computes it for the whole frame
    cells = panel.cells[panel.cells["known"]]
    assert np.array_equal(whole.a, choice.cell_factors(panel, DemandSettings(), cells))
