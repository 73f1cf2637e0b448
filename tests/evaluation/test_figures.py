"""Figures of runs are deterministic files: drawn twice from the same numbers, the same bytes, with no stamp."""

from __future__ import annotations

import pandas as pd

from autovend.evaluation.figures import early_late_figure, profile_figure
from autovend.png import png_chunks

STAMPS = {b"tEXt", b"zTXt", b"iTXt", b"tIME"}


def _feedback(early: float, late: float) -> dict:
    period = {"gross_profit": 40.0, "costs": 25.0, "visits": 2.0}
    return {
        "details": {"feedback": {"early": {"asset_growth": early, **period}, "late": {"asset_growth": late, **period}}}
    }


def test_profile_and_early_late_figures_are_the_same_bytes_twice(tmp_path):
    summary = pd.DataFrame(
        {
            "net_assets": [51_000.0, 48_500.0],
            "assortment": [0.8, 0.6],
            "waste_rate": [0.02, 0.05],
            "pricing_regret": [0.1, 0.3],
            "capital_efficiency": [1.2, 0.9],
        },
        index=["rule", "llm"],
    )
    metrics = [_feedback(10.0, 14.0), _feedback(-3.0, 6.0)]
    for name in ("a", "b"):
        profile_figure(summary, tmp_path / f"profile_{name}.png")
        early_late_figure(metrics, ["rule", "llm"], tmp_path / f"early_late_{name}.png")
    for figure in ("profile", "early_late"):
        first = (tmp_path / f"{figure}_a.png").read_bytes()
        assert first == (tmp_path / f"{figure}_b.png").read_bytes(), figure
        assert not STAMPS & {kind for kind, _ in png_chunks(first)}, figure
