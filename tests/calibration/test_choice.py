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


def test_a_price_above_the_reference_lowers_a_cells_factor_by_its_sites_elasticity():
    """Eq. (2)'s price term on its own: factor (p / p_ref) ** -eps, so a 20% dearer cell is 1.2 ** -eps as attractive."""
    import pandas as pd

    from autovend.calibration.panel import Panel
    from autovend.demand.settings import DemandSettings

    settings = DemandSettings()
    panel = Panel(
        machines=pd.DataFrame(
            {"machine_id": ["m"], "site_type": ["office"], "capacity": [100.0], "has_inventory": [True]}
        ),
        products=pd.DataFrame(
            {"sku_id": ["k"], "category_l1": ["drinks"], "category_l2": ["juice"], "ref_price": [5.0]}
        ),
        days=pd.DataFrame(
            {
                "date": pd.to_datetime(["2024-06-03"]),
                "day_type": ["workday"],
                "t_max_c": [np.nan],
                "precip_mm": [np.nan],
            }
        ),
        cells=pd.DataFrame(),
        machine_days=pd.DataFrame(),
        sales_rule_gap_days=14,
        kept_unit_share=1.0,
        units_all=0,
        units_kept=0,
        source_hash="",
    )
    cells = pd.DataFrame({"m": [0, 0, 0], "k": [0, 0, 0], "d": [0, 0, 0], "q": [np.nan] * 3, "price": [5.0, 6.0, 4.0]})
    f = choice.cell_factors(panel, settings, cells)
    eps = float(settings.elasticity_of(np.array(["office"]))[0])
    assert eps > 1
    np.testing.assert_allclose(f / f[0], [1.0, 1.2**-eps, 0.8**-eps], rtol=1e-12)
    assert f[1] < f[0] < f[2]  # dearer is less attractive, cheaper more
